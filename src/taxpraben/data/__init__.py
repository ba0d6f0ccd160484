"""Dataset files: discovery, streaming loading, validation and the bundled sample."""

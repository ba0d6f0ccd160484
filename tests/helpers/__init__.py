"""What the tests share: tiny scorer models built on the fly, the mock OpenAI-compatible
server, small data directories and a CLI app, report fixtures, the table of parsing cases."""

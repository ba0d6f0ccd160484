"""Shared fixtures: the tiny scorer models (built locally, never downloaded)."""

pytest_plugins = ["tiny_models"]

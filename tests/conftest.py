"""Shared fixtures: the tiny scorer models (built locally, never downloaded)."""

pytest_plugins = ["helpers.tiny_models"]

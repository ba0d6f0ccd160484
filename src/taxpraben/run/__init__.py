"""The run stage: requests driven through a backend (runner, pacing, clock), the completion
cache, locks and atomic writes, shards, a served model, and the predictions file."""

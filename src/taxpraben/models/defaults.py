"""The defaults of generation and of driving a backend, declared once.

The command line (``taxpraben.options``), the backends (``models.factory``, ``models.openai``,
``models.hf``) and the runner (``runner.RunnerSettings``) all take their defaults from here,
so that a default changed here changes everywhere (and in ``--help``).
"""

from __future__ import annotations

#: The endpoint of an ``openai:`` model without ``--base-url`` (nor ``$OPENAI_BASE_URL``).
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: The environment variable of ``--base-url`` (ignored when ``--serve`` is given).
BASE_URL_ENV = "OPENAI_BASE_URL"

#: Most tokens generated per answer.
DEFAULT_MAX_TOKENS = 1024
#: Independent runs (the paper's protocol: the mean over 5).
DEFAULT_RUNS = 5
#: Sampling temperature (TaxBen: 0).
DEFAULT_TEMPERATURE = 0.0
#: Requests in flight (hf: items per batch).
DEFAULT_CONCURRENCY = 16
#: Seconds per attempt (streamed: the cap of the first-token deadline).
DEFAULT_TIMEOUT_S = 120.0
#: The judge's requests in flight (``--judge-concurrency``): one, so that a judge served on
#: one local slot survives (llama-cpp-python's server drops the request it is answering when
#: a second arrives, and crashed so with 2 in flight; README, "A second reader").
DEFAULT_JUDGE_CONCURRENCY = 1
#: The judge's seconds per attempt (``--judge-timeout``; streamed: the cap of its first-token
#: deadline): a request queued behind another on a CPU server waits a whole answer first.
DEFAULT_JUDGE_TIMEOUT_S = 600.0
#: Streamed: between chunks of a flowing stream: servers send a chunk per token or a few
#: tokens (tens of ms apart); a gap of a minute is a dead stream, not a slow one.
IDLE_TIMEOUT_S = 60.0
#: Retries on 429, 5xx, timeouts and dropped connections.
DEFAULT_MAX_RETRIES = 6
#: Seconds from an item's first attempt after which it is not retried again.
DEFAULT_DEADLINE_S = 900.0
#: Backoff before retry k (1-based) is about BASE * 2**(k-1), capped at MAX.
DEFAULT_BACKOFF_BASE_S = 0.5
DEFAULT_BACKOFF_MAX_S = 60.0
#: ``--batch``: seconds between two polls of a batch's status (a batch takes minutes to hours).
DEFAULT_BATCH_POLL_S = 10.0
#: ``--serve``: seconds a serving command may take until it answers ``GET /models`` (loading a
#: large model, compiling its graphs).
DEFAULT_SERVE_TIMEOUT_S = 600.0

"""The jobs: what ``run``, ``score`` and ``merge`` do, from their option groups to the
output directory, with no command-line code.

``jobs.generate`` (``run``: generate, then score), ``jobs.score`` (score a predictions file),
``jobs.merge`` (merge shards, then score); ``jobs.common`` holds what they share and
:class:`~taxpraben.jobs.common.JobError`, the one way a job stops. A command parses its
options into groups (``taxpraben.options``), calls its job and turns a JobError into its exit.
"""

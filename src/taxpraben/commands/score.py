"""`taxpraben score`: score existing generations (the predictions contract) against the data.

The options are declared in ``taxpraben.options``; the job is ``jobs.score.score_job``.
"""

from __future__ import annotations

from taxpraben import options as opt
from taxpraben.api.evaluation import score_job
from taxpraben.commands.common import cli_console, exit_on_job_error
from taxpraben.commands.options import with_options
from taxpraben.jobs.score import ScoreJob


@with_options
def score(
    data: opt.DataOptions, inputs: opt.ScoreInputOptions, scoring: opt.ScoringOptions, pricing: opt.PricingOptions,
    gates: opt.GateOptions, trackers: opt.TrackerOptions, judge: opt.JudgeOptions,
) -> None:
    """Score existing generations; writes results.json, samples.jsonl and the reports."""
    console = cli_console()
    with exit_on_job_error(console):
        score_job(ScoreJob(data=data, inputs=inputs, scoring=scoring, pricing=pricing, gates=gates,
                           trackers=trackers, judge=judge), console)

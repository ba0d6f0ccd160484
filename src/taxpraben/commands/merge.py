"""`taxpraben merge`: combine the predictions of sharded runs (`run --shard I/N`) and score them.

The options are declared in ``taxpraben.options``; the job is ``jobs.merge.merge_job``.
"""

from __future__ import annotations

from taxpraben import options as opt
from taxpraben.commands.common import cli_console, exit_on_job_error
from taxpraben.commands.options import with_options
from taxpraben.jobs.merge import MergeJob, merge_job


@with_options
def merge(
    data: opt.DataOptions, inputs: opt.MergeInputOptions, scoring: opt.ScoringOptions, pricing: opt.PricingOptions,
    gates: opt.GateOptions, trackers: opt.TrackerOptions, judge: opt.JudgeOptions,
) -> None:
    """Merge sharded runs' predictions (refusing overlaps and gaps), then score the whole."""
    console = cli_console()
    with exit_on_job_error(console):
        merge_job(MergeJob(data=data, inputs=inputs, scoring=scoring, pricing=pricing, gates=gates, trackers=trackers,
                           judge=judge), console)

"""`taxpraben merge`: combine the predictions of sharded runs (`run --shard I/N`) and score them.

The options are declared in ``taxpraben.options``; the job is ``jobs.merge.merge_job``.
"""

from __future__ import annotations

from taxpraben.commands.common import cli_console, exit_on_job_error
from taxpraben.commands.options import with_options
from taxpraben.jobs.merge import MergeJob, merge_job
from taxpraben.options import (
    DataOptions,
    GateOptions,
    JudgeOptions,
    MergeInputOptions,
    PricingOptions,
    ScoringOptions,
    TrackerOptions,
)


@with_options
def merge(
    data: DataOptions, inputs: MergeInputOptions, scoring: ScoringOptions, pricing: PricingOptions, gates: GateOptions,
    trackers: TrackerOptions, judge: JudgeOptions,
) -> None:
    """Merge sharded runs' predictions (refusing overlaps and gaps), then score the whole."""
    console = cli_console()
    with exit_on_job_error(console):
        merge_job(MergeJob(data=data, inputs=inputs, scoring=scoring, pricing=pricing, gates=gates, trackers=trackers,
                           judge=judge), console)

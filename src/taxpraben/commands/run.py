"""`taxpraben run`: generate with a model (every record x every run), then score.

The options are declared in ``taxpraben.options``; the job is ``jobs.generate.run_job``.
"""

from __future__ import annotations

from taxpraben import options as opt
from taxpraben.api.evaluation import evaluate_job
from taxpraben.commands.common import cli_console, exit_on_job_error, served_endpoint
from taxpraben.commands.options import with_options
from taxpraben.jobs.batch_stage import refuse_batch_without_openai
from taxpraben.jobs.generate import RunJob, model_slug

__all__ = ["model_slug", "run"]


@with_options
def run(
    model: opt.ModelOptions,
    data: opt.DataOptions,
    generation: opt.GenerationOptions,
    endpoint: opt.EndpointOptions,
    scoring: opt.ScoringOptions,
    output: opt.RunOutputOptions,
    batch: opt.BatchOptions,
    pricing: opt.PricingOptions,
    budget: opt.BudgetOptions,
    gates: opt.GateOptions,
    trackers: opt.TrackerOptions,
    judge: opt.JudgeOptions,
) -> None:
    """Generate with a model over the data (RUNS runs), then score; resumable through the cache.
    Each option's help in full: docs/options.md (and the README)."""
    console = cli_console()
    endpoint = served_endpoint(endpoint, cli_console(stderr=True))
    job = RunJob(model=model, data=data, generation=generation, endpoint=endpoint, scoring=scoring, output=output,
                 batch=batch, pricing=pricing, budget=budget, gates=gates, trackers=trackers, judge=judge)
    with exit_on_job_error(console):
        refuse_batch_without_openai(batch, model.model)  # before a local model is loaded
        evaluate_job(job, console, progress=cli_console(stderr=True))

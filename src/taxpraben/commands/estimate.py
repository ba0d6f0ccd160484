"""`taxpraben estimate`: what a `run` with the same options would send and cost; sends nothing.

The options are declared in ``taxpraben.options``; the job is ``jobs.estimate.estimate_job``.
"""

from __future__ import annotations

from taxpraben import options as opt
from taxpraben.commands.common import cli_console, exit_on_job_error, served_endpoint
from taxpraben.commands.options import with_options
from taxpraben.jobs.estimate import EstimateJob, estimate_job


@with_options
def estimate(
    model: opt.ModelOptions,
    data: opt.DataOptions,
    generation: opt.GenerationOptions,
    endpoint: opt.EndpointOptions,
    output: opt.RunOutputOptions,
    pricing: opt.PricingOptions,
    counting: opt.EstimateOptions,
) -> None:
    """Requests, tokens and cost that `run` with these options would send (cache first); sends nothing."""
    console = cli_console()
    endpoint = served_endpoint(endpoint, cli_console(stderr=True))
    job = EstimateJob(model=model, data=data, generation=generation, endpoint=endpoint, output=output,
                      pricing=pricing, estimate=counting)  # fmt: skip
    with exit_on_job_error(console):
        estimate_job(job, console)

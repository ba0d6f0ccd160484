"""Every option of a job, declared once: name, type, default, help, panel and check.

An option is a field of one of the option groups (frozen dataclasses, one module per concern:
``run``, ``scoring``, ``outputs``, ``costs``; the machinery in ``declare``, shared checks in ``checks``): its type is
the field's annotation, its default the field's default (taken from ``models.defaults`` and
``scoring.settings``, the one place each is spelled), and everything else a user sees is its
:class:`Declared` metadata. From these declarations derive:

- the command line (``commands.options.with_options`` turns a group parameter of a command
  into its typer options, with their ``--help`` panels, bounds and checks: a value out of
  range is refused when parsed, exit 2, naming the option);
- the keys of a configuration file and of a run's manifest (:func:`option_values`,
  :func:`declared_options`: ``group.field`` per option).

This module needs neither typer nor the pipeline: the jobs (``taxpraben.jobs``) take the
groups as they are.
"""

from __future__ import annotations

from taxpraben.options.checks import (
    TRACKERS,
    check_devices,
    check_gen_kwargs,
    check_judge_spec,
    check_limit,
    check_model_args,
    check_serve,
    check_shard,
    check_threshold,
    check_trackers,
    one_of,
    parse_threshold,
    parse_trackers,
)
from taxpraben.options.costs import (
    BatchOptions,
    BudgetOptions,
    EstimateOptions,
    PricingOptions,
)
from taxpraben.options.declare import (
    COST_PANEL,
    DATA_PANEL,
    ENDPOINT_PANEL,
    EXECUTED_KEYS,
    GENERATION_PANEL,
    MODEL_PANEL,
    OUTPUT_PANEL,
    SCORING_PANEL,
    Declared,
    check_options,
    check_value,
    code_it_runs,
    declare,
    declared_options,
    is_option_group,
    option_values,
)
from taxpraben.options.outputs import (
    GateOptions,
    MergeInputOptions,
    RegressionGateOptions,
    RunOutputOptions,
    ScoreInputOptions,
    TrackerOptions,
)
from taxpraben.options.run import (
    DataOptions,
    EndpointOptions,
    GenerationOptions,
    ModelOptions,
)
from taxpraben.options.scoring import (
    JudgeOptions,
    ScoringOptions,
)

__all__ = [
    "COST_PANEL",
    "DATA_PANEL",
    "ENDPOINT_PANEL",
    "EXECUTED_KEYS",
    "GENERATION_PANEL",
    "MODEL_PANEL",
    "OUTPUT_PANEL",
    "SCORING_PANEL",
    "TRACKERS",
    "BatchOptions",
    "BudgetOptions",
    "DataOptions",
    "Declared",
    "EndpointOptions",
    "EstimateOptions",
    "GateOptions",
    "GenerationOptions",
    "JudgeOptions",
    "MergeInputOptions",
    "ModelOptions",
    "PricingOptions",
    "RegressionGateOptions",
    "RunOutputOptions",
    "ScoreInputOptions",
    "ScoringOptions",
    "TrackerOptions",
    "check_devices",
    "check_gen_kwargs",
    "check_judge_spec",
    "check_limit",
    "check_model_args",
    "check_options",
    "check_serve",
    "check_shard",
    "check_threshold",
    "check_trackers",
    "check_value",
    "code_it_runs",
    "declare",
    "declared_options",
    "is_option_group",
    "one_of",
    "option_values",
    "parse_threshold",
    "parse_trackers",
]

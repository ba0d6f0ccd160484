"""A task's figures made of its read samples with taxpraben's own rules: :func:`task_figures`.

Another harness reads each output with :func:`taxpraben.api.reading.read_answer` and hands the
readings' samples here: the semantic scores of every distinct text pair (once, in one batch per
scorer, the models loaded once per process), each item finished by its kind, each run's figures
(ACC, weighted F1 and Macro-F1 over the run; EM; BERTScore, BARTScore; the mixed tasks' item
mean) and their mean, spread and interval over the runs: results.json's ``tasks.NAME``, made by
the very function the scoring pipeline makes it with (``scoring.task_scores.score_task``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from taxpraben.api.reading import task_spec
from taxpraben.api.semantic import bart_scorer, bert_scorer, scorer_settings
from taxpraben.kinds import SemanticValues, kind_of
from taxpraben.metrics.scorer_models import ScorerUnavailable
from taxpraben.records import Record
from taxpraben.results import Sample, TaskResult
from taxpraben.scoring.settings import ScoringSettings
from taxpraben.scoring.task_scores import score_task
from taxpraben.tasks import TaskSpec


def runs_of(spec: TaskSpec, samples: Iterable[Sample]) -> tuple[list[list[Sample]], list[int]]:
    """The samples of ``spec``'s task run by run (runs in increasing order), each run in the
    item order of the first; ValueError naming the run and the ids when the runs do not hold
    the same items once each, or a sample is of another task."""
    by_run: dict[int, dict[str, Sample]] = {}
    for sample in samples:
        if sample.task != spec.name:
            raise ValueError(f"a sample of task {sample.task!r} (id {sample.id!r}) among {spec.name}'s")
        row = by_run.setdefault(sample.run, {})
        if sample.id in row:
            raise ValueError(f"{spec.name}: id {sample.id!r} twice in run {sample.run}")
        row[sample.id] = sample
    if not by_run:
        raise ValueError(f"{spec.name}: no samples")
    run_ids = sorted(by_run)
    order = list(by_run[run_ids[0]])
    for run in run_ids[1:]:
        if set(by_run[run]) != set(order):
            lacking = sorted(set(order) - set(by_run[run]))[:5]
            extra = sorted(set(by_run[run]) - set(order))[:5]
            raise ValueError(f"{spec.name}: run {run} does not hold run {run_ids[0]}'s items "
                             f"(lacks {lacking}, has besides {extra})")  # fmt: skip
    return [[by_run[run][i] for i in order] for run in run_ids], run_ids


def semantic_values(
    spec: TaskSpec, items: Iterable[Sample], settings: ScoringSettings, semantic: bool = True
) -> tuple[SemanticValues, dict[str, str]]:
    """The semantic scores the task's metrics need for every distinct text pair of ``items``,
    and each scorer that is unavailable with why (its metrics are then not computed)."""
    needs = kind_of(spec).scorers(spec)
    bert_keys: dict[tuple[str, str], None] = {}
    bart_keys: dict[tuple[str, str], None] = {}
    for item in items:
        for pair in item.pairs:
            key = (pair.candidate, pair.reference)
            if not pair.missing:
                bert_keys[key] = None
            bart_keys[key] = None
    unavailable: dict[str, str] = {}
    bert: dict[tuple[str, str], float] | None = None
    bart: dict[tuple[str, str], float] | None = None
    for metric in sorted(needs):
        if not semantic:
            unavailable[metric] = "semantic metrics turned off"
            continue
        try:
            if metric == "bertscore":
                keys = list(bert_keys)
                scored = bert_scorer(settings).score([k[0] for k in keys], [k[1] for k in keys]) if keys else []
                bert = {k: float(s.f1) for k, s in zip(keys, scored, strict=True)}
            else:
                keys = list(bart_keys)
                raw = bart_scorer(settings).score([k[0] for k in keys], [k[1] for k in keys]) if keys else []
                bart = {k: float(s) for k, s in zip(keys, raw, strict=True)}
        except ScorerUnavailable as exc:
            unavailable[metric] = str(exc)
    return SemanticValues(bert_f1=bert, bart_raw=bart), unavailable


def task_figures(
    task: str | TaskSpec,
    samples: Iterable[Sample],
    *,
    scorers: ScoringSettings | None = None,
    semantic: bool = True,
    bootstrap: int = 0,
    seed: int = 0,
    task_dir: str | Path | None = None,
) -> TaskResult:
    """The figures of ``task`` made of ``samples`` (read in this process: each
    :attr:`Reading.sample <taxpraben.api.reading.Reading.sample>`, one per record and run):
    per run (``per_run``: each metric, the task score, the format-failure rate) and over runs
    (``metrics``, ``score``: mean, sample std, 95% t-interval), the readings by rule and the
    failures by reason; the task of results.json. ``scorers``: the semantic scorers' settings
    (default: the protocol's models, or the environment's); ``semantic=False`` leaves their
    metrics not computed; ``bootstrap``: replicates of the sample-level intervals (0: none).
    ValueError when the runs do not hold the same items."""
    spec = task_spec(task, task_dir)
    rows, run_ids = runs_of(spec, samples)
    values, unavailable = semantic_values(spec, (it for row in rows for it in row), scorers or scorer_settings(),
                                          semantic)  # fmt: skip
    rng = np.random.default_rng(seed) if bootstrap > 0 else None
    # score_task gives the first run's samples their record's prompt: the figures need none.
    records = [Record(spec.name, it.id, "", it.gold) for it in rows[0]]
    return score_task(spec, records, rows, run_ids, values, unavailable, rng, bootstrap).entry

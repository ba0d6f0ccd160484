"""From predictions to results.json and samples.jsonl (docs/results-schema.md).

Flow: match predictions to records (reporting unknown, duplicate and missing ones) ->
prepare every item (parse, exact scores) -> score all text pairs with each semantic scorer
once -> finalize items -> per-run task metrics -> figures over runs, groups, overall.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from taxpraben.aggregate import TaskFigure, group_figures, overall_figure
from taxpraben.atomic import atomic_writer, write_text_atomically
from taxpraben.costs.ledger import CostOf, total_ledger
from taxpraben.coverage import missing_reasons
from taxpraben.data.loader import LoadedData
from taxpraben.kinds import kind_of, kinds
from taxpraben.kinds.profiles import scoring_rules
from taxpraben.manifest import complete_manifest, package_version
from taxpraben.records import Record
from taxpraben.results import SCHEMA_VERSION, Results, Sample, TaskResult
from taxpraben.results.predictions import Prediction
from taxpraben.scoring.items import Readings, SemanticValues, prepare_item
from taxpraben.scoring.semantic import SemanticScorers, build_scorers
from taxpraben.scoring.settings import ScoringSettings
from taxpraben.scoring.task_scores import (
    SampleSink,
    TaskScores,
    new_generator,
    sample_text,
    score_task,
)
from taxpraben.tasks import BLOOM_ORDER, Registry, TaskSpec

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject
    from taxpraben.scoring.early import EarlyScores, Taken


class PredictionMatchError(ValueError):
    """Predictions that cannot be matched to records unambiguously."""


@dataclass
class MatchReport:
    unknown_tasks: dict[str, int] = field(default_factory=dict)
    unknown_ids: list[tuple[str, str, int]] = field(default_factory=list)
    duplicates: list[tuple[str, str, int]] = field(default_factory=list)
    missing: list[tuple[str, str, int]] = field(default_factory=list)
    outside_selection: int = 0
    limit: int | float | None = None  # --limit: a count, or a fraction of each task

    def messages(self) -> list[str]:
        out = []
        for task, n in self.unknown_tasks.items():
            out.append(f"{n} prediction(s) for task {task!r}, which is not in the data: ignored")
        if self.outside_selection:
            out.append(f"{self.outside_selection} prediction(s) for tasks not selected: ignored")
        if self.unknown_ids:
            shown = ", ".join(f"{t}/{i}/run {r}" for t, i, r in self.unknown_ids[:10])
            where = f"not in the data or beyond --limit {self.limit}" if self.limit else "not in the data"
            out.append(f"{len(self.unknown_ids)} prediction(s) with ids {where}: ignored ({shown}{' ...' if len(self.unknown_ids) > 10 else ''})")
        if self.missing:
            shown = ", ".join(f"{t}/{i}/run {r}" for t, i, r in self.missing[:10])
            out.append(f"{len(self.missing)} item(s) have no prediction and score 0 as errors ({shown}{' ...' if len(self.missing) > 10 else ''})")
        return out


@dataclass
class ScoredResults:
    """What scoring made: results.json's object, the sample lines (unless streamed to a
    file) and how the predictions matched; ``typed``: the results validated through
    :class:`~taxpraben.results.Results` once, when written (the reports take it)."""

    results: JSONObject
    samples: list[JSONObject]
    match: MatchReport
    typed: Results | None = None
    #: Per task scored early with a part made ahead for the item sink (whose items were then
    #: not handed to it): that part (:attr:`TaskScores.prepared`).
    prepared: dict[str, object] = field(default_factory=dict)


@dataclass
class SecondReading:
    """What a second reader did (:data:`SecondReader`): per task the entry results.json
    keeps under ``tasks.NAME.judge``, ``meta.judge``, and warnings to show."""

    tasks: dict[str, JSONObject] = field(default_factory=dict)
    meta: JSONObject | None = None
    warnings: list[str] = field(default_factory=list)


#: A second reader (``taxpraben.judge``): handed the prepared items of every task, run by
#: run, read by the rules and not yet finished, it may give some a reading of its own (and
#: send requests to do so: the pipeline itself sends nothing).
SecondReader = Callable[[dict[str, list[list[Sample]]], Mapping[str, Sequence[Record]]], SecondReading]


# ---------------------------------------------------------------------------- matching


def match_predictions(
    loaded: LoadedData, predictions: Iterable[Prediction], registry: Registry, runs: int | None
) -> tuple[dict[tuple[str, str, int], Prediction], list[int], MatchReport]:
    report = MatchReport(limit=loaded.limit)
    ids = {task: {r.id for r in recs} for task, recs in loaded.records.items()}
    by_key: dict[tuple[str, str, int], Prediction] = {}
    for p in predictions:
        spec = registry.lookup(p.task)
        task = spec.name if spec is not None else p.task
        if task not in ids:
            if spec is not None and spec.name in registry:
                report.outside_selection += 1
            else:
                report.unknown_tasks[p.task] = report.unknown_tasks.get(p.task, 0) + 1
            continue
        key = (task, p.id, p.run)
        if p.id not in ids[task]:
            report.unknown_ids.append(key)
            continue
        if key in by_key:
            report.duplicates.append(key)
            continue
        by_key[key] = p
    if report.duplicates:
        shown = ", ".join(f"{t}/{i}/run {r}" for t, i, r in report.duplicates[:10])
        raise PredictionMatchError(
            f"{len(report.duplicates)} duplicate prediction(s) for the same (task, id, run): {shown}"
            f"{' ...' if len(report.duplicates) > 10 else ''}. Keep one prediction per item and run."
        )
    run_ids = list(range(runs)) if runs is not None else sorted({k[2] for k in by_key}) or [0]
    for task, recs in loaded.records.items():
        for run in run_ids:
            for rec in recs:
                if (task, rec.id, run) not in by_key:
                    report.missing.append((task, rec.id, run))
    return by_key, run_ids, report


def _prepared_runs(
    spec: TaskSpec, records: Sequence[Record], run_ids: list[int],
    by_key: dict[tuple[str, str, int], Prediction], readings: Readings,
) -> list[list[Sample]]:  # fmt: skip
    """The items of one task, run by run, each distinct answer read once (:class:`Readings`:
    what a run read ahead while generating is taken as it is)."""
    per_run = []
    for run in run_ids:
        row = []
        for rec in records:
            p = by_key.get((spec.name, rec.id, run))
            if p is None:
                row.append(prepare_item(spec, rec, run, None, "no prediction", readings.rules))
            else:
                row.append(readings.read(spec, rec, run, p))
        per_run.append(row)
    return per_run


# ---------------------------------------------------------------------------- semantic


def _semantic_values(
    needs: dict[str, set[str]], items: Sequence[Sample], scorers: SemanticScorers
) -> SemanticValues:
    """Score every distinct text pair once with each scorer its task needs."""
    bert_pairs: dict[tuple[str, str], None] = {}
    bart_pairs: dict[tuple[str, str], None] = {}
    for item in items:
        bart = "bartscore" in needs[item.task]
        for pair in item.pairs:
            key = (pair.candidate, pair.reference)
            if not pair.missing:
                bert_pairs[key] = None
            if bart:
                bart_pairs[key] = None
    bert = bart_values = None
    if scorers.bert is not None:
        keys = list(bert_pairs)
        scored = scorers.bert.score([k[0] for k in keys], [k[1] for k in keys]) if keys else []
        bert = {k: float(s.f1) for k, s in zip(keys, scored, strict=True)}
    if scorers.bart is not None:
        keys = list(bart_pairs)
        scored_raw = scorers.bart.score([k[0] for k in keys], [k[1] for k in keys]) if keys else []
        bart_values = {k: float(s) for k, s in zip(keys, scored_raw, strict=True)}
    return SemanticValues(bert_f1=bert, bart_raw=bart_values)


# ---------------------------------------------------------------------------- entry points


def git_hash() -> str | None:
    """The commit of the taxpraben source tree, when it is a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


@dataclass(frozen=True)
class Matched:
    """The predictions matched to records (:func:`match_predictions`): each (task, id, run)'s
    prediction, the runs, how they matched, and how many predictions there were."""

    by_key: dict[tuple[str, str, int], Prediction]
    run_ids: list[int]
    report: MatchReport
    n_predictions: int


@dataclass(frozen=True)
class Hooks:
    """What a caller adds to scoring, each optional (see :func:`score_predictions`).

    ``scorers``: the semantic scorers, ready (else made from the settings when needed);
    ``sample_sink``: takes the samples.jsonl lines as text, one task at a time, instead of
    keeping them in ``ScoredResults.samples``; ``readings``: what was read already (a run
    reads while it generates), under the same profile; ``item_sink``: is handed every
    finished sample; ``task_sink``: is handed each task's finished samples at once, with the
    task's name (the report's sample browser takes them); ``cost_of``: prices the
    tokens of the ledgers (:mod:`taxpraben.costs.ledger`; ``meta.pricing`` says with what);
    ``second_reader``: reads the items once prepared, before they are finished
    (:data:`SecondReader`: the judge of ``--judge``); ``early``: the tasks a run scored
    while later ones generated, taken where they were scored from these very predictions
    (:mod:`taxpraben.scoring.early`).
    """

    scorers: SemanticScorers | None = None
    sample_sink: SampleSink | None = None
    readings: Readings | None = None
    item_sink: Callable[[Sample], None] | None = None
    task_sink: Callable[[str, list[Sample]], None] | None = None
    cost_of: CostOf | None = None
    second_reader: SecondReader | None = None
    early: EarlyScores | None = None


#: Scoring as it is, with nothing added.
NO_HOOKS = Hooks()


@dataclass
class ScoredTasks:
    """Every task scored, in data order; the samples.jsonl lines kept (none when they went to
    the sink), the replicates of each task score, and the parts made ahead for the item sink."""

    tasks: dict[str, TaskResult] = field(default_factory=dict)
    samples: list[JSONObject] = field(default_factory=list)
    replicates: dict[str, np.ndarray] = field(default_factory=dict)
    made_ahead: dict[str, object] = field(default_factory=dict)
    errors: int = 0
    format_failures: int = 0


def score_predictions(
    loaded: LoadedData,
    predictions: Iterable[Prediction],
    registry: Registry,
    settings: ScoringSettings,
    meta: JSONObject | None = None,
    hooks: Hooks = NO_HOOKS,
) -> ScoredResults:
    """Score predictions against loaded data; pure apart from the semantic models (and
    ``hooks.second_reader``). The stages: match, read, judge, semantic values, finish,
    aggregate. The samples.jsonl lines are returned in ``ScoredResults.samples`` unless
    ``hooks.sample_sink`` takes them (:class:`Hooks`: what a caller adds).
    """
    started = (meta or {}).get("started_at") or datetime.now(timezone.utc).isoformat(timespec="seconds")
    matched = match_stage(loaded, predictions, registry, settings)
    specs = {task: registry[task] for task in loaded.records}
    taken = _taken_early(loaded, matched, hooks, meta)
    done = taken.tasks if taken is not None else {}
    prepared = read_stage(loaded, specs, matched, _readings_of(settings, hooks.readings), done)
    second = hooks.second_reader(prepared, loaded.records) if hooks.second_reader is not None else SecondReading()
    scorers, values = semantic_stage(settings, specs, prepared, hooks.scorers)
    rng = taken.rng if taken is not None else new_generator(settings)
    scored = finish_stage(loaded, specs, prepared, matched.run_ids, values, scorers, rng, settings, hooks,
                          second, done, _shared(meta))  # fmt: skip
    results = aggregate_stage(loaded, registry, settings, scorers, matched, scored, second, meta, started)
    return ScoredResults(results=results.to_json(), samples=scored.samples, match=matched.report,
                         typed=results, prepared=scored.made_ahead)  # fmt: skip


def _shared(meta: JSONObject | None) -> bool:
    return bool((meta or {}).get("shared_generation"))


def match_stage(
    loaded: LoadedData, predictions: Iterable[Prediction], registry: Registry, settings: ScoringSettings
) -> Matched:
    """Stage 1: the predictions matched to the records (:func:`match_predictions`)."""
    predictions = list(predictions)
    by_key, run_ids, report = match_predictions(loaded, predictions, registry, settings.runs)
    return Matched(by_key, run_ids, report, len(predictions))


def _readings_of(settings: ScoringSettings, readings: Readings | None) -> Readings:
    """The readings to take: those given when read by the profile's rules, else new ones."""
    rules = scoring_rules(settings.profile)  # the profile's strategy, chosen once
    return readings if readings is not None and readings.rules is rules else Readings(rules)


def _taken_early(loaded: LoadedData, matched: Matched, hooks: Hooks, meta: JSONObject | None) -> Taken | None:
    """The tasks a run scored early that this scoring takes as they are (none with a judge,
    or when the sample lines are kept rather than streamed)."""
    if hooks.early is None or hooks.second_reader is not None or hooks.sample_sink is None:
        return None
    return hooks.early.taken(loaded, matched.run_ids, matched.by_key, shared_generation=_shared(meta))


def read_stage(
    loaded: LoadedData, specs: dict[str, TaskSpec], matched: Matched, readings: Readings,
    done: Mapping[str, TaskScores],
) -> dict[str, list[list[Sample]]]:  # fmt: skip
    """Stage 2: every item of the tasks not scored early, read, run by run."""
    return {task: _prepared_runs(specs[task], recs, matched.run_ids, matched.by_key, readings)
            for task, recs in loaded.records.items() if task not in done}  # fmt: skip


def semantic_stage(
    settings: ScoringSettings, specs: dict[str, TaskSpec], prepared: dict[str, list[list[Sample]]],
    scorers: SemanticScorers | None,
) -> tuple[SemanticScorers, SemanticValues]:  # fmt: skip
    """Stage 4: the semantic scorers the tasks need (built unless given) and their values
    for every distinct text pair of the read items."""
    needs = {task: kind_of(spec).scorers(spec) for task, spec in specs.items()}
    if scorers is None:
        scorers = build_scorers(settings, set().union(*needs.values()) if needs else set())
    all_items = [it for rows in prepared.values() for row in rows for it in row]
    return scorers, _semantic_values(needs, all_items, scorers)


def finish_stage(
    loaded: LoadedData, specs: dict[str, TaskSpec], prepared: dict[str, list[list[Sample]]], run_ids: list[int],
    values: SemanticValues, scorers: SemanticScorers, rng: np.random.Generator | None, settings: ScoringSettings,
    hooks: Hooks, second: SecondReading, done: Mapping[str, TaskScores], shared: bool,
) -> ScoredTasks:  # fmt: skip
    """Stage 5: each task's items finished and its figures made (or taken as scored early),
    in data order; the sinks are handed its items and its samples.jsonl text."""
    out = ScoredTasks()
    for task in loaded.records:
        if task in done:
            scores = done[task]
        else:
            rows = prepared.pop(task)  # dropped once scored: memory stays at one task's worth
            scores = score_task(specs[task], loaded.records[task], rows, run_ids, values, scorers.unavailable, rng, settings.bootstrap,
                                hooks.cost_of, shared, second.tasks.get(task))  # fmt: skip
        _hand_on(task, scores, task in done, hooks, out)
        out.tasks[task] = scores.entry
        out.errors += scores.errors
        out.format_failures += scores.format_failures
        if scores.replicates is not None:
            out.replicates[task] = scores.replicates
    return out


def _hand_on(task: str, scores: TaskScores, early: bool, hooks: Hooks, out: ScoredTasks) -> None:
    """A scored task's items to the task and item sinks (or its part made ahead), its lines
    to the sample sink (or kept)."""
    if scores.prepared is not None:
        out.made_ahead[task] = scores.prepared
    elif hooks.task_sink is not None or hooks.item_sink is not None:
        finished = [it for row in scores.rows for it in row]
        if hooks.task_sink is not None:
            hooks.task_sink(task, finished)
        if hooks.item_sink is not None:
            for it in finished:
                hooks.item_sink(it)
    if hooks.sample_sink is None:
        out.samples.extend(sample.to_json() for sample in scores.lines)
    elif early and hooks.early is not None:
        hooks.sample_sink(hooks.early.text_of(task))
    else:
        hooks.sample_sink(sample_text(scores.lines))


def aggregate_stage(
    loaded: LoadedData, registry: Registry, settings: ScoringSettings, scorers: SemanticScorers,
    matched: Matched, scored: ScoredTasks, second: SecondReading, meta: JSONObject | None, started: str,
) -> Results:  # fmt: skip
    """Stage 6: results.json, typed: the tasks, their groups and the Overall Average
    (:mod:`taxpraben.aggregate`), meta and the ledger."""
    computed = [TaskFigure(t, e.type or "", e.bloom or "", e.score) for t, e in scored.tasks.items()
                if e.status == "ok" and e.score is not None]  # fmt: skip
    benchmark = list(dict.fromkeys([*registry, *scored.tasks]))  # the registry's tasks: the whole benchmark
    missing = missing_reasons(benchmark, {t: e.status for t, e in scored.tasks.items()}, loaded.left_out,
                              semantic=settings.semantic)  # fmt: skip
    groups = group_figures(computed, [k.name for k in kinds()], [b.value for b in BLOOM_ORDER], scored.replicates)
    return Results.model_validate({
        "schema_version": SCHEMA_VERSION,
        "meta": _meta(loaded, settings, scorers, matched, scored, second, meta, started),
        "tasks": scored.tasks,
        "groups": groups,
        "overall": overall_figure(computed, benchmark, missing, scored.replicates),
        "ledger": total_ledger(entry.ledger.to_json() for entry in scored.tasks.values() if entry.ledger),
    })  # fmt: skip


def _meta(
    loaded: LoadedData, settings: ScoringSettings, scorers: SemanticScorers, matched: Matched,
    scored: ScoredTasks, second: SecondReading, meta: JSONObject | None, started: str,
) -> JSONObject:  # fmt: skip
    """results.json's ``meta``: the caller's facts first, then what scoring knows."""
    match = matched.report
    full_meta: JSONObject = {
        "model": None,
        "endpoint": None,
        "generation": None,
        **(meta or {}),
        "runs": len(matched.run_ids),
        "data_dir": str(loaded.data_dir),
        "data_hash": loaded.data_hash,
        "limit": loaded.limit,
        "profile": settings.profile,
        "scorers": scorers.describe(),
        "package_version": package_version(),
        "git_hash": git_hash(),
        "started_at": started,
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tasks": list(scored.tasks),
        "counts": {
            "items": sum(len(r) for r in loaded.records.values()),
            "predictions": matched.n_predictions,
            "scored_predictions": len(matched.by_key),
            "missing_predictions": len(match.missing),
            "unknown_predictions": sum(match.unknown_tasks.values()) + len(match.unknown_ids),
            "duplicate_predictions": 0,
            "errors": scored.errors,
            "format_failures": scored.format_failures,
        },
        "warnings": match.messages() + [str(w) for w in loaded.warnings] + second.warnings,
    }
    if second.meta is not None:
        full_meta["judge"] = second.meta
    full_meta.setdefault("shared_generation", False)
    if "manifest" in full_meta:  # the job's manifest, completed with what scoring knows; last
        full_meta["manifest"] = complete_manifest(full_meta.pop("manifest"), full_meta)
    return full_meta


def _results_text(results: JSONObject | Results) -> str:
    """results.json's text, validated through :class:`Results` and written from it (the same
    keys, order and values as ``results``); ValidationError if it breaks the schema."""
    typed = results if isinstance(results, Results) else Results.model_validate(results)
    return json.dumps(typed.to_json(), ensure_ascii=False, indent=2) + "\n"


def score_to_dir(
    loaded: LoadedData,
    predictions: Iterable[Prediction],
    registry: Registry,
    out_dir: Path,
    settings: ScoringSettings,
    meta: JSONObject | None = None,
    hooks: Hooks = NO_HOOKS,
) -> ScoredResults:
    """Score and write results.json and samples.jsonl into ``out_dir`` (the CLI adds reports);
    ``hooks`` as :func:`score_predictions`'s (the sample lines go to the file).

    Sample lines stream to disk task by task rather than being held all at once (36.5K
    lines of a full benchmark are most of the memory scoring would otherwise need).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_writer(out_dir / "samples.jsonl") as fh:
        scored = score_predictions(loaded, predictions, registry, settings, meta, replace(hooks, sample_sink=fh.write))
    write_text_atomically(out_dir / "results.json", _results_text(scored.typed or scored.results))
    return scored

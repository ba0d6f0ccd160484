"""From predictions to results.json and samples.jsonl (docs/results-schema.md).

Flow: match predictions to records (reporting unknown, duplicate and missing ones) ->
prepare every item (parse, exact scores) -> score all text pairs with each semantic scorer
once -> finalize items -> per-run task metrics -> figures over runs, groups, overall.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from taxpraben import __version__
from taxpraben.aggregate import StatJSON, mean_of_stats
from taxpraben.atomic import atomic_writer, write_text_atomically
from taxpraben.costs.ledger import CostOf, total_ledger
from taxpraben.coverage import missing_reasons
from taxpraben.data.loader import LoadedData
from taxpraben.kinds import kind_of, kinds
from taxpraben.kinds.profiles import scoring_rules
from taxpraben.manifest import complete_manifest
from taxpraben.records import Record
from taxpraben.results import SCHEMA_VERSION, Results
from taxpraben.results.predictions import Prediction
from taxpraben.scoring.items import Item, Readings, SemanticValues, prepare_item
from taxpraben.scoring.semantic import SemanticScorers, build_scorers
from taxpraben.scoring.settings import ScoringSettings
from taxpraben.scoring.task_scores import SampleSink, new_generator, sample_text, score_task
from taxpraben.tasks import BLOOM_ORDER, Registry, TaskSpec

if TYPE_CHECKING:
    from taxpraben.scoring.early import EarlyScores


class PredictionMatchError(ValueError):
    """Predictions that cannot be matched to records unambiguously."""


@dataclass
class MatchReport:
    unknown_tasks: dict[str, int] = field(default_factory=dict)
    unknown_ids: list[tuple[str, str, int]] = field(default_factory=list)
    duplicates: list[tuple[str, str, int]] = field(default_factory=list)
    missing: list[tuple[str, str, int]] = field(default_factory=list)
    outside_selection: int = 0
    limit: int | float | None = None

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

    results: dict[str, Any]
    samples: list[dict[str, Any]]
    match: MatchReport
    typed: Results | None = None
    #: Per task scored early with a part made ahead for the item sink (whose items were then
    #: not handed to it): that part (:attr:`TaskScores.prepared`).
    prepared: dict[str, Any] = field(default_factory=dict)


@dataclass
class SecondReading:
    """What a second reader did (:data:`SecondReader`): per task the entry results.json
    keeps under ``tasks.NAME.judge``, ``meta.judge``, and warnings to show."""

    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    meta: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)


#: A second reader (``taxpraben.judge``): handed the prepared items of every task, run by
#: run, read by the rules and not yet finished, it may give some a reading of its own (and
#: send requests to do so: the pipeline itself sends nothing).
SecondReader = Callable[[dict[str, list[list[Item]]]], SecondReading]


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
) -> list[list[Item]]:  # fmt: skip
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
    needs: dict[str, set[str]], items: Sequence[Item], scorers: SemanticScorers
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


def score_predictions(
    loaded: LoadedData,
    predictions: Iterable[Prediction],
    registry: Registry,
    settings: ScoringSettings,
    meta: dict[str, Any] | None = None,
    scorers: SemanticScorers | None = None,
    sample_sink: SampleSink | None = None,
    readings: Readings | None = None,
    item_sink: Callable[[Item], None] | None = None,
    cost_of: CostOf | None = None,
    second_reader: SecondReader | None = None,
    early: EarlyScores | None = None,
) -> ScoredResults:
    """Score predictions against loaded data; pure apart from the semantic models (and
    ``second_reader``).

    The samples.jsonl lines are returned in ``ScoredResults.samples``, or, when
    ``sample_sink`` is given, handed to it as text one task at a time and not kept.
    ``readings``: what was read already (a run reads while it generates), under the same
    profile; ``item_sink`` is handed every finished item (the report's sample browser takes
    them); ``cost_of`` prices the tokens of the ledgers (:mod:`taxpraben.costs.ledger`;
    ``meta.pricing`` says with what); ``second_reader`` reads the items once prepared, before
    they are finished (:data:`SecondReader`: the judge of ``--judge``); ``early``: the tasks
    a run scored while later ones generated, taken where they were scored from these very
    predictions (:mod:`taxpraben.scoring.early`).
    """
    started = (meta or {}).get("started_at") or datetime.now(timezone.utc).isoformat(timespec="seconds")
    predictions = list(predictions)
    by_key, run_ids, match = match_predictions(loaded, predictions, registry, settings.runs)
    specs = {task: registry[task] for task in loaded.records}
    rules = scoring_rules(settings.profile)  # the profile's strategy, chosen once
    if readings is None or readings.rules is not rules:
        readings = Readings(rules)
    shared = bool((meta or {}).get("shared_generation"))
    taken = None
    if early is not None and second_reader is None and sample_sink is not None:
        taken = early.taken(loaded, run_ids, by_key, shared_generation=shared)
    done = taken.tasks if taken is not None else {}
    prepared = {task: _prepared_runs(specs[task], recs, run_ids, by_key, readings)
                for task, recs in loaded.records.items() if task not in done}  # fmt: skip
    second = second_reader(prepared) if second_reader is not None else SecondReading()

    needs = {task: kind_of(spec).scorers(spec) for task, spec in specs.items()}
    needed = set().union(*needs.values()) if needs else set()
    if scorers is None:
        scorers = build_scorers(settings, needed)
    all_items = [it for rows in prepared.values() for row in rows for it in row]
    values = _semantic_values(needs, all_items, scorers)

    rng = taken.rng if taken is not None else new_generator(settings)
    tasks_out: dict[str, Any] = {}
    replicates: dict[str, np.ndarray] = {}
    samples: list[dict[str, Any]] = []
    status_counts = {"error": 0, "format_failure": 0}
    made_ahead: dict[str, Any] = {}
    for task in loaded.records:
        if task in done:
            scores = done[task]
        else:
            rows = prepared.pop(task)  # dropped once scored: memory stays at one task's worth
            scores = score_task(specs[task], rows, run_ids, values, scorers.unavailable, rng, settings.bootstrap,
                                cost_of, shared)  # fmt: skip
        status_counts["error"] += scores.errors
        status_counts["format_failure"] += scores.format_failures
        if scores.prepared is not None:
            made_ahead[task] = scores.prepared
        elif item_sink is not None:
            for row in scores.rows:
                for it in row:
                    item_sink(it)
        if sample_sink is None:
            samples.extend(scores.lines)
        else:
            sample_sink(early.text_of(task) if task in done and early is not None else sample_text(scores.lines))
        entry = scores.entry
        if task in second.tasks:
            entry["judge"] = second.tasks[task]
        tasks_out[task] = entry
        if scores.replicates is not None:
            replicates[task] = scores.replicates

    computed = {t: e for t, e in tasks_out.items() if e["status"] == "ok"}
    groups: dict[str, dict[str, StatJSON]] = {"type": {}, "bloom": {}}
    for kind in kinds():
        members = {t: e["score"] for t, e in computed.items() if e["type"] == kind.name}
        if members:
            groups["type"][kind.name] = mean_of_stats(members, replicates)
    for level in BLOOM_ORDER:
        members = {t: e["score"] for t, e in computed.items() if e["bloom"] == level.value}
        if members:
            groups["bloom"][level.value] = mean_of_stats(members, replicates)
    benchmark = list(dict.fromkeys([*registry, *tasks_out]))  # the registry's tasks: the whole benchmark
    missing = missing_reasons(benchmark, {t: e["status"] for t, e in tasks_out.items()}, loaded.left_out,
                              semantic=settings.semantic)  # fmt: skip
    overall: dict[str, Any] = {
        **mean_of_stats({t: e["score"] for t, e in computed.items()}, replicates),
        "partial": bool(missing),
        "tasks": list(computed),
        "benchmark": benchmark,
        "missing": missing,
    }

    n_items = sum(len(r) for r in loaded.records.values())
    full_meta: dict[str, Any] = {
        "model": None,
        "endpoint": None,
        "generation": None,
        **(meta or {}),
        "runs": len(run_ids),
        "data_dir": str(loaded.data_dir),
        "data_hash": loaded.data_hash,
        "limit": loaded.limit,
        "profile": settings.profile,
        "scorers": scorers.describe(),
        "package_version": __version__,
        "git_hash": git_hash(),
        "started_at": started,
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tasks": list(tasks_out),
        "counts": {
            "items": n_items,
            "predictions": len(predictions),
            "scored_predictions": len(by_key),
            "missing_predictions": len(match.missing),
            "unknown_predictions": sum(match.unknown_tasks.values()) + len(match.unknown_ids),
            "duplicate_predictions": 0,
            "errors": status_counts["error"],
            "format_failures": status_counts["format_failure"],
        },
        "warnings": match.messages() + [str(w) for w in loaded.warnings] + second.warnings,
    }
    if second.meta is not None:
        full_meta["judge"] = second.meta
    full_meta.setdefault("shared_generation", False)
    if "manifest" in full_meta:  # the job's manifest, completed with what scoring knows; last
        full_meta["manifest"] = complete_manifest(full_meta.pop("manifest"), full_meta)
    results = {
        "schema_version": SCHEMA_VERSION,
        "meta": full_meta,
        "tasks": tasks_out,
        "groups": groups,
        "overall": overall,
        "ledger": total_ledger(entry["ledger"] for entry in tasks_out.values()),
    }
    return ScoredResults(results=results, samples=samples, match=match, prepared=made_ahead)


def _results_text(results: dict[str, Any] | Results) -> str:
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
    meta: dict[str, Any] | None = None,
    scorers: SemanticScorers | None = None,
    readings: Readings | None = None,
    item_sink: Callable[[Item], None] | None = None,
    cost_of: CostOf | None = None,
    second_reader: SecondReader | None = None,
    early: EarlyScores | None = None,
) -> ScoredResults:
    """Score and write results.json and samples.jsonl into ``out_dir`` (the CLI adds reports);
    ``readings``, ``item_sink``, ``cost_of``, ``second_reader`` and ``early`` as
    :func:`score_predictions`'s.

    Sample lines stream to disk task by task rather than being held all at once (36.5K
    lines of a full benchmark are most of the memory scoring would otherwise need).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_writer(out_dir / "samples.jsonl") as fh:
        scored = score_predictions(loaded, predictions, registry, settings, meta, scorers, fh.write, readings,
                                   item_sink, cost_of, second_reader, early)  # fmt: skip
    scored.typed = Results.model_validate(scored.results)  # once: the reports take this object
    write_text_atomically(out_dir / "results.json", _results_text(scored.typed))
    return scored

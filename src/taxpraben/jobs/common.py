"""What the jobs share: the error that ends one, the registry and the data, the output
directory's lock, and scoring with the reports.

A job prints what a user needs to know through the console it is given (warnings in
yellow) and ends with :class:`JobError` when it cannot go on: the lines to show and the exit
status. The commands turn that into their exit; a job never calls ``sys.exit`` itself.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from taxpraben.data.loader import DataError, LoadedData, load_data
from taxpraben.jobs.hub import use_local_models_if_hub_unreachable
from taxpraben.options import (
    DataOptions,
    GateOptions,
    JudgeOptions,
    PricingOptions,
    ScoringOptions,
    TrackerOptions,
)
from taxpraben.run.locks import DirectoryLock, InUseError
from taxpraben.tasks import Registry, TaskSpecError, load_registry

if TYPE_CHECKING:
    from rich.console import Console

    from taxpraben.costs.ledger import CostOf
    from taxpraben.coverage import Selection
    from taxpraben.results.json_value import JSONObject
    from taxpraben.results.predictions import Prediction
    from taxpraben.scoring import ScoredResults, ScoringSettings
    from taxpraben.scoring.early import EarlyScores
    from taxpraben.scoring.items import Readings
    from taxpraben.scoring.pipeline import SecondReader

# The scoring pipeline (numpy, the parsers) and the reports are imported where they are used,
# so that `taxpraben --help`, `tasks` and the start of `run` stay fast.


#: The inputs option group of a scoring job (``ScoreInputOptions``, ``MergeInputOptions``).
InputsT = TypeVar("InputsT")


@dataclass(frozen=True)
class ScoringJob(Generic[InputsT]):
    """What a job that scores existing generations (``score``, ``merge``) was asked: one
    option group each, in the command's order (``OUT/config.yaml`` writes them so)."""

    data: DataOptions
    inputs: InputsT
    scoring: ScoringOptions
    pricing: PricingOptions = field(default_factory=PricingOptions)
    gates: GateOptions = field(default_factory=GateOptions)
    trackers: TrackerOptions = field(default_factory=TrackerOptions)
    judge: JudgeOptions = field(default_factory=JudgeOptions)


class JobError(Exception):
    """A job cannot go on: ``lines`` say why (and what to do), ``code`` is the exit status.

    ``style`` is how the lines are shown (red: an error; yellow: an interruption)."""

    def __init__(self, *lines: str, code: int = 1, style: str = "red") -> None:
        super().__init__("\n".join(lines))
        self.lines = lines
        self.code = code
        self.style = style


def say(console: Console, text: str, style: str | None = None) -> None:
    """Print ``text`` as it is (no markup, no highlighting)."""
    console.print(text, style=style, markup=False, highlight=False)


def warn(console: Console, text: str) -> None:
    say(console, text, "yellow")


def task_registry(task_dirs: Sequence[Path] | None, *, checked: bool = True) -> Registry:
    """The registry with the extra task directories; JobError (exit 2) for a bad spec.
    ``checked=False``: the specs' values are left to ``Registry.check`` (``run``)."""
    try:
        return load_registry(task_dirs or (), checked=checked)
    except TaskSpecError as exc:
        raise JobError(str(exc), code=2) from exc


def sample_note(data: str | Path) -> list[str]:
    """A line for ``--data sample`` when a directory ``./sample`` is what it read (it wins over
    the bundled sample, being named): both named, and how to pick either; [] otherwise."""
    from taxpraben.data.files import SAMPLE_NAME, sample_data_dir

    if str(data) != SAMPLE_NAME or not Path(SAMPLE_NAME).exists():
        return []
    return [f"--data sample read {Path(SAMPLE_NAME).resolve()} (a directory named sample here), not the bundled "
            f"sample ({sample_data_dir()}): pass --data ./sample to say so, or --data {sample_data_dir()} for the "
            "bundled one."]  # fmt: skip


def benchmark_selection(data: DataOptions, registry: Registry, held: list[str] | None = None) -> Selection:
    """The tasks a job scores, and why the benchmark's others are left out (``coverage``):
    the whole benchmark, ``--tasks``, or (``held``, ``score``) the tasks a predictions file
    holds. JobError (exit 2), before anything is read or sent, naming each wanted task that has no
    data file and the names looked for, unless ``--allow-missing``; exit 1 for an unknown
    task name (its did-you-mean) and exit 1 for a data directory that is not one."""
    from taxpraben.coverage import MissingDataError, select_tasks
    from taxpraben.data.files import discover_files, looked_for, resolve_data_dir

    try:
        chosen = [spec.name for spec in registry.select(data.task_names)] if data.task_names else None
    except KeyError as exc:  # a usage error, with its did-you-mean
        raise JobError(f"--tasks: {str(exc).strip(chr(34) + chr(39))}", code=2) from exc
    data_dir = resolve_data_dir(data.data)
    try:
        files, _ = discover_files(data_dir, registry)
    except DataError as exc:
        raise JobError(str(exc).strip("'\""), *sample_note(data.data)) from exc
    selection, absent = select_tasks(list(registry), [f.task for f in files], chosen=chosen, held=held)
    if absent and files and not data.allow_missing:
        error = MissingDataError(absent, {task: looked_for(task) for task in absent}, str(data_dir))
        raise JobError(str(error), *sample_note(data.data), code=2)
    return selection


def read_data(data: DataOptions, registry: Registry, console: Console, held: list[str] | None = None) -> LoadedData:
    """The data ``data`` selects (:func:`benchmark_selection`; ``held``: the tasks a
    predictions file holds), its warnings printed; JobError (exit 2) for tasks without data,
    (exit 1) for data that cannot be read."""
    selection = benchmark_selection(data, registry, held)
    for line in sample_note(data.data):
        warn(console, line)
    try:
        loaded = load_data(data.data, registry, selection.tasks or data.task_names, data.limit, selection.left_out)
    except (DataError, KeyError) as exc:
        raise JobError(str(exc).strip("'\"")) from exc
    for warning in loaded.warnings:
        warn(console, str(warning))
    return loaded


def scoring_settings(scoring: ScoringOptions, *, seed: int, runs: int | None) -> ScoringSettings:
    """The ScoringSettings of the options; JobError (exit 2) when they are not valid."""
    try:
        return scoring.settings(seed=seed, runs=runs)
    except ValueError as exc:
        raise JobError(str(exc), code=2) from exc


def ready_scorers(scoring: ScoringOptions, settings: ScoringSettings, console: Console) -> None:
    """Before semantic scoring: the hub probed (see use_local_models_if_hub_unreachable)."""
    if settings.semantic:
        use_local_models_if_hub_unreachable(scoring.scorer_models, console)


@contextmanager
def output_directory(out_dir: Path) -> Iterator[Path]:
    """Hold ``out_dir`` for this job alone (one job per output directory); JobError (exit 2)
    when another job holds it or it cannot be created."""
    with ExitStack() as held:
        try:
            held.enter_context(DirectoryLock(out_dir))
        except InUseError as exc:
            raise JobError(str(exc), code=2) from exc
        except OSError as exc:
            raise JobError(out_dir_problem(out_dir, exc), code=2) from exc
        yield out_dir


def out_dir_problem(out_dir: Path, exc: OSError) -> str:
    """Why ``--out DIR`` cannot be used, in words (not a bare errno): a file where the
    directory should be (or above it), a place this user cannot write to, or the system's
    own reason."""
    above = next((p for p in [out_dir, *out_dir.parents] if p.exists() and not p.is_dir()), None)
    if above == out_dir:
        return f"--out {out_dir}: is a file, not a directory; give a directory (it is made when missing)"
    if above is not None:
        return f"--out {out_dir}: {above} is a file, so no directory can be made under it; choose another --out"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        where = exc.filename or out_dir
        return (f"--out {out_dir}: cannot write to {where} ({exc.strerror or 'permission denied'}); "
                "choose a directory you can write to")  # fmt: skip
    return f"--out {out_dir}: cannot make or use this directory: {exc.strerror or exc}"


def in_data_order(predictions: list[Prediction], loaded: LoadedData) -> list[Prediction]:
    """Sort by task and record order of the data, then run."""
    position = {
        (task, record.id): i
        for i, (task, record) in enumerate(
            (task, record) for task, records in loaded.records.items() for record in records
        )
    }
    return sorted(predictions, key=lambda p: (position.get((p.task, p.id), -1), p.run))


def write_predictions_file(out_dir: Path, predictions: Sequence[Prediction]) -> Path:
    """``OUT/predictions.jsonl``; JobError (exit 2) when it cannot be written (a full disk:
    every completion is in the cache; rerun later)."""
    from taxpraben.results.predictions import write_predictions

    path = out_dir / "predictions.jsonl"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_predictions(path, predictions)
    except OSError as exc:
        raise JobError(f"cannot write {path}: {exc}", code=2) from exc
    return path


def costing(options: PricingOptions, model: str | None, console: Console) -> tuple[CostOf | None, JSONObject | None]:
    """The cost function of ``model``'s tokens and what ``meta.pricing`` records, from
    ``--pricing`` (None, None without it); JobError (exit 2) for a pricing file that cannot be
    used; a warning, and no cost, for a model the file does not price."""
    if options.pricing is None:
        return None, None
    from taxpraben.costs.pricing import PricingError, load_pricing, runs_locally

    try:
        pricing = load_pricing(options.pricing)
    except PricingError as exc:
        raise JobError(str(exc), code=2) from exc
    if model is None:
        warn(console, f"{options.pricing}: the predictions name no model (their 'model' key): no cost is computed.")
        return None, {"file": str(options.pricing), "currency": pricing.currency, "model": None}
    meta = pricing.to_meta(model)
    if runs_locally(model):
        return (lambda _p, _c, _cached: 0.0), meta
    price = pricing.price_of(model)
    if price is None:
        warn(console, f"{options.pricing} has no price for {model} (nor a glob that matches it): no cost is computed.")
        return None, meta
    return price.cost, meta


def score_and_report(
    loaded: LoadedData,
    predictions: list[Prediction],
    registry: Registry,
    out: Path,
    settings: ScoringSettings,
    meta: JSONObject,
    console: Console,
    readings: Readings | None = None,
    cost_of: CostOf | None = None,
    second_reader: SecondReader | None = None,
    early: EarlyScores | None = None,
) -> ScoredResults:
    """Score, write the output directory, print warnings and the terminal summary;
    ``readings``: the answers read already (a run reads while it generates); ``cost_of``:
    the prices of the ledgers (:func:`costing`); ``second_reader``: the judge (``jobs.judge``);
    ``early``: the tasks a run scored while later ones generated (``scoring.early``)."""
    from taxpraben.report import print_summary, write_reports
    from taxpraben.report.review import carry_review
    from taxpraben.report.samples import BrowserData, PreparedTask
    from taxpraben.report.view import view_of
    from taxpraben.results import Results
    from taxpraben.scoring import Hooks, PredictionMatchError, score_to_dir

    try:
        # The reports are written from the results validated once, when written, and the
        # sample browser from the items as they were finished: nothing is read back.
        with BrowserData() as browser:
            hooks = Hooks(readings=readings, task_sink=browser.add_task, cost_of=cost_of, second_reader=second_reader,
                          early=early)
            scored = score_to_dir(loaded, predictions, registry, out, settings, meta, hooks)
            for part in scored.prepared.values():  # tasks scored early: their part made then
                if not isinstance(part, PreparedTask):  # read_ahead puts nothing else there
                    raise TypeError(f"a task's part made ahead is a {type(part).__name__}, not the browser's PreparedTask")
                browser.adopt(part)
            results = scored.typed if scored.typed is not None else Results.model_validate(scored.results)
            results, reviewed = carry_review(out, results)  # OUT/review.jsonl judged against the new readings
            view = view_of(results, out, written_here=True)
            write_reports(out, view=view, browser=browser)
    except PredictionMatchError as exc:
        raise JobError(str(exc)) from exc
    except OSError as exc:  # a full disk, a read-only directory
        raise JobError(f"cannot write the results into {out}: {exc}", code=2) from exc
    for message in scored.match.messages():
        warn(console, message)
    if reviewed:
        say(console, reviewed)
    paths = [out / name for name in ("results.json", "samples.jsonl", "report.md", "report.html", "summary.csv")]
    print_summary(view, [p for p in paths if p.exists()], console)  # the view the reports were written from
    return scored

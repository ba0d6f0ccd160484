"""The review session of a result directory: its readings drawn, with the prompts, each
task's reading kind and the options of classification items."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from taxpraben.report.explain import reading_kind
from taxpraben.report.load import SAMPLES_FILE, ReportError, iter_samples, model_label, read_results
from taxpraben.review.draw import all_readings, draw
from taxpraben.review.session import Session


def task_options(data_dir: str | None, tasks: Sequence[str], task_dirs: Sequence[Path]) -> dict[tuple[str, str], tuple[str, ...]]:
    """The choices of each classification record of ``tasks``, from the run's data
    directory; {} when it cannot be read (the page then takes the options the prompt letters)."""
    if not data_dir or not tasks:
        return {}
    from taxpraben.data.loader import load_data
    from taxpraben.tasks import load_registry

    try:
        loaded = load_data(data_dir, load_registry(task_dirs), tasks)
    except Exception:
        return {}
    return {(r.task, r.id): r.choices for rs in loaded.records.values() for r in rs if r.choices}


def build_session(out_dir: Path, n: int, seed: int, reviewer: str, task_dirs: Sequence[Path] = ()) -> Session:
    """The session of ``out_dir``: ``n`` readings drawn with ``seed``, the verdicts
    ``reviewer`` gave already read back. ReportError names an unreadable results.json or
    samples.jsonl line, or a missing samples.jsonl (there would be nothing to review)."""
    from taxpraben.parsing.readers.letters import listed_option_texts
    from taxpraben.tasks import load_registry

    results = read_results(out_dir)
    samples = Path(out_dir) / SAMPLES_FILE
    if not samples.exists():
        raise ReportError(f"{samples}: not found: the readings to review are in it (`taxpraben run` and "
                          "`taxpraben score` write it; copy it back beside results.json, or score the predictions "
                          "again into this directory)")
    types = {name: task.type or "" for name, task in results.tasks.items()}
    registry = load_registry(task_dirs)
    kinds = {name: reading_kind(registry.get(name)) for name in types}
    queries: dict[tuple[str, str], str] = {}
    readings = []
    for item in iter_samples(out_dir):
        if item.query:
            queries.setdefault((item.task, item.id), item.query)
        readings += all_readings([item], types)
    drawn = draw(readings, n, seed)
    labelled = sorted({r.task for r in drawn if kinds.get(r.task) == "label"})
    choices: dict[tuple[str, str], tuple[str, ...]] = dict(task_options(results.meta.data_dir, labelled, task_dirs))
    for r in drawn:
        if kinds.get(r.task) == "label" and (r.task, r.id) not in choices:
            listed = listed_option_texts(queries.get((r.task, r.id), ""))
            if listed:
                choices[(r.task, r.id)] = tuple(listed.values())
    return Session(Path(out_dir), drawn, reviewer, model_label(results, out_dir), kinds, queries, choices,
                   draw=(seed, n))

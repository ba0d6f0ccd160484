"""The run's view (report/view.py): loaded and ordered once, then read by every renderer."""

from __future__ import annotations

import collections
import io
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any
from unittest import mock

import pytest
from rich.console import Console

from helpers.report_fixtures import build_result_dir
from taxpraben.report import (
    RunView,
    build_leaderboard,
    load_results,
    load_run,
    print_summary,
    view_of,
    write_reports,
)
from taxpraben.report import load as load_module
from taxpraben.report import view as view_module
from taxpraben.report.html import render_html
from taxpraben.report.load import (
    load_samples,
    model_label,
    ordered_tasks,
    read_results,
    scorer_problems,
    uncomputed_metrics,
)
from taxpraben.report.markdown import render_markdown
from taxpraben.results import Sample


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_result_dir(
        tmp_path_factory.mktemp("view") / "out", not_computed=("TaxRisk",), items_per_task=4, runs=2
    )


def load_entries(action: Callable[[], object]) -> collections.Counter[str]:
    """The functions of load.py entered from outside it while ``action`` runs (a generator
    counted once, not at each resumption; a row's ``__post_init__``, once per task made, not)."""
    counts: collections.Counter[str] = collections.Counter()
    started: list[FrameType] = []  # kept alive, so that an id is not reused by another frame

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if event != "call" or code.co_filename != load_module.__file__ or code.co_name.startswith("__"):
            return
        caller = frame.f_back
        if caller is not None and caller.f_code.co_filename == load_module.__file__:
            return
        if any(frame is seen for seen in started):
            return
        started.append(frame)
        counts[code.co_name] += 1

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return counts


def test_load_run_holds_the_ordered_run(run_dir: Path) -> None:
    view = load_run(run_dir)
    results = load_results(run_dir)
    assert isinstance(view, RunView) and view.out_dir == run_dir
    assert view.results == results  # as the reports show it
    assert view.label == model_label(results, run_dir) == "openai:deepseek-chat"
    assert [row.name for row in view.tasks] == [row.name for row in ordered_tasks(results)]
    assert view.task_names == [row.name for row in view.tasks]
    assert "TaxRisk" not in view.computed_tasks and len(view.computed_tasks) == len(view.tasks) - 1
    assert view.bloom_levels[0] == "remember" and view.bloom_levels[-1] == "create"
    assert list(view.scorer_problems) == scorer_problems(results)
    assert view.uncomputed_metrics == uncomputed_metrics(results)
    with pytest.raises(AttributeError):
        view.label = "another"  # type: ignore[misc]


def test_samples_are_streamed_afresh_each_time(run_dir: Path) -> None:
    view = load_run(run_dir)
    first = view.samples()
    assert isinstance(first, Iterator)  # not a list: samples.jsonl may be large
    items = list(first)
    assert items and all(isinstance(item, Sample) for item in items)  # the lines read back into samples
    lines = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [item.to_json() for item in items] == lines
    assert [(i.task, i.id, i.run, i.status, i.score) for i in items] == [
        (x["task"], x["id"], x["run"], x["status"], x["score"]) for x in lines
    ]
    again = [item.to_json() for item in view.samples()]  # a second pass reads the file again
    assert again == [item.to_json() for item in load_samples(run_dir)] == [item.to_json() for item in items]
    assert list(view_of(view.results).samples()) == []  # no directory: nothing to stream


def test_view_of_results_in_memory(run_dir: Path) -> None:
    written = read_results(run_dir)
    view = view_of(written, run_dir)
    assert view == load_run(run_dir)
    assert view_of(written).label == "openai:deepseek-chat"
    nameless = written.model_copy(update={"meta": written.meta.model_copy(update={"model": None})})
    assert view_of(nameless).label == "(scored predictions)"
    assert view_of(nameless, run_dir).label == run_dir.resolve().name


def test_renderers_read_the_view_and_nothing_else_of_load(run_dir: Path) -> None:
    """Once the view is built, rendering a whole report enters load.py only to stream samples."""
    view = load_run(run_dir)
    console = Console(file=io.StringIO(), width=120, color_system=None)

    def render() -> None:
        render_markdown(view)
        render_html(view)
        print_summary(view, [], console)

    assert load_entries(render) == {"iter_samples": 1}


def test_write_reports_loads_the_run_once(tmp_path: Path, run_dir: Path) -> None:
    out = build_result_dir(tmp_path / "out", not_computed=("TaxRisk",), items_per_task=4, runs=2)
    counts = load_entries(lambda: write_reports(out))
    assert counts["read_results"] == 1 and counts["ordered_tasks"] == 1
    assert counts["iter_samples"] == 1 and counts["model_label"] == 1
    assert max(counts.values()) == 1, counts


def test_a_given_view_renders_the_same_files(tmp_path: Path) -> None:
    out = build_result_dir(tmp_path / "out", not_computed=("TaxRisk",), items_per_task=4, runs=2)
    paths = write_reports(out)
    before = [path.read_bytes() for path in paths]
    with mock.patch.object(view_module, "read_results", wraps=read_results) as reads:
        assert write_reports(out, view=view_of(read_results(out), out)) == paths
        assert reads.call_count == 0  # the view's results are used, not re-read
    assert [path.read_bytes() for path in paths] == before
    results = load_results(out)
    assert render_markdown(results, label=model_label(results, out)) == before[0].decode("utf-8")
    with pytest.raises(ValueError, match="not of"):
        write_reports(out, view=view_of(results))  # no directory: its samples are unknown
    with pytest.raises(ValueError, match="not of"):
        write_reports(out, view=load_run(build_result_dir(tmp_path / "other", items_per_task=2)))


def test_print_summary_takes_results_as_written_or_the_view(run_dir: Path) -> None:
    def shown(run: Any) -> str:
        buffer = io.StringIO()
        print_summary(run, [], Console(file=buffer, width=120, color_system=None))
        return buffer.getvalue()

    text = shown(load_run(run_dir))
    assert text == shown(read_results(run_dir)) == shown(load_results(run_dir))
    assert "TaxPraBen: openai:deepseek-chat" in text


def test_leaderboard_reads_each_directory_once(tmp_path: Path) -> None:
    dirs = [
        build_result_dir(tmp_path / name, quality=quality, seed=seed, items_per_task=4, runs=2)
        for name, quality, seed in (("a", 0.3, 1), ("b", -0.3, 2))
    ]
    counts = load_entries(lambda: build_leaderboard(dirs, resamples=200))
    assert counts["read_results"] == 2 and counts["ordered_tasks"] == 2
    assert counts["iter_samples"] == 2
    assert max(counts.values()) == 2, counts


def test_samples_written_here_are_read_without_a_second_check(tmp_path: Path) -> None:
    """A run's own reports read the lines it has just written as JSON only: the same items."""
    out = build_result_dir(tmp_path / "run")
    checked = [item.to_json() for item in load_run(out).samples()]
    view = view_of(load_run(out).results, out, written_here=True)
    with mock.patch.object(load_module.Sample, "model_validate_json", side_effect=AssertionError):
        trusted = [item.to_json() for item in view.samples()]
    assert trusted == checked and trusted

"""`taxpraben diff A B`: changes B - A, flipped items, manifest differences, refusal, regression gate."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.report_fixtures import TASKS, build_result_dir
from taxpraben.cli import build_app
from taxpraben.report import IncompatibleResultsError
from taxpraben.report.diff import build_diff
from taxpraben.report.leaderboard import build_leaderboard, save_leaderboard

RESAMPLES = 500
HASH_A = "sha256:" + "ab12" * 16
HASH_B = "sha256:" + "cd34" * 16


def manifest(version: str = "0.1.0", calc_hash: str = HASH_A, temperature: float = 0.0) -> dict[str, Any]:
    """A manifest with exactly the specified keys."""
    return {
        "taxpraben": {"version": version, "git_commit": None},
        "python": "3.11.9", "platform": "Linux-6.1-x86_64",
        "packages": {"torch": None, "transformers": None, "aiohttp": "3.9.5", "numpy": "1.26.4", "pydantic": "2.7.1"},
        "devices": ["cpu"],
        "data_files": {
            t.name: {"path": f"/data/{t.name}.jsonl", "sha256": calc_hash if t.name == "TaxCalc" else "ee" * 32}
            for t in TASKS
        },
        "task_specs": {t.name: {"path": None, "sha256": "ff" * 32} for t in TASKS},
        "prompt_template_sha256": "11" * 32,
        "generation": {"temperature": temperature, "max_tokens": 1024}, "model_args": None, "limit": None,
        "scorers": {"bertscore": {"model": "hfl/chinese-xlnet-base", "revision": None, "weights_sha256": None}},
        "judge": None,
        "started_at": "2026-11-30T03:20:51+00:00", "finished_at": "2026-11-30T04:02:13+00:00",
    }  # fmt: skip


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def samples(directory: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    lines = (directory / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return {(x["task"], x["id"], x["run"]): x for x in map(json.loads, lines)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A (good), B (clearly worse), C (a hair below B: not significant)."""
    root = tmp_path_factory.mktemp("diff")
    return {
        "a": build_result_dir(root / "a", model="openai:model-a", quality=0.2, seed=4, manifest=manifest()),
        "b": build_result_dir(root / "b", model="openai:model-b", quality=0.0, seed=5,
                              manifest=manifest(temperature=0.7)),
        "c": build_result_dir(root / "c", model="openai:model-c", quality=-0.01, seed=6, manifest=manifest()),
    }  # fmt: skip


def test_changes_are_b_minus_a(runs: dict[str, Path]) -> None:
    diff = build_diff(runs["a"], runs["b"], resamples=RESAMPLES)
    ra, rb = read(runs["a"] / "results.json"), read(runs["b"] / "results.json")
    assert diff.overall.change == rb["overall"]["mean"] - ra["overall"]["mean"]
    assert [t.task for t in diff.tasks] == [t.name for t in TASKS]
    for t in diff.tasks:
        a_task, b_task = ra["tasks"][t.task], rb["tasks"][t.task]
        assert t.score.change == b_task["score"]["mean"] - a_task["score"]["mean"]
        assert set(t.metrics) == set(b_task["metrics"])
        for key, change in t.metrics.items():
            assert change.change == b_task["metrics"][key]["mean"] - a_task["metrics"][key]["mean"]
        # per-item metrics are tested; weighted F1 (a figure over a whole run) is not
        if "f1" in t.metrics:
            assert t.metrics["f1"].test is None and t.metrics["acc"].test is not None


def test_flipped_items_exactly(runs: dict[str, Path]) -> None:
    diff = build_diff(runs["a"], runs["b"], resamples=RESAMPLES)
    sa, sb = samples(runs["a"]), samples(runs["b"])
    expected = {
        (key, sa[key]["extracted"], sa[key]["score"], line["extracted"], line["score"])
        for key, line in sb.items()
        if key in sa and {sa[key]["score"], line["score"]} == {0.0, 1.0}
    }
    got = {((f.task, f.id, f.run), f.a_extracted, f.a_score, f.b_extracted, f.b_score) for f in diff.flips}
    assert got == expected and len(diff.flips) == len(expected) > 10
    assert {f.direction for f in diff.flips} == {"fixed", "broken"}
    for f in diff.flips:
        assert f.direction == ("fixed" if f.b_score == 1.0 else "broken")


def test_significance_agrees_with_the_leaderboard(runs: dict[str, Path]) -> None:
    for worse in ("b", "c"):
        diff = build_diff(runs["a"] if worse == "b" else runs["b"], runs[worse], resamples=RESAMPLES)
        board = build_leaderboard([runs["a"] if worse == "b" else runs["b"], runs[worse]], resamples=RESAMPLES)
        (pair,) = board.comparisons
        assert diff.overall.test is not None and pair.test is not None
        assert diff.overall.test.p_value == pair.test.p_value
        assert diff.overall.test.difference == pytest.approx(-pair.test.difference, abs=1e-12)
        assert diff.overall.test.significant == pair.test.significant == (worse == "b")


def test_manifest_differences_are_listed(runs: dict[str, Path]) -> None:
    diff = build_diff(runs["a"], runs["b"], resamples=RESAMPLES)
    assert [(d.key, d.a, d.b) for d in diff.differences] == [
        ("model", "openai:model-a", "openai:model-b"), ("generation.temperature", 0.0, 0.7),
    ]  # fmt: skip
    same = build_diff(runs["a"], runs["c"], resamples=RESAMPLES).differences
    assert [d.key for d in same] == ["model"]


def test_command_prints_markdown_and_writes_diff_json(runs: dict[str, Path], tmp_path: Path) -> None:
    res = CliRunner().invoke(build_app(), ["diff", str(runs["a"]), str(runs["b"]), "--resamples", str(RESAMPLES),
                                           "--out", str(tmp_path / "d")])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "| Overall Average | score |" in res.output and "## Flipped items" in res.output
    written = read(tmp_path / "d" / "diff.json")
    ra, rb = read(runs["a"] / "results.json"), read(runs["b"] / "results.json")
    calc = written["tasks"]["TaxCalc"]["score"]
    assert calc["change"] == rb["tasks"]["TaxCalc"]["score"]["mean"] - ra["tasks"]["TaxCalc"]["score"]["mean"]
    assert written["overall"]["test"]["significant"] is True
    assert written["differences"][1:] == [{"key": "generation.temperature", "a": 0.0, "b": 0.7}]
    flips = build_diff(runs["a"], runs["b"], resamples=RESAMPLES).flips
    assert len(written["flipped"]) == len(flips)


def test_the_default_out_is_a_directory_of_its_own(runs: dict[str, Path], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Neither run's directory is written to: diffs/A-vs-B in the working directory."""
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(build_app(), ["diff", str(runs["a"]), str(runs["c"]), "--resamples", str(RESAMPLES)])
    assert res.exit_code == 0, res.output
    written = tmp_path / "diffs" / f"{runs['a'].name}-vs-{runs['c'].name}" / "diff.json"
    assert written.exists() and f"Wrote {written.relative_to(tmp_path)}" in res.output
    assert not (runs["c"] / "diff.json").exists() and not (runs["a"] / "diff.json").exists()
    res = CliRunner().invoke(build_app(), ["diff", str(runs["a"]), str(runs["c"]), "--resamples", str(RESAMPLES),
                                           "-o", "mine"])  # fmt: skip
    assert res.exit_code == 0 and (tmp_path / "mine" / "diff.json").exists(), res.output


def test_fail_over_regression_exits_5_only_when_significant(runs: dict[str, Path], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # diffs/A-vs-B is written in the working directory, never the repository's

    def gate(a: str, b: str, threshold: str) -> int:
        args = ["diff", str(runs[a]), str(runs[b]), "--resamples", str(RESAMPLES), "--fail-over-regression", threshold]
        return CliRunner().invoke(build_app(), args).exit_code

    # B is much worse than A, significantly: the overall fell by about 0.14
    fall = build_diff(runs["a"], runs["b"], resamples=RESAMPLES).overall.change
    assert fall is not None and fall < -0.1
    assert gate("a", "b", "0.01") == 5
    # B -> C: the overall falls a little, not significantly; of the task scores, TaxSCQ and
    # TaxMCQ fall the most (0.08) but not significantly, TaxInspect a little less, significantly.
    diff = build_diff(runs["b"], runs["c"], resamples=RESAMPLES)
    assert diff.overall.change is not None and -0.05 < diff.overall.change < 0
    assert diff.overall.test is not None and not diff.overall.test.significant
    falls = {t.task: -t.score.change for t in diff.tasks if t.score.change is not None and t.score.change < 0}
    significant = {t.task for t in diff.tasks if t.score.test is not None and t.score.test.significant}
    biggest_real = max(falls[t] for t in falls if t in significant)
    biggest_noise = max(falls[t] for t in falls if t not in significant)
    assert biggest_noise > biggest_real > 0
    between = (biggest_noise + biggest_real) / 2
    assert gate("b", "c", f"{between}") == 0  # beyond X only where not significant
    assert gate("b", "c", f"{biggest_real - 0.001}") == 5  # the significant fall is now beyond X
    # every significant fall of A -> B is smaller than 0.5: nothing beyond the threshold
    assert all(t.score.change > -0.5 for t in build_diff(runs["a"], runs["b"], resamples=RESAMPLES).tasks)
    assert gate("a", "b", "0.5") == 0
    # B better than A is no regression
    assert gate("b", "a", "0") == 0
    # out of range: refused when parsed
    assert gate("a", "b", "1.5") == 2


def _rewrite_meta(directory: Path, **changes: Any) -> None:
    results = read(directory / "results.json")
    results["meta"].update(changes)
    (directory / "results.json").write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")


def test_different_data_refused_with_both_hashes_and_marked_when_forced(runs: dict[str, Path], tmp_path: Path) -> None:
    other = build_result_dir(tmp_path / "other", model="openai:model-x", seed=7, manifest=manifest(calc_hash=HASH_B))
    with pytest.raises(IncompatibleResultsError) as refused:
        build_diff(runs["a"], other, resamples=RESAMPLES)
    message = str(refused.value)
    assert "TaxCalc" in message and HASH_A in message and HASH_B in message and "--force" in message
    with pytest.raises(IncompatibleResultsError, match="TaxCalc"):
        build_leaderboard([runs["a"], other], resamples=RESAMPLES)
    res = CliRunner().invoke(build_app(), ["diff", str(runs["a"]), str(other), "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and HASH_B in res.output
    assert not (tmp_path / "x").exists()

    marker = "not comparable: TaxCalc data differs (ab12ab12ab12… vs cd34cd34cd34…)"
    forced = build_diff(runs["a"], other, force=True, resamples=RESAMPLES)
    assert marker in forced.a.notes and marker in forced.b.notes
    assert any("Forced comparison" in w and HASH_B in w for w in forced.warnings)
    assert ("data_files.TaxCalc.sha256", HASH_A, HASH_B) in [(d.key, d.a, d.b) for d in forced.differences]
    board = build_leaderboard([runs["a"], other], force=True, resamples=RESAMPLES)
    md = save_leaderboard(board, tmp_path / "lb")[0].read_text(encoding="utf-8")
    ranked = [line for line in md.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")]
    assert len(ranked) == 2 and all(line.rstrip(" |").endswith(marker) for line in ranked)


def test_spec_difference_fallback_versions_and_limit(runs: dict[str, Path], tmp_path: Path) -> None:
    spec = manifest()
    spec["task_specs"]["TaxMCQ"]["sha256"] = "99" * 32
    other = build_result_dir(tmp_path / "spec", model="openai:model-x", seed=7, manifest=spec)
    with pytest.raises(IncompatibleResultsError, match=r"different task spec for TaxMCQ.*" + "99" * 32):
        build_diff(runs["a"], other, resamples=RESAMPLES)
    # Without a manifest on one side: meta.data_hash decides (equal here: comparable)
    plain = build_result_dir(tmp_path / "plain", model="openai:model-y", seed=8)
    assert build_diff(runs["a"], plain, resamples=RESAMPLES).warnings  # the errored-predictions note only
    bad = build_result_dir(tmp_path / "bad", model="openai:model-z", seed=8, data_hash="sha256:other")
    with pytest.raises(IncompatibleResultsError, match=r"different data hashes.*sha256:other"):
        build_diff(runs["a"], bad, resamples=RESAMPLES)
    # another taxpraben version: ranked, with a note; a limited run: marked
    newer = build_result_dir(tmp_path / "newer", model="openai:model-n", seed=9, manifest=manifest(version="0.2.0"))
    limited = copy.deepcopy(manifest())
    older = build_result_dir(tmp_path / "lim", model="openai:model-l", seed=10, manifest=limited)
    _rewrite_meta(older, limit=7)
    _rewrite_meta(runs["a"], limit=7)
    try:
        diff = build_diff(runs["a"], older, resamples=RESAMPLES)
        assert "limited: first 7 per task" in diff.a.notes and "limited: first 7 per task" in diff.b.notes
        assert any(w.startswith("Limited runs") for w in diff.warnings)
    finally:
        _rewrite_meta(runs["a"], limit=None)
    board = build_leaderboard([runs["a"], runs["c"], newer], resamples=RESAMPLES)
    assert any("different taxpraben versions" in w and "0.2.0" in w for w in board.warnings)
    noted = {e.label: e.notes for e in board.entries}
    assert noted["openai:model-n"] == ["taxpraben 0.2.0"] and noted["openai:model-a"] == []

"""The manifest of results.json (hashes, versions, revisions) and --limit as a fraction."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter
from typer.testing import CliRunner

import taxpraben
from taxpraben.cli import app
from taxpraben.commands.options import parse_number
from taxpraben.data.files import sample_data_dir
from taxpraben.data.loader import load_data, records_kept
from taxpraben.manifest import PACKAGES, hub_revision, scorer_revision
from taxpraben.report.overall_flags import limit_words as limit_text
from taxpraben.results import Results
from taxpraben.tasks import TaskSpec, load_registry

WIDE = {"COLUMNS": "400", "NO_COLOR": "1"}
TASKS = ["TaxCalc", "TaxSCQ", "TaxMCQ"]


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_into(out: Path, data: Path | str, *extra: str) -> dict[str, Any]:
    subset = [] if str(data) == "sample" else ["--tasks", ",".join(TASKS)]  # the fixture's three tasks
    args = ["run", "--model", "baseline:oracle", "--data", str(data), *subset, "--runs", "1", "--no-semantic",
            "--no-cache", "--out", str(out), *extra]  # fmt: skip
    result = CliRunner().invoke(app, args, env=WIDE, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A copy of three of the sample's files."""
    directory = tmp_path / "data"
    directory.mkdir()
    for task in TASKS:
        shutil.copy(sample_data_dir() / f"{task}.jsonl", directory / f"{task}.jsonl")
    return directory


def test_the_manifest_hashes_are_the_files_hashes(data: Path, tmp_path: Path) -> None:
    manifest = run_into(tmp_path / "out", data)["meta"]["manifest"]
    assert list(manifest) == ["taxpraben", "python", "platform", "packages", "devices", "data_files", "task_specs",
                              "prompt_template_sha256", "generation", "model_args", "limit", "scorers", "judge",
                              "scorer_setup", "paper_scorer", "started_at", "finished_at"]  # fmt: skip
    assert manifest["data_files"] == {t: {"path": str(data / f"{t}.jsonl"), "sha256": sha256_of(data / f"{t}.jsonl")}
                                      for t in TASKS}  # fmt: skip
    registry = load_registry()
    for task in TASKS:
        spec = manifest["task_specs"][task]
        assert spec["path"] == str(registry.sources[task])
        canonical = json.dumps(TypeAdapter(TaskSpec).dump_python(registry[task], mode="json"), sort_keys=True, separators=(",", ":"),
                               ensure_ascii=False)  # fmt: skip
        assert spec["sha256"] == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    prompts = Path(taxpraben.__file__).parent / "prompts.py"
    assert manifest["prompt_template_sha256"] == sha256_of(prompts)
    assert manifest["generation"]["temperature"] == 0.0 and manifest["limit"] is None
    assert manifest["scorers"] == {} and manifest["judge"] is None  # --no-semantic
    assert manifest["devices"] == ["auto"]


def test_the_versions_are_the_installed_ones(data: Path, tmp_path: Path) -> None:
    manifest = run_into(tmp_path / "out", data)["meta"]["manifest"]
    assert manifest["taxpraben"]["version"] == metadata.version("taxpraben")
    for name in PACKAGES:
        try:
            expected: str | None = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected = None
        assert manifest["packages"][name] == expected, name
    assert manifest["python"].count(".") == 2


def test_a_changed_data_file_changes_its_hash_alone(data: Path, tmp_path: Path) -> None:
    before = run_into(tmp_path / "a", data)["meta"]["manifest"]["data_files"]
    calc = data / "TaxCalc.jsonl"
    lines = calc.read_text(encoding="utf-8").splitlines(keepends=True)
    calc.write_text("".join(reversed(lines)), encoding="utf-8")
    after = run_into(tmp_path / "b", data)["meta"]["manifest"]["data_files"]
    assert after["TaxCalc"]["sha256"] == sha256_of(calc) != before["TaxCalc"]["sha256"]
    assert {t: after[t] for t in ("TaxSCQ", "TaxMCQ")} == {t: before[t] for t in ("TaxSCQ", "TaxMCQ")}


def test_limit_half_takes_ceil_of_half_of_each_task(tmp_path: Path) -> None:
    results = run_into(tmp_path / "out", "sample", "--limit", "0.5")
    sizes = {path.stem: sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
             for path in sample_data_dir().glob("*.jsonl")}  # fmt: skip
    assert {t: e["n"] for t, e in results["tasks"].items()} == {t: math.ceil(n / 2) for t, n in sizes.items()}
    assert results["meta"]["limit"] == 0.5 and results["meta"]["manifest"]["limit"] == 0.5
    assert any(n % 2 for n in sizes.values())  # the rounding is exercised


def test_a_fraction_keeps_the_same_records_as_the_count_it_rounds_to() -> None:
    registry = load_registry()
    fraction = load_data("sample", registry, ["TaxCalc"], 0.25)
    n = len(load_data("sample", registry, ["TaxCalc"]).records["TaxCalc"])
    count = load_data("sample", registry, ["TaxCalc"], math.ceil(n / 4))
    assert [r.id for r in fraction.records["TaxCalc"]] == [r.id for r in count.records["TaxCalc"]]
    assert fraction.data_hash == count.data_hash and fraction.file_hashes == count.file_hashes


def test_records_kept() -> None:
    assert [records_kept(0.1, 30), records_kept(0.5, 7), records_kept(0.01, 3), records_kept(3, 2),
            records_kept(None, 5), records_kept(0.999, 10)] == [3, 4, 1, 2, 5, 10]  # fmt: skip


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "0.0", "abc"])
def test_a_bad_limit_is_refused_naming_it(value: str) -> None:
    result = CliRunner().invoke(app, ["run", "--model", "baseline:oracle", "--data", "sample", "--limit", value],
                                env=WIDE)  # fmt: skip
    assert result.exit_code == 2 and "--limit" in result.output


def test_limit_values_parse_as_counts_or_fractions() -> None:
    assert [parse_number("3"), parse_number("0.1"), parse_number("2.0"), parse_number(0.5)] == [3, 0.1, 2, 0.5]
    assert isinstance(parse_number("2.0"), int)
    assert (limit_text(50), limit_text(0.1)) == ("first 50 per task", "first 10% per task")


def test_scorer_revisions_local_and_hub(tmp_path: Path) -> None:
    local = tmp_path / "tiny-bert"
    local.mkdir()
    (local / "pytorch_model.bin").write_bytes(b"old weights")
    (local / "model.safetensors").write_bytes(b"\x00weights\x01" * 100)
    assert scorer_revision(str(local)) == {"model": str(local), "revision": str(local.resolve()),
                                           "weights_sha256": sha256_of(local / "model.safetensors")}  # fmt: skip
    state = tmp_path / "bart_score.pth"
    state.write_bytes(b"tuned")
    assert scorer_revision(str(local), state)["weights_sha256"] == sha256_of(state)
    cache = tmp_path / "hub"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = cache / "models--org--tiny" / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (cache / "models--org--tiny" / "refs").mkdir()
    (cache / "models--org--tiny" / "refs" / "main").write_text(commit, encoding="utf-8")
    assert hub_revision("org/tiny", cache) == commit
    assert hub_revision("org/absent", cache) is None


def test_older_results_without_a_manifest_still_read_and_report(data: Path, tmp_path: Path) -> None:
    results = run_into(tmp_path / "out", data)
    assert Results.model_validate(results).meta.manifest is not None
    del results["meta"]["manifest"]
    typed = Results.model_validate(results)
    assert typed.meta.manifest is None
    from taxpraben.report.tables import configuration
    from taxpraben.report.view import view_of

    labels = [label for label, _ in configuration(view_of(typed))]
    assert "Data hash" in labels and "Data files (sha256)" not in labels


def test_the_report_shows_the_manifest(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    manifest = run_into(out, data, "--limit", "0.5")["meta"]["manifest"]
    report = (out / "report.md").read_text(encoding="utf-8")
    short = manifest["data_files"]["TaxCalc"]["sha256"][:12]
    assert f"TaxCalc {short}" in report and "first 50% per task" in report
    assert f"taxpraben {manifest['taxpraben']['version']}, Python {manifest['python']}" in report
    assert short in (out / "report.html").read_text(encoding="utf-8")

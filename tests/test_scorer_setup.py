"""Unlike scorers are refused, like unlike data (issue 45, item 5).

Every run records its scorer setup in the manifest (``meta.manifest.scorer_setup``: model,
revision or weights' hash, layer, idf, truncation, dtype); ``report`` (the leaderboard) and
``diff`` refuse runs whose setups differ unless ``--force``, which marks them; a scorer other
than the paper's is labelled "non-standard scorer" beside the Overall Average in every report
and in summary.csv. End to end with the tiny scorer models (tests/helpers/tiny_models.py).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taxpraben.cli import build_app
from taxpraben.manifest import comparable_setup, describe_setup, is_paper_scorer, scorer_setup


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "200"})
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, tiny_xlnet_dir: Path, tiny_bart_dir: Path) -> dict[str, Path]:
    """The oracle on two tasks of the sample (one generation), BERTScore at layer 2 and at layer 3."""
    root = tmp_path_factory.mktemp("scorers")
    out = {}
    for layer in ("2", "3"):
        out[layer] = root / f"layer{layer}"
        code, output = invoke("run", "--model", "baseline:oracle", "--data", "sample", "--tasks", "TaxQA,TaxCalc",
                              "--runs", "1", "--no-cache", "--out", str(out[layer]), "--device", "cpu",
                              "--bertscore-model", str(tiny_xlnet_dir), "--bertscore-layer", layer,
                              "--bartscore-model", str(tiny_bart_dir))  # fmt: skip
        assert code == 0, output
    return out


def test_the_manifest_records_the_scorer_setup(runs: dict[str, Path], tiny_xlnet_dir: Path) -> None:
    manifest = json.loads((runs["2"] / "results.json").read_text(encoding="utf-8"))["meta"]["manifest"]
    bert = manifest["scorer_setup"]["bertscore"]
    assert bert["model"] == str(tiny_xlnet_dir) and bert["layer"] == 2 and bert["dtype"] == "float32"
    assert bert["weights_sha256"] == manifest["scorers"]["bertscore"]["weights_sha256"]
    assert len(bert["weights_sha256"]) == 64 and bert["idf"] is False
    assert "device_kind" not in bert  # float32: the device changes nothing beyond rounding
    assert manifest["scorer_setup"]["bartscore"]["max_length"] == 1024
    assert manifest["paper_scorer"] is False


def test_report_refuses_runs_with_different_layers_unless_forced(runs: dict[str, Path], tmp_path: Path) -> None:
    code, output = invoke("report", str(runs["2"]), str(runs["3"]), "--out", str(tmp_path / "lb"))
    assert code == 2, output
    assert "different scorer setups" in output and "layer 2" in output and "layer 3" in output
    assert "pass --force to build the leaderboard anyway" in output
    assert not (tmp_path / "lb" / "leaderboard.md").exists()
    code, output = invoke("report", str(runs["2"]), str(runs["3"]), "--out", str(tmp_path / "lb"), "--force",
                          "--allow-partial", "--resamples", "200")  # fmt: skip
    assert code == 0, output
    md = (tmp_path / "lb" / "leaderboard.md").read_text(encoding="utf-8")
    assert "Forced comparison despite different scorer setups" in md
    assert md.count("not comparable: scorer bartscore") == 2 and "layer 3" in md


def test_diff_refuses_runs_with_different_layers_unless_forced(runs: dict[str, Path], tmp_path: Path) -> None:
    code, output = invoke("diff", str(runs["2"]), str(runs["3"]), "--out", str(tmp_path / "d"))
    assert code == 2, output
    assert "different scorer setups" in output
    assert "pass --force to compare the two runs anyway" in output and "leaderboard" not in output
    code, output = invoke("diff", str(runs["2"]), str(runs["3"]), "--out", str(tmp_path / "d"), "--force",
                          "--resamples", "200")  # fmt: skip
    assert code == 0, output
    assert json.loads((tmp_path / "d" / "diff.json").read_text(encoding="utf-8"))["forced"] is True


def test_one_setup_is_not_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    code, output = invoke("diff", str(runs["2"]), str(runs["2"]), "--out", str(tmp_path / "d"), "--resamples", "200")
    assert code == 0, output


def test_a_non_standard_scorer_is_labelled_beside_the_overall_average(runs: dict[str, Path]) -> None:
    md = (runs["2"] / "report.md").read_text(encoding="utf-8")
    overall = md.split("## Overall Average", 1)[1].split("\n\n", 2)[1]
    assert "non-standard scorer" in overall
    html = (runs["2"] / "report.html").read_text(encoding="utf-8")
    coverage = html.split('id="overall-coverage"', 1)[1].split("</div>", 1)[0]
    assert "non-standard scorer" in coverage
    with open(runs["2"] / "summary.csv", encoding="utf-8", newline="") as fh:
        notes = next(r for r in csv.DictReader(fh) if r["row_kind"] == "overall")["notes"]
    assert "non-standard scorer" in notes
    code, output = invoke("report", str(runs["2"]))
    assert code == 0 and "non-standard scorer" in output, output


# --- the setup and the paper's, as values ------------------------------------------------------------

PAPER_BERT = {"model": "hfl/chinese-xlnet-base", "layer": 5, "idf": False, "rescale_with_baseline": False,
              "max_tokens": None, "dtype": "float32", "available": True, "devices": ["cpu"]}  # fmt: skip
PAPER_BART = {"model": "facebook/bart-large-cnn", "weights": None, "max_length": 1024, "dtype": "float32",
              "available": True, "devices": ["cuda:0"]}  # fmt: skip


def setup_of(**changes: object) -> dict[str, object]:
    return scorer_setup({"bertscore": {**PAPER_BERT, **changes}, "bartscore": PAPER_BART}, {})


def test_the_paper_scorer_and_what_is_not() -> None:
    assert is_paper_scorer(setup_of()) is True
    assert is_paper_scorer(setup_of(model="/models/chinese-xlnet-base")) is True  # README's --local-dir
    assert is_paper_scorer(setup_of(layer=4)) is False
    assert is_paper_scorer(setup_of(model="bert-base-chinese")) is False
    assert is_paper_scorer(setup_of(idf=True)) is False
    assert is_paper_scorer(setup_of(dtype="bf16")) is False
    assert is_paper_scorer({}) is None  # no semantic scorer: nothing to label
    unavailable = scorer_setup({"bertscore": {**PAPER_BERT, "layer": 9, "available": False}}, {})
    assert unavailable == {}


def test_the_device_kind_counts_only_where_the_dtype_is_not_exact() -> None:
    assert "device_kind" not in setup_of()["bertscore"]  # type: ignore[operator]
    bf16 = setup_of(dtype="bf16", devices=["cuda:0", "cuda:1"])["bertscore"]
    assert bf16["device_kind"] == "cuda"  # type: ignore[index]
    assert comparable_setup(setup_of(dtype="bf16", devices=["cpu"])) != comparable_setup(
        setup_of(dtype="bf16", devices=["cuda:0"]))  # fmt: skip
    assert comparable_setup(setup_of(devices=["cpu"])) == comparable_setup(setup_of(devices=["cuda:0"]))


def test_one_checkpoint_in_two_directories_is_one_scorer() -> None:
    revisions = {"bertscore": {"model": "/a/xl", "revision": "/a/xl", "weights_sha256": "ab" * 32}}
    moved = {"bertscore": {"model": "/b/xl", "revision": "/b/xl", "weights_sha256": "ab" * 32}}
    a = scorer_setup({"bertscore": {**PAPER_BERT, "model": "/a/xl"}}, revisions)
    b = scorer_setup({"bertscore": {**PAPER_BERT, "model": "/b/xl"}}, moved)
    assert comparable_setup(a) == comparable_setup(b)
    assert describe_setup(a) == "bertscore /a/xl weights abababababab… layer 5 dtype float32"

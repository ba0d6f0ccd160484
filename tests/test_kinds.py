"""Task kinds: a plugin adds a kind and a metric through the public registration only, a
spec's ``metrics:`` selects what is computed, and no code outside ``kinds/`` branches on
the kind."""

from __future__ import annotations

import ast
import json
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from scipy.stats import kendalltau
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.data.loader import load_data
from taxpraben.kinds import (
    PLUGINS_ENV,
    get_kind,
    kind_label,
    kinds,
    unregister_kind,
    unregister_metric,
)
from taxpraben.results.predictions import Prediction
from taxpraben.scoring import ScoringSettings, score_predictions
from taxpraben.tasks import TaskSpecError, load_registry

SRC = Path(__file__).resolve().parent.parent / "src" / "taxpraben"

#: A plugin as a user would write it: one module, public API only.
PLUGIN = '''
"""A ranking kind: order the options; Kendall's tau against the gold order."""
import re
from itertools import combinations

from taxpraben.kinds import Kind, Metric, register_kind, register_metric


def order(text):
    seen = []
    for letter in re.findall(r"[A-E]", text.upper()):
        if letter not in seen:
            seen.append(letter)
    return seen


def tau(pred, gold):
    rank = {x: i for i, x in enumerate(pred)}
    pairs = list(combinations(gold, 2))
    agree = sum(1 if rank[a] < rank[b] else -1 for a, b in pairs)
    return agree / len(pairs)


class RankingKind(Kind):
    name = "ranking"
    label = "Ranking"
    declared = (Metric("kendall_tau", "Kendall tau", "(tau + 1) / 2 against the gold order", column=80),)

    def prepare(self, spec, record, item, text, failed):
        gold = order(record.answer_text)
        pred = [] if failed else order(text)
        item.extracted = "".join(pred) or None
        if not failed and sorted(pred) != sorted(gold):
            item.status = "format_failure"
        ok = item.status == "ok"
        item.scores = {"kendall_tau": (tau(pred, gold) + 1) / 2 if ok else 0.0}


register_kind(RankingKind())
register_metric("ranking", Metric(
    "top1", "Top-1", "the first option is the gold's first", in_score=False,
    item=lambda item, values: float(bool(item.extracted) and item.extracted[0] == item.gold.split(">")[0]),
))
'''

SPEC = """\
name: TaxRank
name_zh: 排序
description: Order the tax treatments from most to least favourable.
type: ranking
bloom: evaluate
metrics: [kendall_tau, top1]
"""

GOLDS = ["A>B>C>D", "B>A>D>C", "D>C>B>A", "C>A>B>D", "A>C>B>D", "B>D>A>C"]
PREDICTIONS = ["A>B>C>D", "A>B>D>C", "A>B>C>D", "C>A>D>B", "无法排序", "D>B>A>C"]


@pytest.fixture
def ranking_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The plugin module importable, named in $TAXPRABEN_PLUGINS; unregistered afterwards."""
    module = f"toy_ranking_{tmp_path.name.replace('-', '_')}"
    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
    (plugin_dir / f"{module}.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(plugin_dir))
    monkeypatch.setenv(PLUGINS_ENV, module)
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "TaxRank.yaml").write_text(SPEC, encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    rows = [{"id": str(i), "query": f"第{i}题：请排序A、B、C、D。", "answer": g} for i, g in enumerate(GOLDS)]
    (data / "TaxRank.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    try:
        yield tmp_path
    finally:
        unregister_metric("ranking", "top1")
        unregister_kind("ranking")
        sys.modules.pop(module, None)


def expected_tau(pred: str, gold: str) -> float:
    """(tau + 1) / 2 by scipy, on the ranks of the gold's options."""
    p, g = pred.split(">"), gold.split(">")
    value = kendalltau([p.index(x) for x in g], list(range(len(g)))).statistic
    return (value + 1) / 2


def test_a_plugin_kind_and_metric_are_scored_grouped_and_reported(ranking_plugin: Path) -> None:
    root = ranking_plugin
    preds = root / "preds.jsonl"
    preds.write_text(
        "".join(json.dumps({"task": "TaxRank", "id": str(i), "run": run, "prediction": p}, ensure_ascii=False) + "\n"
                for run in range(2) for i, p in enumerate(PREDICTIONS)),
        encoding="utf-8",
    )
    out = root / "out"
    res = CliRunner().invoke(app, ["score", "--data", str(root / "data"), "--predictions", str(preds),
                                   "--task-dir", str(root / "specs"), "--out", str(out), "--no-semantic"])
    assert res.exit_code == 0, res.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    task = results["tasks"]["TaxRank"]
    assert task["type"] == "ranking"
    taus = [expected_tau(p, g) if ">" in p else 0.0 for p, g in zip(PREDICTIONS, GOLDS, strict=True)]
    top1 = [float(">" in p and p[0] == g[0]) for p, g in zip(PREDICTIONS, GOLDS, strict=True)]
    assert list(task["metrics"]) == ["kendall_tau", "top1"]
    assert task["metrics"]["kendall_tau"]["mean"] == pytest.approx(sum(taus) / len(taus))
    assert task["metrics"]["top1"]["mean"] == pytest.approx(sum(top1) / len(top1))
    # top1 is reported but not part of the score: the score is the tau alone.
    assert task["score"]["mean"] == pytest.approx(sum(taus) / len(taus))
    assert task["format_failure_rate"]["mean"] == pytest.approx(1 / 6)
    assert results["groups"]["type"]["ranking"]["mean"] == pytest.approx(task["score"]["mean"])
    assert results["overall"]["mean"] == pytest.approx(task["score"]["mean"])
    lines = [json.loads(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["extracted"] for line in lines[:6]] == ["ABCD", "ABDC", "ABCD", "CADB", None, "DBAC"]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Kendall tau" in report and "Ranking" in report


def test_a_spec_cannot_select_a_metric_its_kind_does_not_declare(ranking_plugin: Path) -> None:
    (ranking_plugin / "specs" / "TaxRank.yaml").write_text(SPEC.replace("top1]", "rouge_l]"), encoding="utf-8")
    with pytest.raises(TaskSpecError, match=r"key metrics: \['rouge_l'\] do not apply to a ranking task"):
        load_registry([ranking_plugin / "specs"], use_env=False)


def test_an_unknown_kind_names_the_known_ones(tmp_path: Path) -> None:
    (tmp_path / "TaxRank.yaml").write_text(SPEC, encoding="utf-8")
    with pytest.raises(TaskSpecError, match=r"key type: unknown task type 'ranking'.*classification, generation"):
        load_registry([tmp_path], use_env=False)


def test_a_plugin_that_fails_to_import_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PLUGINS_ENV, "no_such_taxpraben_plugin")
    with pytest.raises(TaskSpecError, match="no_such_taxpraben_plugin"):
        load_registry(use_env=False)


def test_a_plugin_installed_with_an_entry_point_is_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution declaring ``[taxpraben.plugins]`` on sys.path: its module is imported
    before the specs are read (taxpraben.kinds.entry_points reads the entry point), and a spec of
    its kind loads."""
    module = f"toy_ranking_ep_{tmp_path.name.replace('-', '_')}"
    site = tmp_path / "site"
    (site / "toy_ranking-1.0.dist-info").mkdir(parents=True)
    (site / f"{module}.py").write_text(PLUGIN, encoding="utf-8")
    (site / "toy_ranking-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-ranking\n", "utf-8")
    (site / "toy_ranking-1.0.dist-info" / "entry_points.txt").write_text(
        f"[taxpraben.plugins]\nranking = {module}:unused [extra]\n", encoding="utf-8")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "TaxRank.yaml").write_text(SPEC, encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv(PLUGINS_ENV, raising=False)
    try:
        registry = load_registry([tmp_path / "specs"], use_env=False)
        assert module in sys.modules
        assert registry.get("TaxRank").type == "ranking" == get_kind("ranking").name
    finally:
        unregister_metric("ranking", "top1")
        unregister_kind("ranking")
        sys.modules.pop(module, None)


def test_an_entry_point_that_names_no_module_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bad-1.0.dist-info").mkdir()
    (tmp_path / "bad-1.0.dist-info" / "entry_points.txt").write_text("[taxpraben.plugins]\nx = not a module\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(PLUGINS_ENV, raising=False)
    with pytest.raises(TaskSpecError, match="entry point 'not a module' names no module"):
        load_registry(use_env=False)


def test_builtin_kinds_in_results_order_with_labels() -> None:
    assert [k.name for k in kinds()][:4] == ["classification", "generation", "structured", "mixed"]
    assert kind_label("mixed") == "Mixed"
    assert kind_label("some_plugin_kind") == "Some plugin kind"


def test_the_spec_metrics_select_what_is_computed(tmp_path: Path, tiny_xlnet_dir: Path) -> None:
    """A generation task that selects only BERTScore needs no BARTScore model, reports only
    BERTScore, and its item score is the BERTScore."""
    bundled = load_registry(use_env=False)
    spec_text = (SRC / "tasks" / "specs" / "TaxQA.yaml").read_text(encoding="utf-8")
    spec_text = spec_text.replace("name: TaxQA", "name: TaxQABert").replace(
        "metrics: [bertscore, bartscore]", "metrics: [bertscore]")
    assert "metrics: [bertscore]" in spec_text
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "TaxQABert.yaml").write_text(spec_text, encoding="utf-8")
    registry = load_registry([tmp_path / "specs"], use_env=False)
    assert get_kind("generation").scorers(registry["TaxQABert"]) == {"bertscore"}
    assert get_kind("generation").scorers(bundled["TaxQA"]) == {"bertscore", "bartscore"}
    sample = load_data("sample", bundled, tasks=["TaxQA"])
    data = tmp_path / "data"
    data.mkdir()
    source = Path(next(iter(sample.records["TaxQA"])).source)
    (data / "TaxQABert.jsonl").write_bytes(source.read_bytes())
    loaded = load_data(data, registry, tasks=["TaxQABert"])
    recs = loaded.records["TaxQABert"]
    preds = [Prediction("TaxQABert", r.id, 0, r.answer_text[: len(r.answer_text) // 2]) for r in recs]
    settings = ScoringSettings(bertscore_model=str(tiny_xlnet_dir), bertscore_layer=2,
                               bartscore_model=str(tmp_path / "no-bart-here"), device="cpu", bootstrap=0)
    scored = score_predictions(loaded, preds, registry, settings)
    task = scored.results["tasks"]["TaxQABert"]
    assert task["status"] == "ok"  # the BARTScore model (absent) was never needed
    assert list(task["metrics"]) == ["bertscore"]
    for line in scored.samples:
        assert list(line["scores"]) == ["bertscore"]
        assert line["score"] == line["scores"]["bertscore"]
    assert task["score"]["mean"] == pytest.approx(task["metrics"]["bertscore"]["mean"])


# ---------------------------------------------------------------------------- the house rules

KIND_NAMES = {"classification", "generation", "structured", "mixed"}


def _kind_branches(path: Path, root: Path = SRC) -> list[str]:
    """Comparisons with a kind name, or with a spec's ``type``, in one module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        for side in (node.left, *node.comparators):
            elts = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            names = {e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            is_type = (isinstance(side, ast.Attribute) and side.attr == "type"
                       and ast.unparse(side.value).endswith("spec"))
            if names & KIND_NAMES or is_type:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
                break
    return found


def test_no_branch_on_the_kind_outside_kinds() -> None:
    offenders = [
        hit
        for path in sorted(SRC.rglob("*.py"))
        if "kinds" not in path.relative_to(SRC).parts
        for hit in _kind_branches(path)
    ]
    assert offenders == []


def test_the_branch_finder_finds_branches(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    sample = textwrap.dedent("""
        def f(spec, kind):
            if spec.type == "mixed":
                return 1
            return kind in ("generation", "other")
    """)
    probe.write_text(sample, encoding="utf-8")
    assert len(_kind_branches(probe, tmp_path)) == 2


def test_the_metric_example_of_the_architecture_doc_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/architecture.md's plugin metric, run as written: selected by a spec, computed per
    item, averaged per task."""
    doc = (SRC.parent.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    match = re.search(r"```python\n(.*?)```", doc, re.S)
    assert match is not None
    module = f"mymetrics_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(match.group(1), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(PLUGINS_ENV, module)
    spec_text = (SRC / "tasks" / "specs" / "TaxQA.yaml").read_text(encoding="utf-8")
    spec_text = spec_text.replace("name: TaxQA", "name: TaxQALen").replace(
        "metrics: [bertscore, bartscore]", "metrics: [bertscore, bartscore, length_ratio]")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "TaxQALen.yaml").write_text(spec_text, encoding="utf-8")
    try:
        registry = load_registry([tmp_path / "specs"], use_env=False)
        rows = [{"id": str(i), "query": f"问题{i}", "answer": "增值税一般纳税人适用13%税率。"} for i in range(4)]
        (tmp_path / "data").mkdir()
        (tmp_path / "data" / "TaxQALen.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        loaded = load_data(tmp_path / "data", registry, tasks=["TaxQALen"])
        answers = ["增值税", "增值税一般纳税人适用13%税率。", "", "增值税一般纳税人适用13%税率，小规模纳税人3%。"]
        preds = [Prediction("TaxQALen", str(i), 0, a) for i, a in enumerate(answers)]
        scored = score_predictions(loaded, preds, registry, ScoringSettings(semantic=False, bootstrap=0))
        gold = len(rows[0]["answer"])
        expected = [min(1.0, len(a) / gold) for a in answers]
        assert scored.results["tasks"]["TaxQALen"]["metrics"]["length_ratio"]["mean"] == pytest.approx(
            sum(expected) / len(expected))
    finally:
        unregister_metric("generation", "length_ratio")
        sys.modules.pop(module, None)

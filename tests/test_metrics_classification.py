"""Classification metrics against sklearn, and the vectorised bootstrap against sklearn too."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, f1_score

from taxpraben.metrics.classification import (
    MISSING_LABEL,
    bootstrap_acc_f1,
    classification_metrics,
    encode_labels,
)

LABELS = ["增值税", "企业所得税", "个人所得税", "印花税", "土地增值税", MISSING_LABEL]


def test_known_values() -> None:
    golds = ["增值税", "增值税", "企业所得税", "印花税"]
    preds = ["增值税", MISSING_LABEL, "企业所得税", "增值税"]
    m = classification_metrics(golds, preds)
    assert m["acc"] == pytest.approx(0.5)
    # per class (labels = set(golds)): 增值税 P=1/2 R=1/2 F=1/2 (support 2);
    # 企业所得税 F=1 (support 1); 印花税 F=0 (support 1) -> weighted (2*0.5+1+0)/4
    assert m["f1"] == pytest.approx(0.5)
    assert m["macro_f1"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert m["missing_rate"] == pytest.approx(0.25)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(LABELS[:-1]), st.sampled_from(LABELS)), min_size=1, max_size=60))
def test_equals_sklearn_with_labels_from_golds(pairs: list[tuple[str, str]]) -> None:
    golds = [g for g, _ in pairs]
    preds = [p for _, p in pairs]
    labels = list(set(golds))
    m = classification_metrics(golds, preds)
    assert abs(m["acc"] - accuracy_score(golds, preds)) < 1e-12
    assert abs(m["f1"] - f1_score(golds, preds, labels=labels, average="weighted", zero_division=0)) < 1e-12
    assert abs(m["macro_f1"] - f1_score(golds, preds, labels=labels, average="macro", zero_division=0)) < 1e-12


def test_bootstrap_equals_sklearn_on_each_resample() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 40))
        golds = list(rng.choice(LABELS[:-1], size=n))
        preds = list(rng.choice(LABELS, size=n))
        g, p, k = encode_labels(golds, preds)
        idx = rng.integers(0, n, size=(25, n))
        acc, f1 = bootstrap_acc_f1(g, p, k, idx)
        for b in range(idx.shape[0]):
            gb = [golds[i] for i in idx[b]]
            pb = [preds[i] for i in idx[b]]
            expected = f1_score(gb, pb, labels=list(set(gb)), average="weighted", zero_division=0)
            assert abs(f1[b] - expected) < 1e-12
            assert abs(acc[b] - accuracy_score(gb, pb)) < 1e-12


def test_rejects_mismatched_lengths() -> None:
    with pytest.raises(ValueError):
        classification_metrics(["a"], [])


MANY = [f"类{i}" for i in range(30)] + [MISSING_LABEL]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(MANY[:-1]), st.sampled_from(MANY)), min_size=1, max_size=200))
def test_equals_sklearn_to_the_last_bit(pairs: list[tuple[str, str]]) -> None:
    """The numpy point estimates are sklearn's exactly (the results must not move a bit)."""
    golds = [g for g, _ in pairs]
    preds = [p for _, p in pairs]
    labels = sorted(set(golds))
    m = classification_metrics(golds, preds)
    assert m["acc"] == float(accuracy_score(golds, preds))
    assert m["f1"] == float(f1_score(golds, preds, labels=labels, average="weighted", zero_division=0))
    assert m["macro_f1"] == float(f1_score(golds, preds, labels=labels, average="macro", zero_division=0))


def test_reading_a_classification_answer_does_not_import_numpy() -> None:
    """A reader needs only MISSING_LABEL of this module: reading an answer (in a fresh
    process, as the reading worker does) must not import numpy (50-90 ms)."""
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(__file__).resolve().parents[1] / "src")
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from taxpraben.data.checks import check_record\n"
        "from taxpraben.scoring.items import prepare_item\n"
        "from taxpraben.tasks import load_registry\n"
        f"path = Path({str(Path(__file__).parent / 'corpus' / 'classification.jsonl')!r})\n"
        "case = json.loads(path.read_text(encoding='utf-8').splitlines()[0])\n"
        "spec = load_registry(use_env=False)[case['task']]\n"
        "record, _ = check_record(case['record'], spec, path, 1, 'line')\n"
        "item = prepare_item(spec, record, 0, case['output'], None)\n"
        "assert item.status == 'ok', item.status\n"
        "print('numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": src, "PATH": ""})
    assert out.stdout.strip() == "False"

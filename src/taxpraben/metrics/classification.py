"""Classification metrics exactly as TaxBen computes them.

Point estimates are scikit-learn's with ``labels = set(golds)`` (computed here with numpy, to
the last bit; tests compare them with sklearn): a prediction outside the
gold label set (including the label "missing" for an unparseable answer) counts as wrong
for its gold class and adds no class of its own. The bootstrap needs the same weighted F1
thousands of times, so :func:`bootstrap_acc_f1` computes it vectorised with numpy; a test
holds it equal to sklearn on random label sets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where it is used: a reader needs only MISSING_LABEL
    import numpy as np

MISSING_LABEL = "missing"


def classification_metrics(golds: Sequence[str], preds: Sequence[str]) -> dict[str, float]:
    """ACC, weighted F1, Macro-F1 (as sklearn with ``labels = sorted(set(golds))``,
    ``zero_division=0``) and the missing rate.

    Computed with numpy rather than by calling scikit-learn: importing sklearn (and scipy)
    costs about 2.3 s and 200 MB at the end of every run, for three sums. Per label,
    F1 = 2 TP / (support + predicted), in float64 as sklearn divides; the weighted mean is
    ``sum(F1 * support) / sum(support)`` (``np.average``) and the macro mean ``F1.mean()``,
    so the figures are sklearn's to the last bit (``tests/test_metrics_classification.py``
    holds them equal on random label sets).
    """
    import numpy as np

    if len(golds) != len(preds):
        raise ValueError(f"{len(golds)} golds but {len(preds)} predictions")
    if not golds:
        raise ValueError("no items to score")
    gold, pred, k = encode_labels(golds, preds)
    support = np.bincount(gold, minlength=k)
    predicted = np.bincount(pred, minlength=k + 1)[:k]
    hit = gold == pred
    tp = np.bincount(gold[hit], minlength=k)
    denom = support.astype(np.float64) + predicted.astype(np.float64)
    f1 = np.divide(2.0 * tp, denom, out=np.zeros(k), where=denom > 0)
    return {
        "acc": float(hit.mean()),
        "f1": float(np.average(f1, weights=support)),
        "macro_f1": float(f1.mean()),
        "missing_rate": sum(p == MISSING_LABEL for p in preds) / len(preds),
    }


def encode_labels(golds: Sequence[str], preds: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Integer codes: gold labels 0..K-1 (sorted); any prediction outside them is K."""
    import numpy as np

    labels = sorted(set(golds))
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    gold_codes = np.fromiter((index[g] for g in golds), dtype=np.int64, count=len(golds))
    pred_codes = np.fromiter((index.get(p, k) for p in preds), dtype=np.int64, count=len(preds))
    return gold_codes, pred_codes, k


def bootstrap_acc_f1(gold_codes: np.ndarray, pred_codes: np.ndarray, k: int, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and weighted F1 of each resample ``idx[b]`` (shape (B, n)) at once.

    Weighted F1 over the resample's own gold labels equals weighting by support, and a
    label with no support has weight 0, so all K labels can be counted together.
    """
    import numpy as np

    g = gold_codes[idx]  # (B, n)
    p = pred_codes[idx]
    b, n = g.shape
    acc = (g == p).mean(axis=1)
    offsets = (np.arange(b) * (k + 1))[:, None]
    size = b * (k + 1)
    support = np.bincount((g + offsets).ravel(), minlength=size).reshape(b, k + 1)[:, :k]
    predicted = np.bincount((p + offsets).ravel(), minlength=size).reshape(b, k + 1)[:, :k]
    hit = g == p
    tp = np.bincount((g + offsets)[hit], minlength=size).reshape(b, k + 1)[:, :k]
    denom = support + predicted
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = np.where(denom > 0, 2.0 * tp / denom, 0.0)
    weighted = (f1 * support).sum(axis=1) / n
    return acc, weighted

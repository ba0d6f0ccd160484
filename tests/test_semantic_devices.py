"""Scoring on several devices: the split into bins and the merge, on two CPU workers.

``device="cpu,cpu"`` takes the same path as ``cuda:0,cuda:1`` (the work one device would do,
shared out whole: BERTScore's chunks, BARTScore's batches; one thread and one budget per
device; merge); only the device names differ. The scores are compared with one device's, to
the bit: every text and pair is computed in the same batch as on one device.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from helpers.tiny_models import tax_paragraph
from taxpraben.data.loader import load_data
from taxpraben.metrics import bertscore
from taxpraben.metrics.bartscore import BartScorer
from taxpraben.metrics.bertscore import PRF, BertScorer
from taxpraben.results.predictions import Prediction
from taxpraben.scoring import ScoringSettings, build_scorers, score_predictions
from taxpraben.tasks import load_registry

pytest_plugins = ["helpers.tiny_models"]  # the tiny_xlnet_dir and tiny_bart_dir fixtures

REG = load_registry(use_env=False)


@pytest.fixture(scope="module")
def run_pairs() -> tuple[list[str], list[str]]:
    """Five runs' predictions against 12 golds of varied length, as the pipeline sends them
    (golds repeat across runs; one prediction repeats a gold; an empty prediction)."""
    rng = random.Random(7)
    golds = [tax_paragraph(rng, rng.randint(1, 5)) for _ in range(12)]
    cands = [tax_paragraph(rng, rng.randint(1, 5)) for _ in range(60)]
    cands[3] = golds[3]
    cands[10] = ""
    return cands, [golds[i % 12] for i in range(60)]


def _rel_diff(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(a), abs(b))


def _prf_diff(a: list[PRF], b: list[PRF]) -> float:
    return max(
        max(_rel_diff(x.precision, y.precision), _rel_diff(x.recall, y.recall), _rel_diff(x.f1, y.f1))
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("idf", [False, True])
@pytest.mark.parametrize("chunk_tokens", [1 << 18, 300])
def test_bertscore_on_several_workers_equals_one_device_to_the_bit(
    tiny_xlnet_dir: Path, run_pairs: tuple[list[str], list[str]], idf: bool, chunk_tokens: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cands, refs = run_pairs
    monkeypatch.setattr(bertscore, "_CHUNK_TOKENS", chunk_tokens)  # one chunk, or many to share
    one = BertScorer(str(tiny_xlnet_dir), 2, idf=idf, device="cpu").score(cands, refs)
    # idf weights come from every reference of the call, not from each device's share.
    for devices in ("cpu,cpu", "cpu,cpu,cpu"):
        assert BertScorer(str(tiny_xlnet_dir), 2, idf=idf, device=devices).score(cands, refs) == one
    assert one[10] == PRF(0.0, 0.0, 0.0) and abs(one[3].f1 - 1) < 1e-6


def test_bertscore_on_two_workers_is_bit_identical_when_batching_cannot_differ(
    tiny_xlnet_dir: Path, run_pairs: tuple[list[str], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    cands, refs = run_pairs
    monkeypatch.setattr(bertscore, "_MATCH_ELEMENTS", 1)  # one pair per matching batch
    single = BertScorer(str(tiny_xlnet_dir), 3, batch_size=1, device="cpu")
    each_alone = [single.score([c], [r])[0] for c, r in zip(cands, refs, strict=True)]
    three = BertScorer(str(tiny_xlnet_dir), 3, batch_size=1, device="cpu,cpu,cpu").score(cands, refs)
    assert three == each_alone
    assert single.score(cands, refs) == each_alone


def test_bertscore_chunks_share_the_work_and_keep_each_gold_on_one_device(
    tiny_xlnet_dir: Path, run_pairs: tuple[list[str], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    cands, refs = run_pairs
    monkeypatch.setattr(bertscore, "_CHUNK_TOKENS", 300)  # several chunks to share out
    seen: list[tuple[int, list[tuple[str, str]], list[int]]] = []
    score_chunks = BertScorer._score_chunks

    def spy(self: BertScorer, pairs: list[tuple[str, str]], chunks: list, *args: object) -> list[PRF]:
        loads = [len(chunk_texts) for _, chunk_texts in chunks]
        seen.append((id(self), [pairs[k] for chunk_pairs, _ in chunks for k in chunk_pairs], loads))
        return score_chunks(self, pairs, chunks, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(BertScorer, "_score_chunks", spy)
    scorer = BertScorer(str(tiny_xlnet_dir), 2, device="cpu,cpu")
    scorer.score(cands, refs)
    assert len({worker for worker, _, _ in seen}) == 2  # two workers, one share each
    (_, first, _), (_, second, _) = seen
    assert first and second  # both have work
    distinct = set(zip([c.strip() for c in cands], [r.strip() for r in refs], strict=True))
    assert sorted(first + second) == sorted(distinct)  # every distinct pair exactly once
    assert not {r for _, r in first} & {r for _, r in second}  # a gold is encoded on one device
    tokens = scorer._loaded.tokenizer

    def load(pairs: list[tuple[str, str]]) -> int:
        return sum(len(tokens(t)["input_ids"]) for t in {t for pair in pairs for t in pair})

    # Balanced by tokens: the two loads differ by at most the heaviest chunk's.
    heaviest = max(load([p for p in distinct if p[1] == r]) for r in {r for _, r in distinct})
    assert abs(load(first) - load(second)) <= max(300, heaviest)


def test_bartscore_on_two_workers_equals_one_device(
    tiny_bart_dir: Path, run_pairs: tuple[list[str], list[str]]
) -> None:
    cands, refs = run_pairs
    for batch_size in (2, 8):
        one = BartScorer(str(tiny_bart_dir), batch_size=batch_size, device="cpu").score(cands, refs)
        two = BartScorer(str(tiny_bart_dir), batch_size=batch_size, device="cpu,cpu").score(cands, refs)
        assert two == one  # the same batches as on one device, shared out whole
    single = BartScorer(str(tiny_bart_dir), batch_size=1, device="cpu")
    each_alone = [single.score([c], [r])[0] for c, r in zip(cands, refs, strict=True)]
    assert BartScorer(str(tiny_bart_dir), batch_size=1, device="cpu,cpu").score(cands, refs) == each_alone


def test_each_device_has_its_own_budget_and_records_the_devices(tiny_bart_dir: Path) -> None:
    scorer = BartScorer(str(tiny_bart_dir), batch_size=4, device="cpu,cpu")
    assert len(scorer._others) == 1 and scorer._others[0]._budget is None
    scorer.score(["增值税", "消费税", "印花税"], ["个人所得税", "契税", "房产税"])
    assert scorer._budget is not None and scorer._others[0]._budget is not None
    assert scorer._budget is not scorer._others[0]._budget
    assert scorer.describe()["devices"] == ["cpu", "cpu"]
    assert scorer.describe()["device"] == "cpu,cpu"
    assert BartScorer(str(tiny_bart_dir), device="cpu").describe()["devices"] == ["cpu"]


def test_results_on_two_workers_equal_one_device_and_name_the_devices(
    tiny_xlnet_dir: Path, tiny_bart_dir: Path
) -> None:
    semantic_tasks = sorted(t for t in REG if REG[t].type in ("generation", "mixed"))
    data = load_data("sample", REG, tasks=semantic_tasks)
    # Two runs of truncated golds: partial overlaps, so that the scores are not all 1.
    preds = [
        Prediction(task, rec.id, run, rec.answer_text[: 20 + 7 * run])
        for run in range(2)
        for task, recs in data.records.items()
        for rec in recs
    ]
    scored = {}
    for device in ("cpu", "cpu,cpu"):
        settings = ScoringSettings(bertscore_model=str(tiny_xlnet_dir), bertscore_layer=2,
                                   bartscore_model=str(tiny_bart_dir), device=device, bootstrap=0)  # fmt: skip
        scored[device] = score_predictions(data, preds, REG, settings)
    one, two = scored["cpu"], scored["cpu,cpu"]
    for metric in ("bertscore", "bartscore"):
        assert one.results["meta"]["scorers"][metric]["devices"] == ["cpu"]
        assert two.results["meta"]["scorers"][metric]["devices"] == ["cpu", "cpu"]
    assert len(one.samples) == len(two.samples) == len(preds)
    compared = 0
    for a, b in zip(one.samples, two.samples, strict=True):
        assert (a["task"], a["id"], a["run"], a["status"]) == (b["task"], b["id"], b["run"], b["status"])
        assert a["scores"].keys() == b["scores"].keys()
        for key, value in a["scores"].items():
            if isinstance(value, float):
                assert value == b["scores"][key], (a["task"], a["id"], key)
                compared += 1
    assert compared >= len(preds)  # every item has at least one semantic score
    for task in semantic_tasks:
        assert one.results["tasks"][task]["score"] == two.results["tasks"][task]["score"]


def test_a_device_this_machine_lacks_leaves_the_metric_not_computed_with_the_reason(
    tiny_xlnet_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    settings = ScoringSettings(bertscore_model=str(tiny_xlnet_dir), device="cuda:0,cuda:1")
    scorers = build_scorers(settings, {"bertscore"})
    assert scorers.bert is None
    assert "asks for CUDA, but torch sees no CUDA device" in scorers.unavailable["bertscore"]

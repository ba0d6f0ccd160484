"""BERTScore and BARTScore against their reference implementations, on tiny local models."""

from __future__ import annotations

import math
import random
import socket
from pathlib import Path

import pytest
import torch

from helpers.tiny_models import XLNET_LAYERS, tax_paragraph
from taxpraben.metrics import bartscore, bertscore, scorer_models
from taxpraben.metrics.bartscore import BartScorer, normalize_bartscore
from taxpraben.metrics.bertscore import PRF, BertScorer, bertscore_f1_by_item
from taxpraben.metrics.scorer_models import ScorerUnavailable

pytest_plugins = ["helpers.tiny_models"]  # the tiny_xlnet_dir and tiny_bart_dir fixtures


def _texts(seed: int, n: int, max_sentences: int = 4) -> list[str]:
    rng = random.Random(seed)
    return [tax_paragraph(rng, rng.randint(1, max_sentences)) for _ in range(n)]


@pytest.fixture(scope="module")
def pairs() -> tuple[list[str], list[str]]:
    """Candidates and references of varied length, with an identity pair and ASCII mixed in."""
    cands = [*_texts(1, 24), "VAT 3% OK", "税"]
    refs = [*_texts(2, 24), "VAT 13% ID", "税额"]
    cands[5] = refs[5]
    return cands, refs


def _reference_bertscore(
    model_dir: Path, layer: int, cands: list[str], refs: list[str], **kwargs: object
) -> list[tuple[float, float, float]]:
    from bert_score import BERTScorer

    scorer = BERTScorer(
        model_type=str(model_dir), num_layers=layer, device="cpu", nthreads=0, **kwargs
    )
    tokenizer = scorer._tokenizer
    # bert_score 0.3.13 on transformers 5: the model_max_length is "infinite" and overflows,
    # and its empty-text path calls a method the tokenizer no longer has.
    if tokenizer.model_max_length > 10**6:
        tokenizer.model_max_length = 10**6
    tokenizer.build_inputs_with_special_tokens = lambda ids: tokenizer("")["input_ids"]
    if kwargs.get("idf"):
        scorer.compute_idf(sorted(set(refs)))
    p, r, f = scorer.score(cands, refs, batch_size=7)
    return list(zip(p.tolist(), r.tolist(), f.tolist(), strict=True))


def _max_diff(ours: list[PRF], ref: list[tuple[float, float, float]]) -> float:
    return max(
        max(abs(o.precision - p), abs(o.recall - r), abs(o.f1 - f))
        for o, (p, r, f) in zip(ours, ref, strict=True)
    )


# --------------------------------------------------------------------------- BERTScore


@pytest.mark.parametrize("layer", [0, 2, XLNET_LAYERS])
def test_bertscore_equals_bert_score_package(
    tiny_xlnet_dir: Path, pairs: tuple[list[str], list[str]], layer: int
) -> None:
    cands, refs = pairs
    ours = BertScorer(str(tiny_xlnet_dir), layer, device="cpu", batch_size=5).score(cands, refs)
    assert _max_diff(ours, _reference_bertscore(tiny_xlnet_dir, layer, cands, refs)) < 1e-6


def test_five_runs_in_one_call_equal_bert_score_per_run(tiny_xlnet_dir: Path) -> None:
    golds = _texts(3, 10)
    runs = [_texts(10 + run, 10) for run in range(5)]
    runs[1][:5] = runs[0][:5]  # greedy runs repeat themselves
    runs[4] = list(golds)
    ours = BertScorer(str(tiny_xlnet_dir), 3, device="cpu").score(
        [p for run in runs for p in run], golds * 5
    )
    expected = [row for run in runs for row in _reference_bertscore(tiny_xlnet_dir, 3, run, golds)]
    assert _max_diff(ours, expected) < 1e-6
    assert all(abs(s.f1 - 1) < 1e-6 for s in ours[40:])


def test_empty_texts_score_zero_like_bert_score(tiny_xlnet_dir: Path) -> None:
    cands = ["", "  ", "增值税", "增值税专用发票"]
    refs = ["增值税", "税", "", "增值税专用发票"]
    ours = BertScorer(str(tiny_xlnet_dir), 2, device="cpu").score(cands, refs)
    assert ours[:3] == [PRF(0.0, 0.0, 0.0)] * 3
    assert _max_diff(ours, _reference_bertscore(tiny_xlnet_dir, 2, cands, refs)) < 1e-6


def test_max_tokens_truncates_like_bert_score(
    tiny_xlnet_dir: Path, pairs: tuple[list[str], list[str]]
) -> None:
    from bert_score import BERTScorer

    cands, refs = pairs
    ours = BertScorer(str(tiny_xlnet_dir), 2, device="cpu", max_tokens=16).score(cands, refs)
    scorer = BERTScorer(model_type=str(tiny_xlnet_dir), num_layers=2, device="cpu")
    scorer._tokenizer.model_max_length = 16
    p, r, f = scorer.score(cands, refs)
    assert _max_diff(ours, list(zip(p.tolist(), r.tolist(), f.tolist(), strict=True))) < 1e-6
    untruncated = BertScorer(str(tiny_xlnet_dir), 2, device="cpu").score(cands, refs)
    assert _max_diff(ours, [(s.precision, s.recall, s.f1) for s in untruncated]) > 1e-3


def test_idf_weights_equal_bert_score(
    tiny_xlnet_dir: Path, pairs: tuple[list[str], list[str]]
) -> None:
    cands, refs = pairs
    ours = BertScorer(str(tiny_xlnet_dir), 2, idf=True, device="cpu").score(cands, refs)
    expected = _reference_bertscore(tiny_xlnet_dir, 2, cands, refs, idf=True)
    assert _max_diff(ours, expected) < 1e-6


def test_identity_pairs_score_one(tiny_xlnet_dir: Path) -> None:
    texts = [*_texts(4, 8), "VAT", "根据《税收征收管理法》第25条"]
    scores = BertScorer(str(tiny_xlnet_dir), XLNET_LAYERS, device="cpu").score(texts, texts)
    for s in scores:
        assert abs(s.precision - 1) < 1e-6 and abs(s.recall - 1) < 1e-6 and abs(s.f1 - 1) < 1e-6


def test_dedupe_batching_and_chunking_change_no_value(
    tiny_xlnet_dir: Path, pairs: tuple[list[str], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    cands, refs = pairs
    model = str(tiny_xlnet_dir)
    bulk = BertScorer(model, 3, device="cpu", batch_size=32).score(cands * 3, refs * 3)
    one_by_one = [
        BertScorer(model, 3, device="cpu").score([c], [r])[0]
        for c, r in zip(cands, refs, strict=True)
    ]
    monkeypatch.setattr(bertscore, "_CHUNK_TOKENS", 40)  # many small chunks
    monkeypatch.setattr(bertscore, "_MATCH_ELEMENTS", 1)  # one pair per matching batch
    chunked = BertScorer(model, 3, device="cpu", batch_size=1).score(cands, refs)
    as_rows = [(s.precision, s.recall, s.f1) for s in one_by_one]
    assert _max_diff(bulk, as_rows * 3) < 1e-6
    assert _max_diff(chunked, as_rows) < 1e-6
    assert bulk[: len(cands)] == bulk[len(cands) : 2 * len(cands)]  # repeats are the same object


def test_progress_bar_does_not_change_scores(
    tiny_xlnet_dir: Path, pairs: tuple[list[str], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    cands, refs = pairs
    plain = BertScorer(str(tiny_xlnet_dir), 1, device="cpu").score(cands, refs)
    monkeypatch.setattr(scorer_models, "_PROGRESS_MIN_TEXTS", 0)
    shown = BertScorer(str(tiny_xlnet_dir), 1, device="cpu", progress=True).score(cands, refs)
    assert shown == plain


def test_model_loads_once_per_process(tiny_xlnet_dir: Path) -> None:
    a = BertScorer(str(tiny_xlnet_dir), 2, device="cpu")
    b = BertScorer(str(tiny_xlnet_dir), 2, idf=True, device="cpu")
    c = BertScorer(str(tiny_xlnet_dir), 3, device="cpu")
    assert a._loaded is b._loaded
    assert a._loaded is not c._loaded
    assert len(a._loaded.encoder.layer) == 2  # only the needed blocks run


def test_bertscore_rejects_bad_input(tiny_xlnet_dir: Path) -> None:
    scorer = BertScorer(str(tiny_xlnet_dir), 1, device="cpu")
    assert scorer.score([], []) == []
    with pytest.raises(ValueError, match="pairs must align"):
        scorer.score(["a"], [])
    with pytest.raises(ValueError, match="out of range"):
        BertScorer(str(tiny_xlnet_dir), XLNET_LAYERS + 1, device="cpu")


def test_describe_and_from_env(tiny_xlnet_dir: Path) -> None:
    scorer = BertScorer.from_env(
        {"TAXPRABEN_BERTSCORE_MODEL": str(tiny_xlnet_dir), "TAXPRABEN_BERTSCORE_LAYER": "3"},
        device="cpu",
        max_tokens=64,
    )
    info = scorer.describe()
    assert {k: info[k] for k in ("model", "layer", "idf", "max_tokens")} == {
        "model": str(tiny_xlnet_dir),
        "layer": 3,
        "idf": False,
        "max_tokens": 64,
    }
    assert info["rescale_with_baseline"] is False


def test_f1_by_item_averages_aspects(tiny_xlnet_dir: Path) -> None:
    scorer = BertScorer(str(tiny_xlnet_dir), 2, device="cpu")
    items = [[("风险一", "风险一"), ("", "风险二")], [("企业所得税", "个人所得税")], []]
    by_item = bertscore_f1_by_item(scorer, items)
    single = scorer.score(["企业所得税"], ["个人所得税"])[0].f1
    assert by_item[0] == pytest.approx(0.5, abs=1e-6)
    assert by_item[1] == pytest.approx(single, abs=1e-7)
    assert by_item[2] == 0.0


# --------------------------------------------------------------------------- availability


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the network was touched")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.mark.usefixtures("no_network")
def test_missing_local_directory_is_unavailable_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(ScorerUnavailable) as info:
        BertScorer(str(tmp_path / "chinese-xlnet-base"), device="cpu")
    message = str(info.value)
    assert "no such directory" in message
    assert "--bertscore-model" in message and "TAXPRABEN_BERTSCORE_MODEL" in message


@pytest.mark.usefixtures("no_network")
def test_offline_hub_id_is_unavailable_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ScorerUnavailable) as info:
        BartScorer("taxpraben-tests/no-such-model", device="cpu")
    message = str(info.value)
    assert "taxpraben-tests/no-such-model" in message and "HF_HUB_OFFLINE" in message
    assert "hf download taxpraben-tests/no-such-model" in message


@pytest.mark.usefixtures("no_network")
def test_directory_without_a_model_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScorerUnavailable, match="BERTScore model"):
        BertScorer(str(tmp_path / "empty"), device="cpu")


# --------------------------------------------------------------------------- BARTScore


def _reference_bartscore(
    model_dir: Path, sources: list[str], targets: list[str], model: torch.nn.Module | None = None
) -> list[float]:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = model or AutoModelForSeq2SeqLM.from_pretrained(model_dir)
    model.eval()
    out = []
    with torch.no_grad():
        for s, t in zip(sources, targets, strict=True):
            src = tokenizer(s, max_length=1024, truncation=True, return_tensors="pt").input_ids
            tgt = tokenizer(t, max_length=1024, truncation=True, return_tensors="pt").input_ids
            out.append(-model(input_ids=src, labels=tgt).loss.item())
    return out


@pytest.fixture(scope="module")
def bart_pairs() -> tuple[list[str], list[str]]:
    sources = [*_texts(5, 10), "", "短", "VAT 3%"]
    targets = [*_texts(6, 10), "金额", "", "VAT 3%"]
    return sources, targets


@pytest.mark.parametrize("batch_size", [1, 3, 16])
def test_bartscore_equals_model_loss_at_any_batch_size(
    tiny_bart_dir: Path, bart_pairs: tuple[list[str], list[str]], batch_size: int
) -> None:
    sources, targets = bart_pairs
    ours = BartScorer(str(tiny_bart_dir), batch_size=batch_size, device="cpu").score(
        sources, targets
    )
    expected = _reference_bartscore(tiny_bart_dir, sources, targets)
    assert max(abs(a - b) for a, b in zip(ours, expected, strict=True)) < 1e-5
    assert all(x < 0 for x in ours)


def test_bartscore_truncates_at_max_length(tiny_bart_dir: Path) -> None:
    long_source = "".join(_texts(7, 40))  # well over 1024 byte-level tokens
    target = _texts(8, 1)[0]
    ours = BartScorer(str(tiny_bart_dir), device="cpu").score([long_source], [target])
    assert ours[0] == pytest.approx(
        _reference_bartscore(tiny_bart_dir, [long_source], [target])[0], abs=1e-5
    )


def test_bartscore_dedupes_without_changing_values(
    tiny_bart_dir: Path, bart_pairs: tuple[list[str], list[str]]
) -> None:
    sources, targets = bart_pairs
    scorer = BartScorer(str(tiny_bart_dir), device="cpu")
    once = scorer.score(sources, targets)
    assert scorer.score(sources * 3, targets * 3) == once * 3
    assert scorer.score([], []) == []
    with pytest.raises(ValueError, match="pairs must align"):
        scorer.score(["a"], [])


def test_bartscore_weights_file_replaces_the_model_weights(
    tiny_bart_dir: Path, tmp_path: Path, bart_pairs: tuple[list[str], list[str]]
) -> None:
    from transformers import AutoModelForSeq2SeqLM

    sources, targets = bart_pairs
    tuned = AutoModelForSeq2SeqLM.from_pretrained(tiny_bart_dir)
    torch.manual_seed(1)
    with torch.no_grad():
        for param in tuned.parameters():
            param.add_(torch.randn_like(param) * 0.05)
    torch.save(tuned.state_dict(), tmp_path / "bart_score.pth")

    scorer = BartScorer(str(tiny_bart_dir), weights=str(tmp_path / "bart_score.pth"), device="cpu")
    expected = _reference_bartscore(tiny_bart_dir, sources, targets, model=tuned)
    assert (
        max(abs(a - b) for a, b in zip(scorer.score(sources, targets), expected, strict=True))
        < 1e-5
    )
    assert scorer.describe()["weights"] == str(tmp_path / "bart_score.pth")
    plain = BartScorer(str(tiny_bart_dir), device="cpu").score(sources, targets)
    assert plain != scorer.score(sources, targets)


def test_bartscore_missing_weights_are_unavailable(tiny_bart_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ScorerUnavailable, match="--bartscore-weights"):
        BartScorer(str(tiny_bart_dir), weights=str(tmp_path / "bart_score.pth"), device="cpu")
    (tmp_path / "bad.pth").write_bytes(b"not a state dict")
    with pytest.raises(ScorerUnavailable, match="cannot be loaded"):
        BartScorer(str(tiny_bart_dir), weights=str(tmp_path / "bad.pth"), device="cpu")


def test_bartscore_describe_and_from_env(tiny_bart_dir: Path) -> None:
    scorer = BartScorer.from_env({"TAXPRABEN_BARTSCORE_MODEL": str(tiny_bart_dir)}, device="cpu")
    info = scorer.describe()
    assert info["model"] == str(tiny_bart_dir) and info["weights"] is None
    assert info["max_length"] == 1024 and info["normalised"] == "exp(raw)"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(0.0, 1.0), (-1.0, math.exp(-1.0)), (-3.5, math.exp(-3.5)), (1e-7, 1.0), (-800.0, 0.0)],
)
def test_normalize_bartscore(raw: float, expected: float) -> None:
    assert normalize_bartscore(raw) == pytest.approx(expected)
    assert 0.0 <= normalize_bartscore(raw) <= 1.0


# --------------------------------------------------------------------------- device paths


class _OutOfMemoryAbove:
    """Wraps a model: a forward pass with more than ``rows`` rows raises CUDA's OOM error."""

    def __init__(self, model: torch.nn.Module, rows: int) -> None:
        self.model = model
        self.rows = rows
        self.failures = 0
        self.config = model.config

    def __call__(self, *args: object, **kwargs: object) -> object:
        ids = args[0] if args else kwargs["input_ids"]
        if ids.shape[0] > self.rows:  # type: ignore[union-attr]
            self.failures += 1
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 4.00 GiB")
        return self.model(*args, **kwargs)


def test_bertscore_backs_off_on_out_of_memory(
    tiny_xlnet_dir: Path, pairs: tuple[list[str], list[str]]
) -> None:
    cands, refs = pairs
    expected = BertScorer(str(tiny_xlnet_dir), 3, device="cpu", batch_size=32).score(cands, refs)
    scorer = BertScorer(str(tiny_xlnet_dir), 3, device="cpu", batch_size=32)
    flaky = _OutOfMemoryAbove(scorer._loaded.encoder, rows=5)
    scorer._loaded = bertscore._BertModel(
        scorer._loaded.tokenizer, flaky, scorer._loaded.forward_kwargs
    )
    got = scorer.score(cands, refs)
    assert flaky.failures >= 1
    assert scorer._budget is not None and scorer._budget.max_rows <= 5
    assert _max_diff(got, [(s.precision, s.recall, s.f1) for s in expected]) < 1e-6
    failures = flaky.failures
    scorer.score(cands[:10], refs[:10])  # the shrunk budget is kept: no new failure
    assert flaky.failures == failures


def test_bartscore_backs_off_on_out_of_memory(
    tiny_bart_dir: Path, bart_pairs: tuple[list[str], list[str]]
) -> None:
    sources, targets = bart_pairs
    scorer = BartScorer(str(tiny_bart_dir), batch_size=16, device="cpu")
    flaky = _OutOfMemoryAbove(scorer._loaded.model, rows=3)
    scorer._loaded = bartscore._BartModel(scorer._loaded.tokenizer, flaky)
    got = scorer.score(sources, targets)
    assert flaky.failures >= 1
    expected = _reference_bartscore(tiny_bart_dir, sources, targets)
    assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) < 1e-5


def test_float32_scoring_turns_tf32_off_and_restores_the_setting(
    tiny_xlnet_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    scorer = BertScorer(str(tiny_xlnet_dir), 2, device="cpu")
    encoder = scorer._loaded.encoder

    def recording(*args: object, **kwargs: object) -> object:
        seen.append(torch.get_float32_matmul_precision())
        return encoder(*args, **kwargs)

    recording.config = encoder.config  # type: ignore[attr-defined]
    scorer._loaded = bertscore._BertModel(
        scorer._loaded.tokenizer, recording, scorer._loaded.forward_kwargs
    )
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")
        scorer.score(["增值税"], ["消费税"])
        assert seen == ["highest"]
        assert torch.get_float32_matmul_precision() == "high"
        scorer.dtype = "tf32"
        scorer.score(["增值税专用发票"], ["消费税"])
        assert seen[-1] == "high"
    finally:
        torch.set_float32_matmul_precision(before)


def test_bf16_scores_are_close_to_float32_and_recorded(
    tiny_xlnet_dir: Path,
    tiny_bart_dir: Path,
    pairs: tuple[list[str], list[str]],
    bart_pairs: tuple[list[str], list[str]],
) -> None:
    cands, refs = pairs
    exact = BertScorer(str(tiny_xlnet_dir), 3, device="cpu")
    fast = BertScorer(str(tiny_xlnet_dir), 3, device="cpu", dtype="bf16")
    assert fast._loaded is not exact._loaded
    assert next(fast._loaded.encoder.parameters()).dtype == torch.bfloat16
    ours, bf16 = exact.score(cands, refs), fast.score(cands, refs)
    diff = _max_diff(bf16, [(s.precision, s.recall, s.f1) for s in ours])
    assert 0 < diff < 0.05
    assert fast.describe()["dtype"] == "bf16" and fast.describe()["exact"] is False
    assert exact.describe()["dtype"] == "float32" and exact.describe()["exact"] is True

    sources, targets = bart_pairs
    raw = BartScorer(str(tiny_bart_dir), device="cpu").score(sources, targets)
    raw_bf16 = BartScorer(str(tiny_bart_dir), device="cpu", dtype="bf16").score(sources, targets)
    assert 0 < max(abs(a - b) for a, b in zip(raw, raw_bf16, strict=True)) < 0.1
    with pytest.raises(ValueError, match="scorer dtype"):
        BertScorer(str(tiny_xlnet_dir), 3, device="cpu", dtype="fp8")


def test_a_layer_the_model_lacks_leaves_bertscore_not_computed_with_the_fix(tiny_xlnet_dir: Path) -> None:
    """After a generation, a wrong --bertscore-layer must not crash the run: the metric is
    not computed, and the reason says which layers exist."""
    from taxpraben.scoring import ScoringSettings, build_scorers

    settings = ScoringSettings(bertscore_model=str(tiny_xlnet_dir), bertscore_layer=XLNET_LAYERS + 1, device="cpu")
    scorers = build_scorers(settings, {"bertscore"})
    assert scorers.bert is None
    assert f"pass --bertscore-layer 0..{XLNET_LAYERS}" in scorers.unavailable["bertscore"]

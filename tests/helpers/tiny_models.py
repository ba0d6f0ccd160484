"""Tiny local scorer models for offline tests and benchmarks.

The Hugging Face hub is not reachable in CI, so the semantic-metric tests build their own
miniature models: a random XLNet with a SentencePiece unigram vocabulary trained on the fly
(the same tokenizer family as ``hfl/chinese-xlnet-base``) and a random BART with a byte-level
BPE vocabulary (the family of ``facebook/bart-large-cnn``). Both are saved with
``save_pretrained`` so that they load through the same code paths as real checkpoints,
by our scorers and by the reference ``bert_score`` package alike. Nothing here is committed
as a binary: the fixtures build into pytest's temporary directory once per session.

Other test files load this module as a plugin to get the fixtures (no unused imports)::

    pytest_plugins = ["helpers.tiny_models"]

and may import the builders and text generators directly.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

XLNET_LAYERS = 4
"""Number of blocks in the tiny XLNet; tests may pick any layer in ``0..XLNET_LAYERS``."""

_TAXES = ["增值税", "企业所得税", "个人所得税", "消费税", "印花税", "房产税", "土地增值税", "契税"]
_SUBJECTS = ["小规模纳税人", "一般纳税人", "居民企业", "高新技术企业", "个体工商户", "小型微利企业"]
_ACTIONS = [
    "应当按照规定申报缴纳",
    "可以享受减免优惠",
    "需要在次月十五日内申报",
    "应当开具增值税专用发票",
    "不得抵扣进项税额",
    "按照适用税率计算应纳税额",
]
_REASONS = [
    "根据《中华人民共和国税收征收管理法》第二十五条的规定",
    "依据财政部 税务总局公告2023年第12号",
    "按照国家税务总局的相关解释",
    "结合企业实际经营情况分析",
]
_ASCII = ["VAT", "CIT", "IIT", "Q&A", "No.", "ID", "OK", "PDF", "2024", "3%", "13%", "25%"]


def tax_sentence(rng: random.Random) -> str:
    """One synthetic sentence of Chinese tax prose with some ASCII and numbers mixed in."""
    amount = rng.choice([rng.randint(1, 999), rng.randint(1000, 99999)])
    parts = [
        rng.choice(_REASONS),
        "，",
        rng.choice(_SUBJECTS),
        rng.choice(["取得收入", "发生应税行为", "销售货物", "提供服务"]),
        f"{amount}元",
        "，",
        rng.choice(_TAXES),
        rng.choice(_ACTIONS),
    ]
    if rng.random() < 0.4:
        parts += ["（", rng.choice(_ASCII), " ", rng.choice(_ASCII), "）"]
    parts.append(rng.choice(["。", "；", "。"]))
    return "".join(parts)


def tax_paragraph(rng: random.Random, sentences: int) -> str:
    """A paragraph of ``sentences`` synthetic sentences (about 45 characters each)."""
    return "".join(tax_sentence(rng) for _ in range(sentences))


def tax_corpus(lines: int = 400, seed: int = 0) -> list[str]:
    """A deterministic training corpus for the tiny tokenizers."""
    rng = random.Random(seed)
    corpus = [tax_paragraph(rng, rng.randint(1, 3)) for _ in range(lines)]
    # Every character class a test may use, so that few pieces fall back to <unk>.
    corpus.append("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 ,.;:!?%()")
    return corpus


def _corpus_iter(corpus: list[str]) -> Iterator[str]:
    yield from corpus


def build_tiny_xlnet(out_dir: Path, *, n_layer: int = XLNET_LAYERS, seed: int = 0) -> Path:
    """Save a random XLNet (d_model 32) and its SentencePiece tokenizer into ``out_dir``."""
    import sentencepiece as spm
    import torch
    from transformers import XLNetConfig, XLNetModel, XLNetTokenizer

    out_dir.mkdir(parents=True, exist_ok=True)
    model_proto = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=_corpus_iter(tax_corpus(seed=seed)),
        model_writer=model_proto,
        model_type="unigram",
        vocab_size=400,
        hard_vocab_limit=False,
        character_coverage=1.0,
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
        # XLNet's special pieces, in the order of the real chinese-xlnet-base vocabulary.
        control_symbols=["<cls>", "<sep>", "<pad>", "<mask>", "<eod>", "<eop>"],
        num_threads=1,
        minloglevel=2,
    )
    (out_dir / "spiece.model").write_bytes(model_proto.getvalue())
    tokenizer = XLNetTokenizer.from_pretrained(out_dir)

    torch.manual_seed(seed)
    config = XLNetConfig(
        vocab_size=len(tokenizer),
        d_model=32,
        n_layer=n_layer,
        n_head=2,
        d_inner=64,
        pad_token_id=tokenizer.pad_token_id,
    )
    XLNetModel(config).eval().save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


def build_tiny_bart(out_dir: Path, *, seed: int = 0, max_positions: int = 1030) -> Path:
    """Save a random BART (d_model 32, 2+2 layers) and a byte-level BPE tokenizer."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import BartConfig, BartForConditionalGeneration, BartTokenizer

    out_dir.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        tax_corpus(seed=seed),
        vocab_size=600,
        min_frequency=1,
        show_progress=False,
        # BART's ids: <s>=0, <pad>=1, </s>=2, <unk>=3.
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    )
    bpe.save_model(str(out_dir))  # vocab.json + merges.txt
    tokenizer = BartTokenizer.from_pretrained(out_dir, model_max_length=max_positions - 2)

    torch.manual_seed(seed)
    config = BartConfig(
        vocab_size=len(json.loads((out_dir / "vocab.json").read_text(encoding="utf-8"))),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=max_positions,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_bos_token_id=0,
    )
    BartForConditionalGeneration(config).eval().save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


@pytest.fixture(scope="session")
def tiny_xlnet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random XLNet checkpoint directory (built once per test session)."""
    return build_tiny_xlnet(tmp_path_factory.mktemp("tiny-xlnet"))


@pytest.fixture(scope="session")
def tiny_bart_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BART checkpoint directory (built once per test session)."""
    return build_tiny_bart(tmp_path_factory.mktemp("tiny-bart"))

"""Token counts without a network: the class approximation on strings counted by hand, the
chat template's overhead, the TPM limiter's estimate, and a tokenizer built here (no hub)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from helpers.tiny_models import tax_corpus
from taxpraben.costs.tokens import (
    MESSAGE_OVERHEAD,
    REPLY_OVERHEAD,
    TOKEN_RATES,
    ApproximateCounter,
    HFTokenizerCounter,
    TokenCounter,
    TokenizerError,
    approximate_prompt_tokens,
    approximate_tokens,
    text_classes,
    token_counter,
)
from taxpraben.models.base import GenerationConfig, build_request
from taxpraben.records import Record
from taxpraben.run.pacing import estimate_tokens

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
SPECIALS = ["<pad>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>"]


def test_the_rates_are_the_documented_ones() -> None:
    assert dict(TOKEN_RATES) == {"cjk": 0.54, "fullwidth": 1.0, "word": 1.0, "digit": 1.0, "symbols": 1.66, "other": 1.0}
    assert (MESSAGE_OVERHEAD, REPLY_OVERHEAD) == (5, 3)


@pytest.mark.parametrize(
    ("text", "classes", "tokens"),
    [
        # 3 x 0.54 = 1.62 -> 2
        ("增值税", {"cjk": 3}, 2),
        # 2 x 0.54 + 2 digits + '%' (one symbol run, 1.66) + '。' (full-width, 1) = 5.74 -> 6
        ("税率13%。", {"cjk": 2, "digit": 2, "symbols": 1, "fullwidth": 1}, 6),
        # the space before a word belongs to it: 'VAT', ' and', ' CIT'
        ("VAT and CIT", {"word": 3}, 3),
        # '{"', '": ', '}' are three symbol runs (4.98) + the word 'a' + the digit = 6.98 -> 7
        ('{"a": 1}', {"symbols": 3, "word": 1, "digit": 1}, 7),
        # 25 x 0.54 = 13.5: half rounds up
        ("税" * 25, {"cjk": 25}, 14),
        # 0.54 rounds to 1; a text that is not empty is at least 1 token anyway
        ("税", {"cjk": 1}, 1),
        # one blank run 1.66 -> 2; a character of no class (é) 1; full-width digits are full-width marks
        ("\n\n  ", {"symbols": 1}, 2),
        ("é", {"other": 1}, 1),
        ("１２", {"fullwidth": 2}, 2),
        # 5 CJK characters (2.70) + 4 full-width marks (：“”，) + 3 digits = 9.70 -> 10
        ("应纳税额：“123元”，", {"cjk": 5, "fullwidth": 4, "digit": 3}, 10),
        ("", {}, 0),
    ],
)
def test_approximation_on_strings_counted_by_hand(text: str, classes: dict[str, int], tokens: int) -> None:
    counted = text_classes(text)
    assert {k: v for k, v in counted.items() if v} == classes
    assert approximate_tokens(text) == tokens


def test_prompt_tokens_add_the_chat_template() -> None:
    user = [{"role": "user", "content": "增值税"}]  # 2 + 5 + 3
    assert approximate_prompt_tokens(user) == 10
    system = [{"role": "system", "content": "VAT and CIT"}, *user]  # + 3 + 5
    assert approximate_prompt_tokens(system) == 18
    assert approximate_prompt_tokens([{"role": "assistant", "content": None}]) == 8
    assert approximate_prompt_tokens([]) == 3


def test_the_tpm_limiter_estimates_with_the_approximation() -> None:
    record = Record(task="TaxCalc", id="1", query="税率13%。", answer="1")
    request = build_request(record, 0, GenerationConfig(max_tokens=100))
    # 6 (the query, above) + 5 + 3 + 100; the old estimate counted 6 characters
    assert estimate_tokens(request, GenerationConfig(max_tokens=100)) == 114


def build_tokenizer(out: Path, *, chat_template: bool) -> tuple[Path, object]:
    """A byte-level BPE trained on tax prose here, saved as a transformers tokenizer; also
    the raw ``tokenizers.Tokenizer``, to count with independently."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)  # fmt: skip
    raw.train_from_iterator(tax_corpus(lines=120), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    if chat_template:
        fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    return out, raw


@pytest.fixture(scope="module")
def templated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    return build_tokenizer(tmp_path_factory.mktemp("tok-chat"), chat_template=True)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    return build_tokenizer(tmp_path_factory.mktemp("tok-plain"), chat_template=False)


MESSAGES = [
    {"role": "system", "content": "你是税务专家"},
    {"role": "user", "content": "某企业销售额1000元，税率13%，求销项税额。"},
]


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the network was touched")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.mark.usefixtures("no_network")
def test_a_local_tokenizer_counts_its_chat_template(templated: tuple[Path, object]) -> None:
    path, raw = templated
    counter = HFTokenizerCounter(str(path))
    assert isinstance(counter, TokenCounter) and counter.exact and str(path) in counter.name
    text = "增值税一般纳税人应当按照13%的税率计算 VAT 2024"
    assert counter.count_text(text) == len(raw.encode(text).ids)  # type: ignore[attr-defined]
    rendered = "<|system|>你是税务专家</s><|user|>某企业销售额1000元，税率13%，求销项税额。</s><|assistant|>"
    assert counter.prompt_text(MESSAGES) == rendered
    assert counter.count_prompt(MESSAGES) == len(raw.encode(rendered).ids)  # type: ignore[attr-defined]
    # the template's markers are single special tokens: 5 of them around the contents
    contents = sum(len(raw.encode(m["content"]).ids) for m in MESSAGES)  # type: ignore[attr-defined]
    assert counter.count_prompt(MESSAGES) == contents + 5


@pytest.mark.usefixtures("no_network")
def test_a_tokenizer_without_template_counts_the_joined_contents(plain: tuple[Path, object]) -> None:
    path, raw = plain
    counter = HFTokenizerCounter(str(path))
    joined = "你是税务专家\n\n某企业销售额1000元，税率13%，求销项税额。"
    assert counter.prompt_text(MESSAGES) == joined
    assert counter.count_prompt(MESSAGES) == len(raw.encode(joined).ids)  # type: ignore[attr-defined]


@pytest.mark.usefixtures("no_network")
def test_an_unreachable_hub_id_says_to_pass_a_local_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(TokenizerError) as info:
        HFTokenizerCounter("taxpraben-tests/no-such-tokenizer")
    message = str(info.value)
    assert "\n" not in message
    assert "taxpraben-tests/no-such-tokenizer" in message and "pass a local copy" in message


def test_a_missing_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="no such directory"):
        HFTokenizerCounter(str(tmp_path / "absent"))


@pytest.mark.usefixtures("no_network")
def test_token_counter_picks_the_tokenizer(templated: tuple[Path, object], plain: tuple[Path, object]) -> None:
    assert isinstance(token_counter("openai:deepseek-chat", None), ApproximateCounter)
    assert isinstance(token_counter("baseline:oracle"), ApproximateCounter)
    model = token_counter(f"hf:{templated[0]}", None)
    assert isinstance(model, HFTokenizerCounter) and model.name == f"tokenizer {templated[0]}"
    # --tokenizer wins over the model's own
    chosen = token_counter(f"HF:{templated[0]}", str(plain[0]))
    assert chosen.name == f"tokenizer {plain[0]}"
    assert token_counter("openai:m", str(plain[0])).exact
    approx = ApproximateCounter()
    assert not approx.exact
    assert approx.count_prompt([{"role": "user", "content": "增值税"}]) == 10 and approx.count_text("增值税") == 2

"""The pricing file: parsing, every way it can be wrong, which entry prices a model, and the
arithmetic of a cost (worked out by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from taxpraben.costs.pricing import (
    ModelPrice,
    Pricing,
    PricingError,
    load_pricing,
    parse_pricing,
    runs_locally,
)

EXAMPLE = """\
currency: USD            # any text: USD, CNY, ...
models:
  deepseek-chat:   {input: 0.27, output: 1.10, cached_input: 0.07}   # per million tokens
  "qwen-plus*":    {input: 0.8, output: 2.0}                         # a glob matches model names
  qwen*:           {input: 1, output: 3}
  qwen-plus:       {input: 0.5, output: 1.5}
  "qwen-plus-2025*": {input: 0.6, output: 1.6}
"""


@pytest.fixture
def pricing(tmp_path: Path) -> Pricing:
    path = tmp_path / "prices.yaml"
    path.write_text(EXAMPLE, encoding="utf-8")
    return load_pricing(path)


def test_the_documented_example_parses(pricing: Pricing, tmp_path: Path) -> None:
    assert pricing.currency == "USD"
    assert pricing.source == str(tmp_path / "prices.yaml")
    assert pricing.models["deepseek-chat"] == ModelPrice(input=0.27, output=1.10, cached_input=0.07)
    assert pricing.models["qwen-plus*"] == ModelPrice(input=0.8, output=2.0)
    assert list(pricing.models) == ["deepseek-chat", "qwen-plus*", "qwen*", "qwen-plus", "qwen-plus-2025*"]


@pytest.mark.parametrize(
    ("model", "entry"),
    [
        ("openai:deepseek-chat", "deepseek-chat"),
        ("deepseek-chat", "deepseek-chat"),
        ("OpenAI:deepseek-chat", "deepseek-chat"),
        # an exact name before any glob that also matches it
        ("openai:qwen-plus", "qwen-plus"),
        # the longest matching glob
        ("openai:qwen-plus-latest", "qwen-plus*"),
        ("openai:qwen-plus-2025-01-25", "qwen-plus-2025*"),
        ("qwen-max", "qwen*"),
        # a colon that is part of the name (Ollama's tags)
        ("qwen2.5:7b", "qwen*"),
        # case-sensitive, the whole name
        ("openai:Qwen-max", None),
        ("openai:deepseek-chat-v2", None),
        ("openai:my-qwen", None),
        # models that cost nothing
        ("hf:Qwen/Qwen2.5-0.5B-Instruct", None),
        ("baseline:oracle", None),
        ("replay:qwen-max.jsonl", None),
    ],
)
def test_which_entry_prices_a_model(pricing: Pricing, model: str, entry: str | None) -> None:
    assert pricing.entry_of(model) == entry
    assert pricing.price_of(model) == (pricing.models[entry] if entry else None)


def test_local_specs_cost_nothing() -> None:
    assert runs_locally("hf:/models/x") and runs_locally("baseline:oracle") and runs_locally("replay:p.jsonl")
    assert not runs_locally("openai:hf") and not runs_locally("hf-model")


def test_cost_arithmetic_by_hand() -> None:
    deepseek = ModelPrice(input=0.27, output=1.10, cached_input=0.07)
    # 800 fresh x 0.27 + 200 cached x 0.07 + 500 x 1.10 = 216 + 14 + 550 = 780 per million
    assert deepseek.cost(1000, 500, cached_prompt_tokens=200) == pytest.approx(780e-6, rel=1e-12)
    # no cached_input: cached prompt tokens at the input price: 1000 x 0.8 + 500 x 2.0 = 1800
    plus = ModelPrice(input=0.8, output=2.0)
    assert plus.cost(1000, 500, cached_prompt_tokens=200) == pytest.approx(1800e-6, rel=1e-12)
    # 2,000,000 prompt + 1,000,000 completion tokens: 0.54 + 1.10
    assert deepseek.cost(2_000_000, 1_000_000) == pytest.approx(1.64, rel=1e-12)
    assert deepseek.cost(0, 0) == 0.0
    with pytest.raises(ValueError, match="cached prompt tokens"):
        deepseek.cost(10, 0, cached_prompt_tokens=11)
    with pytest.raises(ValueError, match="negative"):
        deepseek.cost(-1, 0)


def test_to_meta_records_the_file_the_entry_and_its_prices(pricing: Pricing) -> None:
    assert pricing.to_meta("openai:qwen-plus-latest") == {
        "file": pricing.source, "currency": "USD", "model": "openai:qwen-plus-latest", "entry": "qwen-plus*",
        "free": False, "prices": {"input": 0.8, "output": 2.0, "cached_input": None}, "unit": "per million tokens",
    }  # fmt: skip
    local = pricing.to_meta("hf:/models/qwen")
    assert local["entry"] is None and local["prices"] is None and local["free"] is True
    assert pricing.to_meta("openai:gpt-4o")["free"] is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("currency: USD\nmodels:\n  a: {input: 0.2, outptu: 1}\n",
         "p.yaml, line 3: models.a.outptu: unknown key; did you mean 'output'?"),
        ("currency: USD\nmodels:\n  a: {input: 0.2, output: 1, cache_input: 0.1}\n",
         "p.yaml, line 3: models.a.cache_input: unknown key; did you mean 'cached_input'?"),
        ("currncy: USD\nmodels: {}\n", "p.yaml, line 1: currncy: unknown key; did you mean 'currency'?"),
        ("currency: USD\nmodels:\n  deepseek-chat: {input: 0.27, output: '1,10'}\n",
         "p.yaml, line 3: models.deepseek-chat.output: not a number: '1,10'"),
        ("currency: USD\nmodels:\n  a: {input: yes, output: 1}\n", "models.a.input: not a number: True"),
        ("currency: USD\nmodels:\n  a:\n    input: 1\n    output: -0.5\n",
         "p.yaml, line 5: models.a.output: negative (-0.5)"),
        ("currency: USD\nmodels:\n  a: {input: .inf, output: 1}\n", "models.a.input: not a finite number"),
        ("currency: USD\nmodels:\n  a: {input: 1}\n", "p.yaml, line 3: models.a.output: missing"),
        ("currency: USD\nmodels:\n  a:\n", "p.yaml, line 3: models.a: must be a mapping"),
        ("currency: USD\nmodels: [a, b]\n", "p.yaml, line 2: models: must be a mapping (key: value lines), not a list"),
        ("currency: USD\nmodels:\n  1.5: {input: 1, output: 2}\n", "models: the key 1.5 is not text; quote it"),
        ("currency: USD\nmodels:\n  a: {input: 1, output: 2}\n  a: {input: 1, output: 3}\n",
         "p.yaml, line 4: models.a: given twice"),
        ("models:\n  a: {input: 1, output: 2}\n", "p.yaml, line 1: currency: missing"),
        ("currency: USD\n", "p.yaml, line 1: models: missing"),
        ("currency: 3\nmodels:\n  a: {input: 1, output: 2}\n", "p.yaml, line 1: currency: must be a currency's name"),
        ("currency: USD\nmodels: {}\n", "p.yaml: models: lists no model"),
        ("- 1\n", "p.yaml, line 1: the pricing file must be a mapping"),
        ("", "p.yaml: the pricing file is empty"),
        ("currency: USD\nmodels:\n  a: {input: 1, output: 2\n", "p.yaml, line 4: not valid YAML"),
    ],
)  # fmt: skip
def test_errors_name_the_file_the_line_and_the_key(text: str, message: str) -> None:
    with pytest.raises(PricingError) as info:
        parse_pricing(text, "p.yaml")
    assert message in str(info.value)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(PricingError, match=r"absent\.yaml: no such pricing file"):
        load_pricing(tmp_path / "absent.yaml")
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(PricingError, match=r"bin\.yaml: cannot read the pricing file"):
        load_pricing(tmp_path / "bin.yaml")

"""What answers cost: the pricing file (``--pricing``, ``$TAXPRABEN_PRICING``).

A YAML file; prices are per million tokens, in one currency::

    currency: USD            # any text: USD, CNY, ...
    models:
      deepseek-chat:   {input: 0.27, output: 1.10, cached_input: 0.07}   # per million tokens
      "qwen-plus*":    {input: 0.8, output: 2.0}                         # a glob matches model names

- ``currency`` (required): the text shown beside every cost.
- ``models`` (required): model name -> prices. A name is matched against the model of an
  ``openai:NAME`` spec (or a bare name): first exactly, then as a glob (``*``, ``?``,
  ``[...]``, case-sensitive, the whole name), the longest pattern winning (``qwen-plus-2025*``
  before ``qwen*``). ``input`` and ``output`` (required) are the prices of prompt and
  completion tokens; ``cached_input`` (optional) that of prompt tokens the provider answers
  from its prompt cache (default: ``input``). Every price is a number >= 0.
- Local models (``hf:``), baselines and replays cost nothing: they need no entry.

Anything else is refused with a :class:`PricingError` that names the file, the line, the key
(``models.deepseek-chat.output``) and what is wrong, and, for a misspelt key, the valid key
it is nearest to.

The core (:func:`parse_pricing`) is pure: text in, :class:`Pricing` out; :func:`load_pricing`
reads the file.
"""

from __future__ import annotations

import difflib
import fnmatch
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

#: The keys of the file and of one model's entry.
TOP_KEYS = ("currency", "models")
PRICE_KEYS = ("input", "output", "cached_input")
#: Model spec prefixes whose answers cost nothing (no request to a paid API).
FREE_KINDS = ("hf", "baseline", "replay")
#: Characters that make a model name a glob.
_GLOB = frozenset("*?[")


class PricingError(ValueError):
    """A pricing file that cannot be used: the message names the file, the line, the key and
    what is wrong."""


@dataclass(frozen=True)
class ModelPrice:
    """One model's prices, per million tokens."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_prompt_tokens: int = 0) -> float:
        """The price of ``prompt_tokens`` + ``completion_tokens``; ``cached_prompt_tokens`` are
        the part of ``prompt_tokens`` answered from the provider's prompt cache (priced at
        ``cached_input`` when given, else at ``input``)."""
        if min(prompt_tokens, completion_tokens, cached_prompt_tokens) < 0:
            raise ValueError("token counts cannot be negative")
        if cached_prompt_tokens > prompt_tokens:
            raise ValueError(f"{cached_prompt_tokens} cached prompt tokens of only {prompt_tokens} prompt tokens")
        cached_rate = self.input if self.cached_input is None else self.cached_input
        fresh = prompt_tokens - cached_prompt_tokens
        return (fresh * self.input + cached_prompt_tokens * cached_rate + completion_tokens * self.output) / 1e6

    def to_meta(self) -> dict[str, float | None]:
        return {"input": self.input, "output": self.output, "cached_input": self.cached_input}


def spec_kind(model: str) -> tuple[str | None, str]:
    """``openai:deepseek-chat`` -> ``("openai", "deepseek-chat")``; a bare name (or one whose
    colon is part of it, ``qwen2.5:7b``) -> ``(None, name)``."""
    kind, sep, rest = model.partition(":")
    kind = kind.strip().lower()
    if sep and kind in ("openai", *FREE_KINDS):
        return kind, rest.strip()
    return None, model.strip()


def runs_locally(model: str) -> bool:
    """True for a spec whose answers cost nothing: ``hf:``, ``baseline:``, ``replay:``."""
    return spec_kind(model)[0] in FREE_KINDS


@dataclass(frozen=True)
class Pricing:
    """The prices of a pricing file: a currency and each model's prices (in file order)."""

    currency: str
    models: dict[str, ModelPrice]
    #: The file they were read from.
    source: str | None = None

    def entry_of(self, model: str) -> str | None:
        """The name in ``models`` that prices ``model`` (module doc), or None."""
        if runs_locally(model):
            return None
        name = spec_kind(model)[1]
        if name in self.models:
            return name
        globs = [p for p in self.models if _GLOB & set(p) and fnmatch.fnmatchcase(name, p)]
        return max(globs, key=len, default=None)  # the first of the longest, in file order

    def price_of(self, model: str) -> ModelPrice | None:
        """The prices of ``model`` (a spec such as ``openai:deepseek-chat``, or a bare name):
        exact name first, then the longest matching glob; None for a model the file does
        not price and for ``hf:``, ``baseline:`` and ``replay:`` specs (they cost nothing)."""
        entry = self.entry_of(model)
        return None if entry is None else self.models[entry]

    def to_meta(self, model: str) -> JSONObject:
        """What results.json records of the prices of ``model``: the file, the currency, the
        entry that matched (None: none did, or the model costs nothing) and its prices."""
        entry = self.entry_of(model)
        return {
            "file": self.source,
            "currency": self.currency,
            "model": model,
            "entry": entry,
            "free": runs_locally(model),
            "prices": None if entry is None else self.models[entry].to_meta(),
            "unit": "per million tokens",
        }


def load_pricing(path: Path) -> Pricing:
    """The pricing file at ``path``; PricingError naming the file for anything wrong."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PricingError(f"{path}: no such pricing file; pass the path of a YAML file (README, 'What a run costs')") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PricingError(f"{path}: cannot read the pricing file: {exc}") from exc
    return parse_pricing(text, str(path))


def parse_pricing(text: str, source: str = "<pricing>") -> Pricing:
    """The pricing of YAML ``text`` (``source`` names it in messages); PricingError."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            raise PricingError(f"{source}: the pricing file is empty; it needs 'currency:' and 'models:'")
        read = _Reader(source, loader)
        top = read.mapping(root, "")
        read.known_keys(top, TOP_KEYS, "")
        currency = read.currency(read.required(top, "currency", root, ""))
        models = {
            name: read.price(node, f"models.{name}")
            for name, (_, node) in read.mapping(read.required(top, "models", root, ""), "models").items()
        }
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise PricingError(f"{source}{line}: not valid YAML: {exc.problem or exc}") from exc
    except yaml.YAMLError as exc:
        raise PricingError(f"{source}: not valid YAML: {exc}") from exc
    finally:
        loader.dispose()
    if not models:
        raise PricingError(f"{source}: models: lists no model; add one, e.g. 'deepseek-chat: {{input: 0.27, output: 1.10}}'")
    return Pricing(currency=currency, models=models, source=source)


#: A mapping's entries by key text: (key node, value node).
_Entries = dict[str, tuple[yaml.Node, yaml.Node]]


@dataclass(frozen=True)
class _Reader:
    """Reads the nodes of one file; its errors say the file, the line and the key path."""

    source: str
    loader: yaml.SafeLoader

    def fail(self, node: yaml.Node, key: str, problem: str) -> PricingError:
        where = f"{self.source}, line {node.start_mark.line + 1}"
        return PricingError(f"{where}: {key}: {problem}" if key else f"{where}: {problem}")

    def value(self, node: yaml.Node) -> JSONValue:
        return self.loader.construct_object(node, deep=True)

    def mapping(self, node: yaml.Node, key: str) -> _Entries:
        """The entries of the mapping at ``key`` ("" for the file itself)."""
        if not isinstance(node, yaml.MappingNode):
            what = "the pricing file must be" if not key else "must be"
            raise self.fail(node, key, f"{what} a mapping (key: value lines), not {_kind(self.value(node))}")
        out: _Entries = {}
        for key_node, value_node in node.value:
            name = self.value(key_node)
            if not isinstance(name, str):
                raise self.fail(key_node, key, f"the key {name!r} is not text; quote it: \"{name}\"")
            if name in out:
                raise self.fail(key_node, _join(key, name), "given twice")
            out[name] = (key_node, value_node)
        return out

    def known_keys(self, entries: _Entries, valid: tuple[str, ...], key: str) -> None:
        """PricingError for a key not in ``valid``, with the nearest valid one."""
        for name, (key_node, _) in entries.items():
            if name not in valid:
                near = difflib.get_close_matches(name, valid, n=1, cutoff=0.5)
                hint = f"did you mean '{near[0]}'?" if near else f"the keys are {', '.join(valid)}"
                raise self.fail(key_node, _join(key, name), f"unknown key; {hint}")

    def required(self, entries: _Entries, name: str, parent: yaml.Node, key: str) -> yaml.Node:
        if name not in entries:
            raise self.fail(parent, _join(key, name), "missing")
        return entries[name][1]

    def currency(self, node: yaml.Node) -> str:
        value = self.value(node)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(node, "currency", f"must be a currency's name such as USD or CNY, not {value!r}")
        return value.strip()

    def price(self, node: yaml.Node, key: str) -> ModelPrice:
        entries = self.mapping(node, key)
        self.known_keys(entries, PRICE_KEYS, key)
        prices = {name: self.number(value_node, _join(key, name)) for name, (_, value_node) in entries.items()}
        for name in ("input", "output"):
            if name not in prices:
                raise self.fail(node, _join(key, name), "missing (the price per million tokens)")
        return ModelPrice(input=prices["input"], output=prices["output"], cached_input=prices.get("cached_input"))

    def number(self, node: yaml.Node, key: str) -> float:
        value = self.value(node)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(node, key, f"not a number: {value!r} (the price per million tokens, e.g. 1.10)")
        if not math.isfinite(value):
            raise self.fail(node, key, f"not a finite number: {value!r}")
        if value < 0:
            raise self.fail(node, key, f"negative ({value:g}); a price is 0 or more")
        return float(value)


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def _kind(value: object) -> str:
    if value is None:
        return "empty"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"

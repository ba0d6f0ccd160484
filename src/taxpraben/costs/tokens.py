"""Token counts without a network: an approximation calibrated on real tokenizers, or a
tokenizer of the user's own.

What a run costs is counted in tokens, and the prompts are known before anything is sent.
Two ways to count them:

- :func:`approximate_tokens` / :func:`approximate_prompt_tokens` (:class:`ApproximateCounter`):
  no tokenizer, no download, microseconds per prompt. The text is split into classes, each
  with its own rate in tokens (:data:`TOKEN_RATES`):

  ======================  ==========================================  =====
  class                   what it is                                  rate
  ======================  ==========================================  =====
  ``cjk``                 a CJK ideograph (汉字), per character         0.54
  ``fullwidth``           full-width and CJK punctuation (，。：“”％),   1
                          general punctuation (—…‰), per character
  ``word``                a run of ASCII letters (with the space       1
                          before it), per run
  ``digit``               an ASCII digit, per digit                    1
  ``symbols``             a run of ASCII punctuation and whitespace    1.66
                          (``": "",`` or ``\\n``), per run
  ``other``               any other character                          1
  ======================  ==========================================  =====

  The sum is rounded half up; a text that is not empty counts at least 1. The unit rates
  are what Qwen's BPE gives each class on its own (it splits numbers into single digits and
  has one token per full-width mark and per common English word); the two free rates
  (CJK characters: Qwen2.5 merges common words, 1.85 characters per token; and the runs of
  ASCII symbols, which BPE merges with each other and with what follows) are those that
  minimise the mean relative error of the per-request count against Qwen2.5 on the bundled
  sample's 186 prompts (``benchmarks/token_estimate.py --fit``).

  Measured error (``benchmarks/token_estimate.py``; the prompt is the record's ``query``;
  per request: the mean and the worst relative error of one prompt's count; total: the
  error of the sum over every prompt, what a run's estimate is off by):

  =====================================  =========  ======  ======  ======
  prompts                                tokenizer  mean    worst   total
  =====================================  =========  ======  ======  ======
  bundled sample (186)                   Qwen2.5    5.2%    21.2%   -2.6%
  bundled sample (186)                   Qwen3.6    10.4%   40.0%   +7.3%
  bundled sample (186)                   cl100k     38.0%   51.2%   -37.6%
  synthetic, seed 0, scale 0.1 (730)     Qwen2.5    4.3%    20.4%   +2.9%
  synthetic, seed 0, scale 0.1 (730)     Qwen3.6    19.9%   33.3%   +19.8%
  synthetic, seed 0, scale 0.1 (730)     cl100k     36.7%   46.4%   -37.1%
  synthetic, seed 0, full (7,300)        Qwen2.5    4.2%    22.2%   +2.9%
  =====================================  =========  ======  ======  ======

  Per task against Qwen2.5 on the sample: mean error 1.9% (TaxCalc) to 14.4% (TaxQA, whose
  short questions hold the worst prompt: 40 for 33), total -10.2% (TaxInspect) to +14.2%
  (TaxQA). Whole requests (:func:`approximate_prompt_tokens` against Qwen2.5's ChatML
  template): 4.7% mean, 17.1% worst, -2.5% total on the sample. So: within a few percent of
  a Qwen2.5-family endpoint over a whole run; Qwen3.5/3.6's larger vocabulary needs 7-20%
  fewer tokens than the figure (an upper bound there); OpenAI's cl100k_base (GPT-4-era
  models, and tokenizers like it) needs about 1.6 times as many: the approximation is no
  estimate for those; count with their own tokenizer (``--tokenizer``).

- :class:`HFTokenizerCounter`: a Hugging Face tokenizer (a local directory, or a hub id
  already in the local cache) and its chat template: exact for a model served with that
  tokenizer and template.

The chat template's own tokens (:func:`approximate_prompt_tokens`): ChatML, the template of
Qwen2.5 and Qwen3 (and many others), wraps each message in ``<|im_start|>ROLE\\n`` ...
``<|im_end|>\\n``: :data:`MESSAGE_OVERHEAD` = 5 tokens per message, measured with the
Qwen2.5 tokenizer; the answer's header ``<|im_start|>assistant\\n`` adds
:data:`REPLY_OVERHEAD` = 3 per request. (Qwen2.5's template also adds its default system
prompt, 21 tokens, when a request has none; Qwen3's does not. Not counted here.)

This module imports nothing of taxpraben and nothing heavy: ``transformers`` is imported
only when an :class:`HFTokenizerCounter` is made.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from taxpraben.results.json_value import JSONObject, JSONValue

#: Tokens per unit of each class, in hundredths (integer arithmetic: no rounding surprises).
_RATES_CENTI: dict[str, int] = {
    "cjk": 54,
    "fullwidth": 100,
    "word": 100,
    "digit": 100,
    "symbols": 166,
    "other": 100,
}

#: Tokens per unit of each class of :func:`text_classes` (see the module doc).
TOKEN_RATES: Mapping[str, float] = {name: rate / 100 for name, rate in _RATES_CENTI.items()}

#: ChatML's tokens around each message (``<|im_start|>``, the role, ``\n``, ``<|im_end|>``,
#: ``\n``) and before the answer (``<|im_start|>``, ``assistant``, ``\n``), Qwen2.5's tokenizer.
MESSAGE_OVERHEAD = 5
REPLY_OVERHEAD = 3

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_FULLWIDTH = "\u2010-\u205e\u3000-\u303f\uff00-\uffef"
_SYMBOLS = r"!-/:-@\[-`{-~\s"
_PER_CHARACTER = frozenset({"cjk", "digit"})


@functools.cache
def _classes() -> re.Pattern[str]:
    """One match per unit; the group says the class (``cjk`` and ``digit`` runs count
    characters). Compiled on first use (~1.5 ms): ``run`` estimates no prompt before its first
    request unless a TPM limit or a budget asks, and this module loads with the backend."""
    return re.compile(
        rf"(?P<cjk>[{_CJK}]+)|(?P<fullwidth>[{_FULLWIDTH}])|(?P<word> ?[A-Za-z]+)"
        rf"|(?P<digit>[0-9]+)|(?P<symbols>[{_SYMBOLS}]+)|(?P<other>.)",
        re.S,
    )


def text_classes(text: str) -> dict[str, int]:
    """How many units of each class ``text`` holds: CJK characters, full-width marks, ASCII
    words, digits, runs of ASCII symbols and whitespace, other characters (module doc)."""
    counts = dict.fromkeys(_RATES_CENTI, 0)
    for match in _classes().finditer(text):
        kind = match.lastgroup
        assert kind is not None
        counts[kind] += len(match.group()) if kind in _PER_CHARACTER else 1
    return counts


def approximate_tokens(text: str) -> int:
    """The tokens of ``text`` by the class rates of :data:`TOKEN_RATES`, rounded half up
    (at least 1 for a text that is not empty); calibrated on Qwen2.5 (module doc)."""
    if not text:
        return 0
    centi = sum(_RATES_CENTI[kind] * n for kind, n in text_classes(text).items())
    return max(1, (centi + 50) // 100)


def message_text(message: Mapping[str, JSONValue]) -> str:
    """A message's content as text (an absent or None content is empty)."""
    content = message.get("content")
    return content if isinstance(content, str) else ("" if content is None else str(content))


def approximate_prompt_tokens(messages: Sequence[Mapping[str, JSONValue]]) -> int:
    """The tokens a chat endpoint counts for ``messages``: each message's content plus
    :data:`MESSAGE_OVERHEAD`, plus :data:`REPLY_OVERHEAD` for the answer's header (ChatML,
    measured with Qwen2.5's tokenizer)."""
    return sum(approximate_tokens(message_text(m)) + MESSAGE_OVERHEAD for m in messages) + REPLY_OVERHEAD


#: The ``usage`` key that marks counts taxpraben made itself (the backend sent none: llama.cpp's
#: server on a streamed answer); its value names the counter, ``"taxpraben: <counter>"``.
COUNTED_BY = "counted_by"


def counted_usage(messages: Sequence[Mapping[str, JSONValue]], answer: str, counter: TokenCounter | None = None) -> JSONObject:
    """The token counts of an answer its backend sent without ``usage``: the prompt by
    ``counter.count_prompt`` (its chat template included), the answer (reasoning included, as
    the APIs count it) by ``counter.count_text``; marked :data:`COUNTED_BY`. ``counter``: the
    model's tokenizer when known, else the approximation (:class:`ApproximateCounter`)."""
    counter = counter or ApproximateCounter()
    return {
        "prompt_tokens": counter.count_prompt(messages),
        "completion_tokens": counter.count_text(answer),
        COUNTED_BY: f"taxpraben: {counter.name}",
    }


class TokenizerError(ValueError):
    """A tokenizer that cannot be loaded (one line: which, why, and what to pass instead)."""


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a prompt (chat messages) and of a text."""

    #: What counts, as a user reads it: "approximation (Qwen2.5-calibrated)", "tokenizer DIR".
    name: str
    #: True when a real tokenizer counts (exact for a model served with it), False for the
    #: approximation.
    exact: bool

    def count_prompt(self, messages: Sequence[Mapping[str, JSONValue]]) -> int:
        """The prompt tokens of one request, the chat template's included."""
        ...

    def count_text(self, text: str) -> int:
        """The tokens of ``text`` alone."""
        ...


class ApproximateCounter:
    """:func:`approximate_prompt_tokens` and :func:`approximate_tokens` as a TokenCounter."""

    name = "approximation (Qwen2.5-calibrated)"
    exact = False

    def count_prompt(self, messages: Sequence[Mapping[str, JSONValue]]) -> int:
        return approximate_prompt_tokens(messages)

    def count_text(self, text: str) -> int:
        return approximate_tokens(text)


class HFTokenizerCounter:
    """A Hugging Face tokenizer (``AutoTokenizer.from_pretrained``) as a TokenCounter.

    A prompt is what the ``hf:`` backend feeds its model: the tokenizer's chat template with
    the generation prompt when it has one, else the contents joined by blank lines; both
    tokenized without adding special tokens (the template writes its own). A local directory
    works offline; a hub id that cannot be fetched (no network, no such model) is a
    :class:`TokenizerError` saying to pass a local copy.
    """

    exact = True

    def __init__(self, path_or_id: str) -> None:
        source = str(Path(path_or_id).expanduser()) if _looks_like_path(path_or_id) else path_or_id
        if _looks_like_path(path_or_id) and not Path(source).exists():
            raise TokenizerError(
                f"{path_or_id}: no such directory; pass the directory of a tokenizer (tokenizer.json, "
                f"tokenizer_config.json), e.g. a model's local copy"
            )
        try:
            self._tokenizer = _load_tokenizer(source)
        except (OSError, ValueError) as exc:
            first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
            raise TokenizerError(
                f"cannot load the tokenizer {path_or_id!r} ({first}); pass a local copy: "
                f"--tokenizer DIR, a directory with the tokenizer's files (tokenizer.json, tokenizer_config.json)"
            ) from exc
        self.name = f"tokenizer {path_or_id}"

    def prompt_text(self, messages: Sequence[Mapping[str, JSONValue]]) -> str:
        """The prompt as the model reads it (the chat template, else the joined contents)."""
        if getattr(self._tokenizer, "chat_template", None):
            return str(self._tokenizer.apply_chat_template(
                [dict(m) for m in messages], add_generation_prompt=True, tokenize=False
            ))  # fmt: skip
        return "\n\n".join(message_text(m) for m in messages)

    def count_prompt(self, messages: Sequence[Mapping[str, JSONValue]]) -> int:
        return self.count_text(self.prompt_text(messages))

    def count_text(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])


def _looks_like_path(name: str) -> bool:
    """A local path rather than a hub id (``org/name``)."""
    return name.startswith(("/", ".", "~")) or "\\" in name or name.count("/") > 1


def _hub_offline() -> bool:
    return any(os.environ.get(flag, "").strip().lower() in ("1", "true", "yes", "on")
               for flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))  # fmt: skip


def _load_tokenizer(path_or_id: str) -> PreTrainedTokenizerBase:
    """``AutoTokenizer.from_pretrained``: a local directory or the local hub cache first (no
    network); the hub only for an id not cached, and never when the hub is set offline."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(path_or_id, local_files_only=True)
    except (OSError, ValueError):
        if Path(path_or_id).exists() or _hub_offline():
            raise
    return AutoTokenizer.from_pretrained(path_or_id)


def token_counter(model_spec: str, tokenizer: str | None = None) -> TokenCounter:
    """How the prompts of ``model_spec`` are counted: ``tokenizer`` (``--tokenizer NAME``)
    when given; else an ``hf:PATH`` model's own tokenizer; else the approximation.
    TokenizerError when the tokenizer cannot be loaded."""
    if tokenizer:
        return HFTokenizerCounter(tokenizer)
    kind, sep, name = model_spec.partition(":")
    if sep and kind.strip().lower() == "hf" and name.strip():
        return HFTokenizerCounter(name.strip())
    return ApproximateCounter()

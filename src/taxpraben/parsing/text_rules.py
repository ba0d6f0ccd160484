"""The rules of the text reader (generation tasks: the cleaned output is the answer), run
in the order of the ``text`` chain (:data:`taxpraben.parsing.rules.CHAINS`): the whole
output when it holds anything, else no answer. TaxBen's chain reads the raw output instead
(``taxben.raw-output``, :mod:`taxpraben.parsing.taxben_rules`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from taxpraben.parsing.chain import Chain
from taxpraben.parsing.region import NO_ANSWER, Reading, veto_of
from taxpraben.parsing.rules import CHAINS
from taxpraben.parsing.taxben_rules import TEXT_ATTEMPTS as TAXBEN_TEXT_ATTEMPTS

__all__ = ["TEXT_ATTEMPTS", "TextView", "read_text", "text_chain"]

_NO_ANSWER = Reading(None, NO_ANSWER, rule=veto_of(NO_ANSWER))


@dataclass(frozen=True)
class TextView:
    """One output as the text rules read it: ``text`` cleaned, ``raw`` as the model wrote it."""

    text: str
    raw: str


def _whole(view: TextView) -> Reading | None:
    text = view.text
    return Reading(text, rule="text.whole-output", source=text) if text.strip() else None


def _no_answer(view: TextView) -> Reading | None:
    return _NO_ANSWER


#: Each text rule's attempt, by rule name. The value read is the text the scorers read.
TEXT_ATTEMPTS: dict[str, Callable[[TextView], Reading | None]] = {
    "text.whole-output": _whole,
    "veto.no-answer": _no_answer,
    **TAXBEN_TEXT_ATTEMPTS,
}


@lru_cache(maxsize=16)
def text_chain(names: tuple[str, ...] | None = None) -> Chain[TextView]:
    """The text chain: ``names`` in order (default: the ``text`` chain of the registry)."""
    return Chain("text", CHAINS["text"] if names is None else names, TEXT_ATTEMPTS)


def read_text(text: str, chain: tuple[str, ...] | None = None, raw: str | None = None) -> Reading:
    """The answer of a generation task: the cleaned output ``text`` (``raw``: the output
    before cleaning, ``text`` when None), read by the text chain."""
    return text_chain(chain).run(TextView(text, text if raw is None else raw), _NO_ANSWER)

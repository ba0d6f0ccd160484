"""The rules of the text reader (generation tasks: the cleaned output is the answer), run
in the order of the ``text`` chain (:data:`taxpraben.parsing.rules.CHAINS`): the whole
output when it holds anything, else no answer."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from taxpraben.parsing.chain import Chain
from taxpraben.parsing.region import NO_ANSWER, Reading, veto_of
from taxpraben.parsing.rules import CHAINS

__all__ = ["TEXT_ATTEMPTS", "read_text", "text_chain"]

_NO_ANSWER = Reading(None, NO_ANSWER, rule=veto_of(NO_ANSWER))


def _whole(text: str) -> Reading | None:
    return Reading(text, rule="text.whole-output", source=text) if text.strip() else None


def _no_answer(text: str) -> Reading | None:
    return _NO_ANSWER


#: Each text rule's attempt, by rule name (the view is the cleaned output itself).
TEXT_ATTEMPTS: dict[str, Callable[[str], Reading | None]] = {
    "text.whole-output": _whole,
    "veto.no-answer": _no_answer,
}


@lru_cache(maxsize=16)
def text_chain(names: tuple[str, ...] | None = None) -> Chain[str]:
    """The text chain: ``names`` in order (default: the ``text`` chain of the registry)."""
    return Chain("text", CHAINS["text"] if names is None else names, TEXT_ATTEMPTS)


def read_text(text: str, chain: tuple[str, ...] | None = None) -> Reading:
    """The answer of a generation task: the cleaned output ``text``, read by the text chain."""
    return text_chain(chain).run(text, _NO_ANSWER)

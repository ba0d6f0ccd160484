"""The text reader (generation tasks: the cleaned output is the answer), run in the order of
the ``text`` chain (:data:`TEXT_CHAIN`): the whole output when it holds
anything, else no answer. TaxBen's chain reads the raw output instead (``taxben.raw-output``,
:mod:`taxpraben.parsing.readers.taxben`)."""

from __future__ import annotations

from dataclasses import dataclass

from taxpraben.parsing.chain import Chain, chain_for
from taxpraben.parsing.readers.shared import NO_ANSWER_RULE
from taxpraben.parsing.region import NO_ANSWER, Reading
from taxpraben.parsing.registry import Example, register_rule

__all__ = ["TEXT_CHAIN", "TextView", "read_text", "text_chain"]

_NO_ANSWER = Reading(None, NO_ANSWER, rule=NO_ANSWER_RULE.name)


@dataclass(frozen=True)
class TextView:
    """One output as the text rules read it: ``text`` cleaned, ``raw`` as the model wrote it."""

    text: str
    raw: str


WHOLE_TEXT_RULE = register_rule(
    "text.whole-output", kinds=("text",), tier=6, confidence="high",
    description="Generation tasks: the cleaned output is the answer (BERTScore and BARTScore read it whole).",
    examples=(Example("text", "小规模纳税人的增值税征收率为3%。", None),),
)


@WHOLE_TEXT_RULE.reads("text")
def _whole(view: TextView) -> Reading | None:
    text = view.text
    return Reading(text, rule=WHOLE_TEXT_RULE.name, source=text) if text.strip() else None


@NO_ANSWER_RULE.reads("text")
def _no_answer(view: TextView) -> Reading | None:
    return _NO_ANSWER


#: The order in which the text reader tries its rules (the default chain set, ``taxpraben``): its
#: rules' names, each a rule declared in this module or in :mod:`~taxpraben.parsing.readers.shared`.
TEXT_CHAIN: tuple[str, ...] = (
    "text.whole-output",
    "veto.no-answer",
)


def text_chain(names: tuple[str, ...] | None = None) -> Chain[TextView]:
    """The text chain: ``names`` in order (default: the ``text`` chain of
    :data:`TEXT_CHAIN`), each rule's text attempt."""
    return chain_for("text", TEXT_CHAIN if names is None else names)


def read_text(text: str, chain: tuple[str, ...] | None = None, raw: str | None = None) -> Reading:
    """The answer of a generation task: the cleaned output ``text`` (``raw``: the output
    before cleaning, ``text`` when None), read by the text chain."""
    return text_chain(chain).run(TextView(text, text if raw is None else raw), _NO_ANSWER)

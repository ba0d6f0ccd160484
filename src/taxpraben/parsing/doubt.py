"""When a reading that its rule holds with high confidence is still in doubt.

A rule's confidence (:func:`taxpraben.parsing.rules.confidence_of`) says how far an answer
read by that rule is the output's answer *as a rule*; some outputs put a reading of a sure
rule in doubt all the same, and a reader sends those to the judge or the reviewer as low
confidence. Each doubt was measured on the wide corpus (``benchmarks/wide``, development
sources): the readings it marks disagree with the hand grades several times as often as the
rest of their rule's readings.

- a number read from an output that does not close on a number
  (:func:`taxpraben.parsing.closing.closes_on_number`: cut off, unfinished, declining): the
  statement read may be one drawn on the way;
- a span of more than :data:`SPAN_WORDS` words: a whole sentence was read where a short span
  is asked for, and whether it says the gold depends on the phrase matching;
- a number a conclusion gives (its rule, no answer statement) in an output of
  :data:`LONG_DERIVATION` characters or more: a long derivation draws many conclusions on the
  way, and the last one read may be one of them (on the development sources: 3 of 17 such
  readings wrong, against 8 of 402 in shorter outputs);
- an option read from an output the length limit cut off or left unfinished
  (:func:`taxpraben.parsing.closing.cut_by_limit`, :func:`~taxpraben.parsing.closing.unfinished`)
  by a rule that is no answer statement (a bare option line, a lead sentence, a bold
  option, verdicts on the options): the model never stated its answer, and the option read
  may be the one it was analysing when it stopped (on the development sources: 6 of 47 such
  readings wrong, against 47 of 6,790 high-confidence readings in all).

Pure; no I/O.
"""

from __future__ import annotations

from taxpraben.parsing.closing import closes_on_number, cut_by_limit, unfinished
from taxpraben.parsing.readers.shared import CONCLUSION_RULE

__all__ = ["LONG_DERIVATION", "SPAN_WORDS", "doubt"]

#: The most words a span read with a sure rule may have before it is in doubt.
SPAN_WORDS = 5
#: The rules that read an answer statement (a marker, a box, a tag, an answer field of JSON):
#: an option they give was stated, even where the output runs on after it.
_STATEMENT_RULES = ("rule:final.", "rule:json.")
#: How long a derivation is before a conclusion drawn in it is in doubt (characters).
LONG_DERIVATION = 1500


def doubt(kind: str, text: str, value: object, rule: str | None = None) -> str | None:
    """Why the reading ``value`` of a ``kind`` reader ("number", "span", ...) from ``text``
    (the cleaned output), read by ``rule``, is in doubt, or None."""
    if kind == "number" and not closes_on_number(text):
        return "the output does not close on a number"
    if kind == "number" and rule == f"rule:{CONCLUSION_RULE.name}" and len(text) >= LONG_DERIVATION:
        return "a conclusion of a long derivation, with no answer statement"
    if kind == "span" and isinstance(value, str) and len(value.split()) > SPAN_WORDS:
        return "the span read is a whole sentence"
    if kind in ("label", "letters") and not (rule or "").startswith(_STATEMENT_RULES) and (cut_by_limit(text) or unfinished(text)):
        return "an option read from an output cut off before it stated its answer"
    return None

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
  readings wrong, against 47 of 6,790 high-confidence readings in all);
- a number a conclusion gives where the output's opening sentence states another one, not one
  of the question's (``query``): "… they will invest $2200 in the third year." opening, "…
  which is $14000" closing; with no correction between, which of them answers is in doubt;
- options written back on lines of their own from the first one, in order, none left out
  ("(a) X.\n(b) Y."): the model may have chosen them or may be copying the prompt's list, and
  the lines alone do not say which (on the development sources: 3 of 6 such readings wrong,
  against none of the 14 other readings of the rule).

Pure; no I/O.
"""

from __future__ import annotations

from taxpraben.parsing.closing import LONG_DERIVATION, closes_on_number, cut_by_limit, unfinished
from taxpraben.parsing.numbers import find_numbers, numbers_equal
from taxpraben.parsing.readers.letters import RESTATED_RULE
from taxpraben.parsing.readers.shared import CONCLUSION_RULE
from taxpraben.parsing.region import lead_sentence

__all__ = ["LONG_DERIVATION", "SPAN_WORDS", "doubt"]

#: The most words a span read with a sure rule may have before it is in doubt.
SPAN_WORDS = 5
#: The rules that read an answer statement (a marker, a box, a tag, an answer field of JSON):
#: an option they give was stated, even where the output runs on after it.
_STATEMENT_RULES = ("rule:final.", "rule:json.")


def doubt(kind: str, text: str, value: object, rule: str | None = None, query: str = "") -> str | None:
    """Why the reading ``value`` of a ``kind`` reader ("number", "span", ...) from ``text``
    (the cleaned output; ``query``, its question), read by ``rule``, is in doubt, or None."""
    if kind == "number" and not closes_on_number(text):
        return "the output does not close on a number"
    if kind == "number" and rule == f"rule:{CONCLUSION_RULE.name}" and len(text) >= LONG_DERIVATION:
        return "a conclusion of a long derivation, with no answer statement"
    if kind == "number" and rule == f"rule:{CONCLUSION_RULE.name}" and _opens_on_another(text, value, query):
        return "the opening sentence states another number"
    if kind == "span" and isinstance(value, str) and len(value.split()) > SPAN_WORDS:
        return "the span read is a whole sentence"
    if kind == "letters" and rule == f"rule:{RESTATED_RULE.name}" and _from_the_first(value):
        return "the options written back from the first, in order: a copy of the list as much as a choice"
    if kind in ("label", "letters") and not (rule or "").startswith(_STATEMENT_RULES) and (cut_by_limit(text) or unfinished(text)):
        return "an option read from an output cut off before it stated its answer"
    return None




def _from_the_first(value: object) -> bool:
    """``value`` (letters, "ABC") is two or more options from the first one, none skipped."""
    return isinstance(value, str) and len(value) >= 2 and value == "ABCDEFGHIJ"[: len(value)]


def _opens_on_another(text: str, value: object, query: str) -> bool:
    """The opening sentence of ``text`` states a number, neither ``value`` nor one of ``query``'s."""
    if value is None or not (opening := lead_sentence(text)) or len(opening) == len(text.strip()):
        return False
    if any(sign in opening for sign in _WORKING):
        return False  # a step of the working, not a statement of the answer
    given = [found.value for found in find_numbers(query)]
    stated = [found for found in find_numbers(opening) if not any(numbers_equal(found, g) for g in given)]
    return bool(stated) and not any(numbers_equal(found, str(value)) for found in stated)


#: Signs of a computation in a sentence.
_WORKING = ("=", "×", "*", "+", "÷", "/", "\\times", "\\frac")

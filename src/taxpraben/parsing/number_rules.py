"""The rules of the number reader (calculations: the final number of an output), each an
attempt over one :class:`NumberView` of the output, run in the order of the ``number`` chain
(:data:`taxpraben.parsing.rules.CHAINS`; the procedure is described in
:mod:`taxpraben.parsing.final_number`, whose helpers the attempts call)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from functools import cached_property, lru_cache, wraps
from typing import TYPE_CHECKING

from taxpraben.parsing._jsonish import answer_text, answer_value, find_json_values, own_json_values
from taxpraben.parsing.chain import Chain
from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.closing import closes_on_number, cut_by_limit
from taxpraben.parsing.final_number import (
    NUMBER_ANSWER_KEYS,
    _around,
    _before_note,
    _checked,
    _declines,
    _detached,
    _final_in_text,
    _from_json_value,
    _one_of_alternatives,
    _says_zero,
    _statement_number,
    _two_boxed_values,
    _without_asides,
)
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.numbers import NumberMatch, find_numbers
from taxpraben.parsing.prompt_copy import COPY_OF_PROMPT, own_answer
from taxpraben.parsing.region import (
    AMBIGUOUS,
    NO_ANSWER,
    NOT_ASSERTED,
    Reading,
    Statement,
    answer_statements,
    conclusion_sentence,
    veto_of,
)
from taxpraben.parsing.rules import CHAINS
from taxpraben.parsing.taxben_rules import NUMBER_ATTEMPTS as TAXBEN_NUMBER_ATTEMPTS
from taxpraben.parsing.units import tables_with_units

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

__all__ = ["NUMBER_ATTEMPTS", "NumberView", "extract_final_number", "number_chain", "read_final_number", "read_number"]

_NO_ANSWER = Reading(None, NO_ANSWER, rule=veto_of(NO_ANSWER))
_FINAL_RULE = {"boxed": "final.boxed", "correction": "final.self-correction"}


class NumberView:
    """One output as the number rules read it, built once: cleaned with LaTeX made plain,
    its own answer (with a query), tables given their units, and (on first use) its
    statements and the last number of its text."""

    def __init__(self, text: str, expect_percent: bool | None, query: str, raw: str | None = None) -> None:
        #: The raw output (TaxBen's rules read it).
        self.raw = text if raw is None else raw
        self.expect_percent = expect_percent
        self.query = query
        self.full = strip_latex(clean_prediction(text))
        own = own_answer(self.full, query) if query else None
        self.failure = own.failure if own is not None else None
        cleaned = own.text if own is not None and not own.failure else self.full
        self.empty = not cleaned.strip()
        self.cleaned = "" if self.empty or self.failure else tables_with_units(cleaned)

    @cached_property
    def raw_final_text(self) -> str | None:
        """The number expression the default chain reads from the raw output, as written (the
        stand-in for TaxBen's GPT-3.5 extraction, K3 of :mod:`taxpraben.parsing.taxben`)."""
        found = extract_final_number(self.raw)
        return None if found is None else found.text

    @cached_property
    def json_values(self) -> list[JSONValue]:
        return own_json_values(self.full, self.query) if self.query else find_json_values(self.cleaned)

    @cached_property
    def statements(self) -> list[Statement]:
        return answer_statements(self.cleaned)

    @cached_property
    def first_final(self) -> tuple[Statement, NumberMatch, str] | None:
        """The latest final statement that gives a number, the number and its rule."""
        for statement in self.statements:
            if statement.kind == "conclusion":
                break
            found = _statement_number(statement, self.expect_percent)
            if found is not None:
                return statement, _detached(found), _FINAL_RULE.get(statement.kind, "final.answer-statement")
        return None

    @cached_property
    def last_number(self) -> tuple[str, NumberMatch] | None:
        """The last number of the text (before a note, without asides, or the whole), and the
        text it was found in."""
        for text in (_before_note(self.cleaned), _without_asides(self.cleaned), self.cleaned):
            if text is not None:
                found = _final_in_text(text, self.expect_percent)
                if found is not None:
                    return text, found
        return None


NumberAttempt = Callable[[NumberView], Reading | None]


def _on_text(attempt: NumberAttempt) -> NumberAttempt:
    """An attempt that reads the own answer: it does not apply when there is none."""

    @wraps(attempt)
    def guarded(view: NumberView) -> Reading | None:
        return None if view.empty or view.failure else attempt(view)

    return guarded


def _copy_of_prompt(view: NumberView) -> Reading | None:
    failure = view.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure == COPY_OF_PROMPT else None


def _another_question(view: NumberView) -> Reading | None:
    failure = view.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure else None


@_on_text
def _json_answer(view: NumberView) -> Reading | None:
    found_key, value = answer_value(view.json_values, NUMBER_ANSWER_KEYS)
    if not found_key:
        return None
    from_json = _from_json_value(value, view.expect_percent)
    if from_json is None:
        return None
    return Reading(_detached(from_json), rule="json.answer-field", source=answer_text(value))


@_on_text
def _two_boxed(view: NumberView) -> Reading | None:
    if _two_boxed_values(view.cleaned, view.statements, view.expect_percent):
        return Reading(None, AMBIGUOUS, rule="veto.several-answers")
    return None


def _final_by(rule: str) -> NumberAttempt:
    """The attempt of a final-statement rule: the latest final statement's number, when it
    is a statement of ``rule`` (unless it offers alternatives: ``veto.alternatives``)."""

    @_on_text
    def attempt(view: NumberView) -> Reading | None:
        first = view.first_final
        if first is None or first[2] != rule:
            return None
        statement, found, _rule = first
        return _checked(statement, found, rule)

    return attempt


@_on_text
def _declines_attempt(view: NumberView) -> Reading | None:
    if _declines(view.cleaned):
        return Reading(None, NOT_ASSERTED, rule="veto.declines")  # "无法直接计算出……": no number is given
    return None


@_on_text
def _conclusion(view: NumberView) -> Reading | None:
    if not closes_on_number(view.cleaned):
        # a consequence drawn on the way ("So, the museum tour is 1.5 hours.") is the answer only
        # in an output that closes on its result: not one cut off, unfinished or declining
        return None
    for statement in view.statements:
        if statement.kind == "conclusion":
            found = _statement_number(statement, view.expect_percent)
            if found is not None:
                return _checked(statement, _detached(found), "conclusion.statement")
    return None


@_on_text
def _zero(view: NumberView) -> Reading | None:
    last = conclusion_sentence(view.cleaned)
    if _says_zero(last):
        return Reading(NumberMatch(Decimal(0), False, -1, -1, "零"), rule="number.says-zero", source=last)
    return None


@_on_text
def _alternatives(view: NumberView) -> Reading | None:
    last = view.last_number
    if last is not None and _one_of_alternatives(*last):
        return Reading(None, AMBIGUOUS, rule="veto.alternatives")
    return None


@_on_text
def _sole(view: NumberView) -> Reading | None:
    last = view.last_number
    if last is None or len(find_numbers(view.cleaned)) != 1:
        return None
    return Reading(last[1], rule="number.sole-number", source=_around(*last))


@_on_text
def _last(view: NumberView) -> Reading | None:
    last = view.last_number
    if last is None:
        return None
    if not closes_on_number(view.cleaned) or cut_by_limit(view.cleaned):
        return Reading(None, NO_ANSWER, rule="veto.no-answer")
    return Reading(last[1], rule="number.last-number", source=_around(*last))


def _no_answer(view: NumberView) -> Reading | None:
    return _NO_ANSWER


#: Each number rule's attempt, by rule name.
NUMBER_ATTEMPTS: dict[str, NumberAttempt] = {
    "veto.copy-of-prompt": _copy_of_prompt,
    "veto.another-question": _another_question,
    "json.answer-field": _json_answer,
    "veto.several-answers": _two_boxed,
    "final.self-correction": _final_by("final.self-correction"),
    "final.answer-statement": _final_by("final.answer-statement"),
    "final.boxed": _final_by("final.boxed"),
    "veto.declines": _declines_attempt,
    "conclusion.statement": _conclusion,
    "number.says-zero": _zero,
    "veto.alternatives": _alternatives,
    "number.sole-number": _sole,
    "number.last-number": _last,
    "veto.no-answer": _no_answer,
    **TAXBEN_NUMBER_ATTEMPTS,
}


@lru_cache(maxsize=64)
def number_chain(names: tuple[str, ...] | None = None) -> Chain[NumberView]:
    """The number chain: ``names`` in order (default: the ``number`` chain of the registry)."""
    return Chain("number", CHAINS["number"] if names is None else names, NUMBER_ATTEMPTS)


def read_number(
    text: str, expect_percent: bool | None, query: str, chain: tuple[str, ...] | None = None,
    raw: str | None = None,
) -> Reading:
    """The final number of an output, read by the number chain (``raw``: the output before
    cleaning, when ``text`` is not it)."""
    return number_chain(chain).run(NumberView(text, expect_percent, query, raw), _NO_ANSWER)


def extract_final_number(
    text: str, *, expect_percent: bool | None = None
) -> NumberMatch | None:
    """The final answer of a calculation in a model output, or None when it has no number.

    The output is cleaned (:func:`~taxpraben.parsing.clean.clean_prediction`) and its LaTeX
    made plain (:mod:`~taxpraben.parsing.latex`). Order: a JSON answer field
    (:data:`NUMBER_ANSWER_KEYS`); the final statements of
    :func:`~taxpraben.parsing.region.answer_statements` (boxed, answer markers,
    self-corrections; latest first); the
    conclusion statements (latest first); conclusion words, the last ``=``, the last number.
    ``expect_percent``: True when the answer is a rate (a number written with ``%`` is
    preferred wherever several are candidates), False when it is an amount (a number with
    ``%`` is a rate restated beside the amount and is passed over), None for no preference.
    Offsets are -1 except for the last fallbacks (offsets into the cleaned text).
    """
    reading = read_final_number(text, expect_percent=expect_percent)
    return reading.value if isinstance(reading.value, NumberMatch) else None


def read_final_number(
    text: str, *, expect_percent: bool | None = None, query: str = "", chain: tuple[str, ...] | None = None,
    raw: str | None = None,
) -> Reading:
    """:func:`extract_final_number` with the reason when no number is read; with ``query``,
    what the output copies of it and any question it goes on to invent are not read
    (:func:`~taxpraben.parsing.prompt_copy.own_answer`). The reading is the execution of the
    ``number`` chain (``chain``: other rule names, in order;
    :mod:`taxpraben.parsing.number_rules`)."""
    return read_number(text, expect_percent, query, chain, raw)

"""The rules of the letters reader (multiple choice: the set of option letters an output
answers), each an attempt over one :class:`LettersView` of the output, run in the order of
the ``letters`` chain (:data:`taxpraben.parsing.rules.CHAINS`; the procedure is described in
:mod:`taxpraben.parsing.letters`, whose helpers the attempts call)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property, lru_cache, wraps

from taxpraben.parsing._jsonish import answer_text, answer_value, own_json_values
from taxpraben.parsing.chain import Chain
from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.letters import (
    _ALL_OPTIONS,
    _SET_HEDGE,
    LETTER_ANSWER_KEYS,
    _all_or_all_but,
    _groups,
    _lead_letters,
    _option_line_letters,
    _prepare,
    _rejected,
    _statement_letters,
    _verdicts,
    _written_options,
    conclusion_tail,
    listed_option_letters,
    listed_option_texts,
)
from taxpraben.parsing.prompt_copy import COPY_OF_PROMPT, OwnAnswer, own_answer
from taxpraben.parsing.region import (
    HEDGED,
    NO_ANSWER,
    Reading,
    Statement,
    answer_statements,
    lead_sentence,
    lines_last_first,
    settle_final,
    veto_of,
)
from taxpraben.parsing.rules import CHAINS
from taxpraben.parsing.taxben_rules import LETTERS_ATTEMPTS as TAXBEN_LETTERS_ATTEMPTS

__all__ = ["LETTERS_ATTEMPTS", "LettersView", "extract_letter_set", "letters_chain", "read_letter_set", "read_letters"]

_NO_ANSWER = Reading(None, NO_ANSWER, rule=veto_of(NO_ANSWER))


class LettersView:
    """One output as the letters rules read it, built once: cleaned with LaTeX made plain,
    its own answer, the options the question lists, and (on first use) its statements."""

    def __init__(self, text: str, letters: str, query: str, raw: str | None = None) -> None:
        #: The raw output (TaxBen's rules read it).
        self.raw = text if raw is None else raw
        self.query = query
        self.allowed = "".join(sorted(set(letters.upper())))
        self.listed = listed_option_letters(query, self.allowed)
        self.options = listed_option_texts(query)
        self.full = strip_latex(clean_prediction(text))
        self.own: OwnAnswer = own_answer(
            self.full, query,
            options=[self.options[x] for x in sorted(self.options) if x in self.allowed], several=True,
        )
        self.cleaned = self.own.text
        self.empty = not self.cleaned.strip() or not self.allowed

    @cached_property
    def statements(self) -> list[Statement]:
        return answer_statements(self.cleaned)

    @cached_property
    def final(self) -> list[Statement]:
        return [st for st in self.statements if st.kind != "conclusion"]

    @cached_property
    def settled(self) -> tuple[Reading, str] | None:
        """What the final statements give and the rule of the statement that gave it (the
        reading itself is the options restated on the lines after ``答案：B. …`` when those
        are more)."""
        settled = settle_final(
            self.final, lambda st: _statement_letters(st.text, self.allowed, self.listed, st.kind) or None
        )
        if settled is None:
            return None
        reading, given_by = settled
        rule = reading.rule or ""
        if given_by is not None and isinstance(reading.value, frozenset):
            # "答案：B. …" and the options C and D on the next lines: the answer is all of them
            restated = _option_line_letters(self.cleaned, self.query, self.allowed, given_by.start)
            if restated and reading.value < restated:
                return Reading(restated, rule="letters.restated-option-lines",
                               source=self.cleaned[given_by.start :]), rule
        return reading, rule

    @cached_property
    def verdicts(self) -> frozenset[str] | None:
        return _verdicts(self.cleaned, self.allowed, self.query)


LettersAttempt = Callable[[LettersView], Reading | None]


def _on_text(attempt: LettersAttempt) -> LettersAttempt:
    """An attempt that reads the own answer: it does not apply when there is none."""

    @wraps(attempt)
    def guarded(view: LettersView) -> Reading | None:
        return None if view.empty else attempt(view)

    return guarded


def _copy_of_prompt(view: LettersView) -> Reading | None:
    failure = view.own.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure == COPY_OF_PROMPT else None


def _another_question(view: LettersView) -> Reading | None:
    failure = view.own.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure else None


@_on_text
def _hedge(view: LettersView) -> Reading | None:
    hedge = _SET_HEDGE.search(view.cleaned)
    if hedge and set(hedge.group(1)) != set(hedge.group(2)):  # "我认为是ABC，也可能是ABCD"
        return Reading(None, HEDGED, rule="veto.hedge")
    return None


@_on_text
def _json_answer(view: LettersView) -> Reading | None:
    found, value = answer_value(own_json_values(view.full, view.query), LETTER_ANSWER_KEYS)
    if not found:
        return None
    value_text = clean_prediction(answer_text(value))
    from_json = _groups(value_text, view.allowed)
    if not from_json:
        return None
    return Reading(frozenset().union(*(g for _, _, g in from_json)), rule="json.answer-field", source=value_text)


def _settled_by(rule: str) -> LettersAttempt:
    """The attempt of a final-statement rule: what the final statements settle on, when
    settled by ``rule``."""

    @_on_text
    def attempt(view: LettersView) -> Reading | None:
        settled = view.settled
        return settled[0] if settled is not None and settled[1] == rule else None

    return attempt


@_on_text
def _all_or_all_but_attempt(view: LettersView) -> Reading | None:
    # All of them, or all but some ("以上都对", "全选", "除E以外都是", "C项错误，其余均正确").
    whole = _all_or_all_but(view.cleaned, view.listed)
    return Reading(whole, rule="letters.all-or-all-but", source=view.cleaned) if whole else None


@_on_text
def _all_concluded(view: LettersView) -> Reading | None:
    if view.verdicts and _ALL_OPTIONS.search(conclusion_tail(view.cleaned)):
        return Reading(frozenset(view.listed), rule="letters.all-options-concluded", source=conclusion_tail(view.cleaned))
    return None


@_on_text
def _option_verdicts(view: LettersView) -> Reading | None:
    verdicts = view.verdicts
    return Reading(verdicts, rule="letters.option-verdicts", source=view.cleaned) if verdicts else None


@_on_text
def _conclusion(view: LettersView) -> Reading | None:
    for statement in view.statements:
        if statement.kind == "conclusion":
            picked = _statement_letters(statement.text, view.allowed, view.listed, statement.kind)
            if picked:
                return Reading(picked, rule="conclusion.statement", source=statement.full_text)
    return None


@_on_text
def _restated(view: LettersView) -> Reading | None:
    restated = _option_line_letters(view.cleaned, view.query, view.allowed)
    return Reading(restated, rule="letters.restated-option-lines", source=view.cleaned) if restated else None


@_on_text
def _lead(view: LettersView) -> Reading | None:
    lead_text = lead_sentence(view.cleaned)
    lead = _lead_letters(lead_text, view.allowed)
    return Reading(lead, rule="letters.lead-sentence", source=lead_text) if lead else None


@_on_text
def _last_group(view: LettersView) -> Reading | None:
    for line in lines_last_first(view.cleaned):
        prepared = _prepare(line)
        kept = [g for s, e, g in _groups(prepared, view.allowed) if not _rejected(prepared, s, e)]
        if kept:
            value = kept[-1] if len(kept) == 1 else frozenset().union(*kept)
            return Reading(value, rule="letters.last-group", source=line)
    return None


@_on_text
def _named_by_text(view: LettersView) -> Reading | None:
    # No letter anywhere: the options named by their texts alone ("工资、薪金所得、稿酬所得"),
    # in an answer statement or on a line of their own.
    for body in [st.text for st in view.final] + list(lines_last_first(view.cleaned)):
        named = _written_options(body, view.options, view.allowed)
        if named:
            return Reading(named, rule="letters.named-by-text", source=body)
    return None


def _no_answer(view: LettersView) -> Reading | None:
    return _NO_ANSWER


#: Each letters rule's attempt, by rule name.
LETTERS_ATTEMPTS: dict[str, LettersAttempt] = {
    "veto.copy-of-prompt": _copy_of_prompt,
    "veto.another-question": _another_question,
    "veto.hedge": _hedge,
    "json.answer-field": _json_answer,
    "final.self-correction": _settled_by("final.self-correction"),
    "final.answer-statement": _settled_by("final.answer-statement"),
    "final.boxed": _settled_by("final.boxed"),
    "veto.several-answers": _settled_by("veto.several-answers"),
    "letters.all-or-all-but": _all_or_all_but_attempt,
    "letters.all-options-concluded": _all_concluded,
    "letters.option-verdicts": _option_verdicts,
    "conclusion.statement": _conclusion,
    "letters.restated-option-lines": _restated,
    "letters.lead-sentence": _lead,
    "letters.last-group": _last_group,
    "letters.named-by-text": _named_by_text,
    "veto.no-answer": _no_answer,
    **TAXBEN_LETTERS_ATTEMPTS,
}


@lru_cache(maxsize=64)
def letters_chain(names: tuple[str, ...] | None = None) -> Chain[LettersView]:
    """The letters chain: ``names`` in order (default: the ``letters`` chain of the registry)."""
    return Chain("letters", CHAINS["letters"] if names is None else names, LETTERS_ATTEMPTS)


def read_letters(text: str, letters: str, query: str, chain: tuple[str, ...] | None = None,
                 raw: str | None = None) -> Reading:
    """The option letters an output answers, read by the letters chain (``raw``: the output
    before cleaning, when ``text`` is not it)."""
    return letters_chain(chain).run(LettersView(text, letters, query, raw), _NO_ANSWER)


def extract_letter_set(
    text: str, letters: str = "ABCDE", *, query: str = ""
) -> frozenset[str] | None:
    """The set of option letters an output answers, or None (rules in the module docstring).

    ``text`` is the raw output (cleaned here); ``letters`` the allowed option letters, upper
    case; ``query`` the question (what the output copies of it is not read; ``全选`` means
    the options it lists).
    """
    value = read_letter_set(text, letters, query=query).value
    return value if isinstance(value, frozenset) else None


def read_letter_set(
    text: str, letters: str = "ABCDE", *, query: str = "", chain: tuple[str, ...] | None = None,
    raw: str | None = None,
) -> Reading:
    """:func:`extract_letter_set` with the reason when no letter is read: the execution of
    the ``letters`` chain (``chain``: other rule names, in order;
    :mod:`taxpraben.parsing.letters_rules`)."""
    return read_letters(text, letters, query, chain, raw)

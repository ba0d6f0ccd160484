"""The rules of the label reader (classification: which option an output selects), each an
attempt over one :class:`LabelView` of the output, run in the order of the ``label`` chain
(:data:`taxpraben.parsing.rules.CHAINS`; the procedure is described in
:mod:`taxpraben.parsing.choices`, whose helpers the attempts call)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property, lru_cache, wraps
from typing import Required, TypedDict, Unpack

from taxpraben.parsing._jsonish import answer_text, answer_value, own_json_values
from taxpraben.parsing.chain import Chain
from taxpraben.parsing.choice_hedges import Hedge, offered_with_another, without_negated_letters
from taxpraben.parsing.choice_names import choice_needles, named_choices, naming_form
from taxpraben.parsing.choices import (
    _AFFIRMED_LETTER,
    _BARE_SLACK,
    _SEMICOLON,
    _STANDALONE_LETTER,
    _WEAK_LETTER,
    CHOICE_ANSWER_KEYS,
    _answers_listed,
    _bare_line,
    _bold_answer,
    _first_affirmed,
    _first_sentence,
    _lead_answer,
    _numeric_choice,
    _only_letter,
    _read_statement,
    _says_none_correct,
    _several_letters,
    _supposed,
    _without_option_list,
)
from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.prompt_copy import COPY_OF_PROMPT, OwnAnswer, own_answer
from taxpraben.parsing.region import (
    AMBIGUOUS,
    HEDGED,
    NO_ANSWER,
    NONE_CORRECT,
    NOT_AN_OPTION,
    NOT_ASSERTED,
    Reading,
    Statement,
    answer_statements,
    conclusion_sentence,
    lead_sentence,
    settle_final,
    veto_of,
)
from taxpraben.parsing.rules import CHAINS
from taxpraben.parsing.taxben_rules import LABEL_ATTEMPTS as TAXBEN_LABEL_ATTEMPTS

__all__ = ["LABEL_ATTEMPTS", "ChoiceOptions", "LabelView", "extract_choice", "label_chain", "read_choice"]

_HEDGE = Reading(None, HEDGED, rule="veto.hedge")
_NO_ANSWER = Reading(None, NO_ANSWER, rule=veto_of(NO_ANSWER))


class LabelView:
    """One output as the label rules read it, built once: cleaned with LaTeX made plain,
    its own answer, and (on first use) its statements, lines, the options it names."""

    def __init__(
        self,
        text: str,
        choices: Sequence[str],
        lettered: bool,
        markers: Sequence[str],
        query: str,
        aliases: Mapping[str, Sequence[str]] | None,
        names: Sequence[str] | None,
        raw: str | None = None,
    ) -> None:
        #: The raw output (TaxBen's rules read it) and the choices as the record has them.
        self.raw = text if raw is None else raw
        self.choices = choices
        self.count = len(choices)
        self.texts = list(names) if names is not None and len(names) == self.count else list(choices)
        self.lettered = lettered
        self.markers = markers
        self.query = query
        self.aliases = aliases
        self.full = strip_latex(clean_prediction(text))
        self.own: OwnAnswer = own_answer(self.full, query, options=self.texts)
        self.cleaned = self.own.text
        #: Nothing to read: no own answer, or no options.
        self.empty = not self.cleaned.strip() or not choices
        #: The options given by the final statements read so far (latest first).
        self.answered: list[int] = []

    @cached_property
    def needles(self) -> list[tuple[str, int]]:
        return _needles(tuple(self.texts), self.aliases)

    def read(self, body: str, correction: bool = False) -> int | None:
        """The option a statement gives (raises Hedge when it offers two)."""
        picked = _read_statement(body, self.count, self.lettered, self.needles, self.texts, correction=correction)
        if picked is not None and offered_with_another(
            _first_sentence(body), picked, self.count, self.lettered, self.needles
        ):
            raise Hedge  # "同时构成骗取出口退税罪和虚开增值税专用发票罪"
        return picked

    @cached_property
    def final(self) -> list[Statement]:
        return [st for st in answer_statements(self.cleaned, self.markers) if st.kind != "conclusion"]

    @cached_property
    def settled(self) -> Reading | None:
        """What the final statements give (region.settle_final), the hedge of one, or None."""

        def read_final(st: Statement) -> int | None:
            # Latest first: a hedge ("因此选AB") that a later statement has answered ("答案：A")
            # is superseded by it; the latest answer statement hedging leaves the answer hedged.
            try:
                picked = self.read(st.text, st.kind == "correction")
            except Hedge:
                if self.answered:
                    return None
                raise
            if picked is not None:
                self.answered.append(picked)
            return picked

        try:
            settled = settle_final(self.final, read_final)
        except Hedge:
            return _HEDGE
        return None if settled is None else settled[0]

    @cached_property
    def listless(self) -> str:
        """The own answer without runs of option lines (the options restated one by one)."""
        return _without_option_list(self.cleaned)

    @cached_property
    def lines(self) -> list[str]:
        return [line for line in self.listless.split("\n") if line.strip()]

    @cached_property
    def longest(self) -> int:
        return max(len(needle) for needle, _ in self.needles) if self.needles else 0

    def bare(self, line: str) -> int | None:
        return _bare_line(line, self.count, self.lettered, self.needles)

    @cached_property
    def lead_text(self) -> str:
        return lead_sentence(self.listless)

    @cached_property
    def last(self) -> str:
        return conclusion_sentence(self.listless)

    def offered(self, sentence: str, picked: int) -> bool:
        return offered_with_another(sentence, picked, self.count, self.lettered, self.needles)


#: The needles of each record's options, kept across outputs (a task's records repeat the same
#: options and aliases; the aliases are the spec's own mapping, kept with them to be sure).
_NEEDLES: dict[tuple[tuple[str, ...], int], tuple[Mapping[str, Sequence[str]] | None, list[tuple[str, int]]]] = {}
_MAX_NEEDLES = 4096


def _needles(texts: tuple[str, ...], aliases: Mapping[str, Sequence[str]] | None) -> list[tuple[str, int]]:
    key = (texts, id(aliases))
    kept = _NEEDLES.get(key)
    if kept is not None and kept[0] is aliases:
        return kept[1]
    needles = choice_needles(texts, aliases)
    if len(_NEEDLES) >= _MAX_NEEDLES:
        _NEEDLES.clear()
    _NEEDLES[key] = (aliases, needles)
    return needles


LabelAttempt = Callable[[LabelView], Reading | None]


def _on_text(attempt: LabelAttempt) -> LabelAttempt:
    """An attempt that reads the own answer: it does not apply when there is none, and a
    hedge met while reading is the veto ``veto.hedge``."""

    @wraps(attempt)
    def guarded(view: LabelView) -> Reading | None:
        if view.empty:
            return None
        try:
            return attempt(view)
        except Hedge:
            return _HEDGE

    return guarded


def _copy_of_prompt(view: LabelView) -> Reading | None:
    failure = view.own.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure == COPY_OF_PROMPT else None


def _another_question(view: LabelView) -> Reading | None:
    failure = view.own.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure else None


@_on_text
def _json_answer(view: LabelView) -> Reading | None:
    found, value = answer_value(own_json_values(view.full, view.query), CHOICE_ANSWER_KEYS)
    if not found:
        return None
    value_text = strip_latex(clean_prediction(answer_text(value, " ", dict_values=True)))
    if not value_text:
        return None
    folded = naming_form(value_text.strip(" .。、:：*"))
    for index, choice in enumerate(view.texts):
        if naming_form(str(choice)) == folded:
            return Reading(index, rule="json.answer-field", source=value_text)
    picked = view.read(value_text)
    return None if picked is None else Reading(picked, rule="json.answer-field", source=value_text)


@_on_text
def _answers_hedged(view: LabelView) -> Reading | None:
    return _HEDGE if _answers_listed(view.cleaned, view.count, view.lettered, view.needles) else None


@_on_text
def _none_correct(view: LabelView) -> Reading | None:
    if view.final:
        decisive = view.final[0].text
    else:
        lines = [line for line in view.cleaned.split("\n") if line.strip()]
        decisive = lines[-1] if lines else ""
    if _says_none_correct(decisive, view.texts):
        return Reading(None, NONE_CORRECT, rule=veto_of(NONE_CORRECT))
    return None


def _settled_by(*rules: str) -> LabelAttempt:
    """The attempt of a final-statement rule: what the final statements settle on, when
    settled by one of ``rules``."""

    @_on_text
    def attempt(view: LabelView) -> Reading | None:
        settled = view.settled
        return settled if settled is not None and settled.rule in rules else None

    return attempt


@_on_text
def _not_an_option(view: LabelView) -> Reading | None:
    if view.settled is None and any(st.kind == "boxed" and st.text.strip() for st in view.final):
        return Reading(None, NOT_AN_OPTION, rule=veto_of(NOT_AN_OPTION))  # boxed, and none of the options
    return None


@_on_text
def _bare_answer(view: LabelView) -> Reading | None:
    lines = view.lines
    if len(lines) > 1 and len(view.listless) <= view.longest + _BARE_SLACK:  # one option over two lines
        picked = view.bare(" ".join(lines))
        if picked is not None:
            return Reading(picked, rule="choice.bare-answer", source=view.listless)
    bare = [view.bare(line) if len(line) <= view.longest + _BARE_SLACK else None for line in lines]
    if len(lines) > 1 and None not in bare and len(set(bare)) > 1:
        return Reading(None, AMBIGUOUS, rule="veto.several-answers")  # different answers ("增值税\n消费税")
    for line, picked in zip(reversed(lines), reversed(bare), strict=True):  # the latest bare answer line
        if picked is not None:
            return Reading(picked, rule="choice.bare-answer", source=line)
    return None


@_on_text
def _bold(view: LabelView) -> Reading | None:
    bold = _bold_answer(view.listless, view.count, view.lettered, view.needles)
    return None if bold is None else Reading(bold[0], rule="choice.bold-answer", source=bold[1])


@_on_text
def _conclusion(view: LabelView) -> Reading | None:
    for statement in answer_statements(view.listless, view.markers):
        if statement.kind == "conclusion" and not _supposed(view.listless, statement.start):
            # a conclusion holds its answer before its first semicolon ("因此X；另外……")
            body = _SEMICOLON.split(statement.text, maxsplit=1)[0]
            picked = view.read(body)
            if picked is not None:
                return Reading(picked, rule="conclusion.statement", source=statement.marker + body)
    return None


@_on_text
def _several_letters_first(view: LabelView) -> Reading | None:
    if view.lettered and _several_letters(view.lead_text, view.count):
        return Reading(None, AMBIGUOUS, rule="veto.several-letters")
    return None


def _asserted(view: LabelView, picked: int | None, rule: str, sentence: str) -> Reading | None:
    """``picked`` read by ``rule`` from ``sentence``, unless it offers another option too."""
    if picked is None:
        return None
    if view.offered(sentence, picked):
        return _HEDGE
    return Reading(picked, rule=rule, source=sentence)


@_on_text
def _lead(view: LabelView) -> Reading | None:
    # Asserted without a marker: the lead sentence answers first ("B. 区群/层次谬误。……",
    # "C是正确答案。", "最重要的并发症可能是感染性心内膜炎。……")
    lead = _lead_answer(view.lead_text, view.count, view.lettered, view.needles)
    return _asserted(view, lead, "choice.lead-sentence", view.lead_text)


@_on_text
def _named_last(view: LabelView) -> Reading | None:
    return _asserted(view, _first_affirmed(view.last, view.needles), "choice.named-in-last-sentence", view.last)


@_on_text
def _value_last(view: LabelView) -> Reading | None:
    return _asserted(view, _numeric_choice(view.last, view.texts), "choice.value-in-last-sentence", view.last)


@_on_text
def _letter_last(view: LabelView) -> Reading | None:
    if not view.lettered:
        return None
    for pattern in (_WEAK_LETTER, _AFFIRMED_LETTER, _STANDALONE_LETTER):
        picked = _only_letter(pattern, without_negated_letters(view.last), view.count)
        if picked is not None:
            return _asserted(view, picked, "choice.letter-in-last-sentence", view.last)
    return None


@_on_text
def _not_asserted(view: LabelView) -> Reading | None:
    if named_choices(view.listless, view.needles) or (view.lettered and _STANDALONE_LETTER.search(view.listless)):
        return Reading(None, NOT_ASSERTED, rule=veto_of(NOT_ASSERTED))
    return None


def _no_answer(view: LabelView) -> Reading | None:
    return _NO_ANSWER


#: Each label rule's attempt, by rule name.
LABEL_ATTEMPTS: dict[str, LabelAttempt] = {
    "veto.copy-of-prompt": _copy_of_prompt,
    "veto.another-question": _another_question,
    "json.answer-field": _json_answer,
    "veto.hedge": _answers_hedged,
    "veto.none-correct": _none_correct,
    "final.self-correction": _settled_by("final.self-correction"),
    "final.answer-statement": _settled_by("final.answer-statement", "veto.hedge"),
    "final.boxed": _settled_by("final.boxed"),
    "veto.several-answers": _settled_by("veto.several-answers"),
    "veto.not-an-option": _not_an_option,
    "choice.bare-answer": _bare_answer,
    "choice.bold-answer": _bold,
    "conclusion.statement": _conclusion,
    "veto.several-letters": _several_letters_first,
    "choice.lead-sentence": _lead,
    "choice.named-in-last-sentence": _named_last,
    "choice.value-in-last-sentence": _value_last,
    "choice.letter-in-last-sentence": _letter_last,
    "veto.not-asserted": _not_asserted,
    "veto.no-answer": _no_answer,
    **TAXBEN_LABEL_ATTEMPTS,
}


@lru_cache(maxsize=64)
def label_chain(names: tuple[str, ...] | None = None) -> Chain[LabelView]:
    """The label chain: ``names`` in order (default: the ``label`` chain of the registry)."""
    return Chain("label", CHAINS["label"] if names is None else names, LABEL_ATTEMPTS)


def read_choice(
    text: str,
    choices: Sequence[str],
    *,
    option_letters: bool,
    markers: Sequence[str],
    query: str = "",
    aliases: Mapping[str, Sequence[str]] | None = None,
    names: Sequence[str] | None = None,
    chain: tuple[str, ...] | None = None,
    raw: str | None = None,
) -> Reading:
    """The index of the option an output selects (rules in the module docstring), or why no
    option is read (:class:`~taxpraben.parsing.region.Reading`).

    ``text`` is the raw model output (it is cleaned here); ``choices`` are the labels in
    option order; ``option_letters`` says whether the choices were shown as A, B, C, ...;
    ``markers`` are the task's conclusion phrases (``answer_markers``); ``query`` is the
    question (what the output copies of it is not read); ``aliases`` are other
    names of a choice (keyed by choice text); ``names`` are the texts an output may name
    the options by when they differ from ``choices`` (choices stored as letters, texts in
    the query). A hedge between two options ("B或D") selects none. The reading is the
    execution of the ``label`` chain (``chain``: other rule names, in order;
    :mod:`taxpraben.parsing.label_rules`). ``raw``: the output before any cleaning, when
    ``text`` is not it (TaxBen's rules read it).
    """
    view = LabelView(text, choices, option_letters, markers, query, aliases, names, raw)
    return label_chain(chain).run(view, _NO_ANSWER)


class ChoiceOptions(TypedDict, total=False):
    """:func:`read_choice`'s keyword arguments that :func:`extract_choice` passes on."""

    option_letters: Required[bool]
    markers: Required[Sequence[str]]
    query: str
    aliases: Mapping[str, Sequence[str]] | None


def extract_choice(text: str, choices: Sequence[str], **options: Unpack[ChoiceOptions]) -> str | None:
    """The choice an output selects (``choices[read_choice(...).value]``), or None."""
    index = read_choice(text, choices, **options).value
    return choices[index] if isinstance(index, int) else None

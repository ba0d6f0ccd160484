"""The rules of the span reader (reading tasks: the stretch of an output that answers),
each an attempt over one :class:`SpanView` of the output, run in the order of the ``span``
chain (:data:`taxpraben.parsing.rules.CHAINS`; the procedure is described in
:mod:`taxpraben.parsing.spans`, whose helpers the attempts call).

A span veto keeps, as its value, the span the output would have given (``""`` for a copy
of the prompt, the refusal itself): samples.jsonl writes it as ``extracted``."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property, lru_cache, wraps

from taxpraben.parsing.chain import Chain
from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.prompt_copy import COPY_OF_PROMPT, own_answer, restates_document
from taxpraben.parsing.region import NO_ANSWER, REFUSAL, Reading, is_refusal, veto_of
from taxpraben.parsing.rules import CHAINS
from taxpraben.parsing.spans import _BARE_SPAN, _SENTENCE_END, _answer_texts, _marked_span, _span_of
from taxpraben.parsing.taxben_rules import SPAN_ATTEMPTS as TAXBEN_SPAN_ATTEMPTS

__all__ = ["SPAN_ATTEMPTS", "SpanView", "extract_span", "read_span", "read_span_answer", "span_chain", "span_reading"]


class SpanView:
    """One output as the span rules read it: ``text`` the model's own answer (``""`` for a
    copy of the prompt, ``failure`` then says which), ``cleaned`` it cleaned with LaTeX made
    plain, and (on first use) the texts that may hold the answer. ``checks``: an empty span
    and a refusal are vetoes (the task reader); off, the span is what the output gives."""

    def __init__(self, text: str, clause: bool, failure: str | None = None, checks: bool = True,
                 raw: str | None = None, gold: str | None = None) -> None:
        #: The raw output and the gold (TaxBen's rule R1 looks for the gold in the raw output).
        self.raw = text if raw is None else raw
        self.gold = gold
        self.text = text
        self.clause = clause
        self.failure = failure
        self.checks = checks
        self.cleaned = strip_latex(clean_prediction(text))

    @classmethod
    def of_output(cls, output: str, query: str, document: str | None, clause: bool,
                  raw: str | None = None, gold: str | None = None) -> SpanView:
        """The view of a task's output: its own answer, what it copies of the prompt (the
        question, or the document restated whole) blanked; ``raw`` the output before
        cleaning (``output`` when None), ``gold`` the record's gold."""
        cleaned = strip_latex(clean_prediction(output))
        own = own_answer(cleaned, query, document=document)
        failure = own.failure
        if failure is None and document and restates_document(cleaned, query, document):
            failure = COPY_OF_PROMPT  # the material written back whole
        return cls(own.text if failure is None else "", clause, failure, raw=output if raw is None else raw, gold=gold)

    @cached_property
    def texts(self) -> list[tuple[str, str]]:
        return _answer_texts(self.cleaned)

    def result(self, span: str, rule: str) -> Reading:
        """``span`` read by ``rule``; with checks, an empty span or a refusal is a veto."""
        if self.checks and (not span.strip() or (span == self.text and is_refusal(self.text))):
            failure = REFUSAL if is_refusal(self.text) else NO_ANSWER
            return Reading(span, failure, rule=veto_of(failure))
        return Reading(span, rule=rule, source=span)


SpanAttempt = Callable[[SpanView], Reading | None]


def _on_text(attempt: SpanAttempt) -> SpanAttempt:
    """An attempt that reads the output: it does not apply when it is empty or a copy."""

    @wraps(attempt)
    def guarded(view: SpanView) -> Reading | None:
        return None if view.failure or not view.cleaned else attempt(view)

    return guarded


def _copy_of_prompt(view: SpanView) -> Reading | None:
    failure = view.failure
    return Reading("", failure, rule=veto_of(failure)) if failure == COPY_OF_PROMPT else None


def _another_question(view: SpanView) -> Reading | None:
    failure = view.failure
    return Reading("", failure, rule=veto_of(failure)) if failure else None


def _texts_of(rule: str) -> SpanAttempt:
    """The attempt of a rule that names texts holding the answer (a JSON answer field, the
    answer statements): the span of the first that gives one."""

    @_on_text
    def attempt(view: SpanView) -> Reading | None:
        for body, named_by in view.texts[:-1]:
            span = _span_of(body, view.clause)
            if span:
                return view.result(span, rule) if named_by == rule else None
        return None

    return attempt


@_on_text
def _marked(view: SpanView) -> Reading | None:
    marked = _marked_span(view.cleaned, view.clause)
    return view.result(marked, "span.marked") if marked else None


def _is_bare(cleaned: str) -> bool:
    return len(cleaned.strip()) <= _BARE_SPAN and not _SENTENCE_END.search(cleaned.strip().rstrip("。.！!"))


@_on_text
def _refusal(view: SpanView) -> Reading | None:
    # What is left is the output itself: a refusal is no answer.
    if view.checks and is_refusal(view.text) and (view.cleaned == view.text or not view.cleaned.strip()):
        return Reading(view.cleaned, REFUSAL, rule="veto.refusal")
    return None


@_on_text
def _bare(view: SpanView) -> Reading | None:
    return view.result(view.cleaned, "span.bare-answer") if _is_bare(view.cleaned) else None


def _whole(view: SpanView) -> Reading | None:
    return None if view.failure else view.result(view.cleaned, "span.whole-output")


def _no_answer(view: SpanView) -> Reading | None:
    return Reading("", NO_ANSWER, rule=veto_of(NO_ANSWER)) if view.checks else None


#: Each span rule's attempt, by rule name.
SPAN_ATTEMPTS: dict[str, SpanAttempt] = {
    "veto.copy-of-prompt": _copy_of_prompt,
    "veto.another-question": _another_question,
    "json.answer-field": _texts_of("json.answer-field"),
    "span.answer-statement": _texts_of("span.answer-statement"),
    "span.marked": _marked,
    "veto.refusal": _refusal,
    "span.bare-answer": _bare,
    "span.whole-output": _whole,
    "veto.no-answer": _no_answer,
    **TAXBEN_SPAN_ATTEMPTS,
}


@lru_cache(maxsize=64)
def span_chain(names: tuple[str, ...] | None = None) -> Chain[SpanView]:
    """The span chain: ``names`` in order (default: the ``span`` chain of the registry)."""
    return Chain("span", CHAINS["span"] if names is None else names, SPAN_ATTEMPTS)


def span_reading(text: str, clause: bool, chain: tuple[str, ...] | None = None) -> Reading:
    """The span of ``text`` as the chain reads it, with no checks (a refusal is its span)."""
    view = SpanView(text, clause, checks=False)
    return span_chain(chain).run(view, Reading("", rule="span.whole-output", source=""))


def read_span_answer(
    output: str, query: str, document: str | None, clause: bool, chain: tuple[str, ...] | None = None,
    raw: str | None = None, gold: str | None = None,
) -> tuple[Reading, str]:
    """A reading task's answer: the span the chain reads (a veto: why none, its value the
    span it would have been), and the own answer it was read from (``raw``: the output before
    cleaning when ``output`` is not it; ``gold``: the record's gold, for TaxBen's rule)."""
    view = SpanView.of_output(output, query, document, clause, raw, gold)
    reading = span_chain(chain).run(view, Reading("", NO_ANSWER, rule=veto_of(NO_ANSWER)))
    return reading, view.text


def extract_span(text: str, *, clause: bool = True) -> str:
    """The answer span of an output (rules in the module docstring); may be empty.

    ``clause`` ends a span at the first Chinese comma as well as at the end of the sentence.
    """
    return str(read_span(text, clause=clause).value)


def read_span(text: str, *, clause: bool = True) -> Reading:
    """:func:`extract_span` as a reading: the span (also its ``source``) and the rule that
    found it: ``json.answer-field``, ``span.answer-statement``, ``span.marked`` (a bold,
    quoted or titled span of the output), ``span.bare-answer`` or ``span.whole-output``; the
    ``span`` chain without its vetoes (:func:`taxpraben.parsing.span_rules.read_span_answer`
    reads a task's output with them)."""
    return span_reading(text, clause)

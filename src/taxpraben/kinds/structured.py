"""Structured prediction (TaxRead, TaxCalc, TaxMCQ): Exact Match after honest normalisation.

The spec's ``structured.kind`` says what the answer is: a ``number`` (both sides in the
gold's unit, compared at N decimals), a set of option ``letters``, or a ``span`` of the
context. The chain named ``taxben`` reads by TaxBen's own rules on the raw output instead;
its values say how they match the gold (:class:`~taxpraben.parsing.readers.taxben.ComparedAnswer`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from taxpraben.kinds.base import (
    Kind,
    Metric,
    Prepared,
    SpecMismatch,
    chain_for,
    noted,
)

if TYPE_CHECKING:
    import random

    from taxpraben.parsing.numbers import NumberMatch
    from taxpraben.parsing.region import Reading
    from taxpraben.records import Record
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.results.samples import Sample, Status
    from taxpraben.task_spec import TaskSpec

_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")


class StructuredKind(Kind):
    name = "structured"
    label = "Structured"
    sections = frozenset({"structured"})
    declared = (Metric("em", "EM", "exact match after normalisation", column=40),)

    def check_spec(self, spec: TaskSpec) -> None:
        if spec.structured is None:
            raise SpecMismatch("structured", "a structured task needs a 'structured' section (kind: number|letters|span)")
        super().check_spec(spec)

    # ------------------------------------------------------------------ data

    def check_gold(self, spec: TaskSpec, obj: JSONObject, answer: JSONValue, choices: tuple[str, ...] | None,
                   bad: Callable[[str, str], None]) -> tuple[JSONValue, int | None]:
        assert spec.structured is not None
        kind = spec.structured.kind
        if answer is None:
            return answer, None
        if kind == "number":
            from taxpraben.parsing.numbers import parse_gold_number

            # Units are kept as written ("76000元", "17.14万元"): the number reader reads them.
            try:
                parse_gold_number(answer)
            except ValueError:
                bad(f"a {spec.name} gold must be a number, got {answer!r}", "answer")
        elif kind == "letters":
            letters = spec.structured.letters
            value = answer if isinstance(answer, str) else ""
            if not value or any(ch not in letters for ch in value):
                bad(f"a {spec.name} gold must be option letters from {letters!r} such as 'ACD', got {answer!r}", "answer")
        return answer, None

    def baseline_answer(self, baseline: str, spec: TaskSpec, record: Record, rng: random.Random) -> str | None:
        assert spec.structured is not None
        kind, letters = spec.structured.kind, spec.structured.letters
        if record.choices:
            return None
        context = record.text if record.text else record.query
        if baseline == "first-choice" and kind == "letters":
            return letters[0]
        if baseline != "random":
            return None
        if kind == "letters":
            k = rng.randint(1, len(letters))
            return "".join(sorted(rng.sample(letters, k)))
        if kind == "number":
            numbers = _NUMBER.findall(record.query)
            return rng.choice(numbers) if numbers else str(rng.randint(0, 10000))
        size = min(len(context), rng.randint(2, 12))  # a span: a few characters of context
        start = rng.randint(0, max(0, len(context) - size))
        return context[start : start + size]


    def reading_kind(self, spec: TaskSpec) -> str:
        assert spec.structured is not None
        return spec.structured.kind

    # ------------------------------------------------------------------ items

    def prepare(self, spec: TaskSpec, record: Record, item: Sample, text: str, failed: bool) -> Prepared:
        # The readers are imported on first use: loading the specs and the data needs the
        # kind, not them (their patterns compile at import: start-up, issue 24).
        from taxpraben.parsing.readers.taxben import ComparedAnswer
        from taxpraben.parsing.region import NO_ANSWER, veto_of

        opts = spec.structured
        assert opts is not None
        if failed:
            return Prepared("error", scores={"em": 0.0})
        reading, own_text = _read(spec, record, text, item.text)
        if isinstance(reading.value, ComparedAnswer):  # it says how it matches the gold (TaxBen's values)
            compared = Compared(float(reading.value.matches(record.answer)), [], reading.value.extracted,
                                reading.failure, reading.failure is None)  # fmt: skip
        else:
            compared = _compare(opts.kind, spec, record, reading, own_text)
        status: Status = "ok" if compared.read else "format_failure"
        failure = compared.failure if compared.read else (compared.failure or NO_ANSWER)
        rule = reading.rule if status == "ok" else (reading.rule or veto_of(failure or NO_ANSWER))
        how = noted(status, item.text, rule, reading.source, compared.answers, reading.span)
        if how.confidence == "high":
            from taxpraben.parsing.doubt import doubt

            if doubt(opts.kind, text, compared.extracted, how.read_by, record.query) is not None:
                how = replace(how, confidence="low")  # a sure rule on an output in doubt
        return Prepared(status, compared.extracted, failure, {"em": compared.em}, reading=how)


@dataclass(frozen=True)
class Compared:
    """What was read compared with the gold: the exact match, the texts the answer may be
    written as (for its evidence), the extracted answer, why none was read, whether one was."""

    em: float
    answers: list[str]
    extracted: JSONValue
    failure: str | None
    read: bool


def _read(spec: TaskSpec, record: Record, text: str, raw: str) -> tuple[Reading, str]:
    """The output read by the spec's chain of its structured kind, and the own answer a span
    was read from (the text otherwise)."""
    from taxpraben.parsing.readers.letters import read_letter_set
    from taxpraben.parsing.readers.number import read_final_number
    from taxpraben.parsing.readers.span import read_span_answer

    opts = spec.structured
    assert opts is not None
    chain = chain_for(spec, opts.kind)
    if opts.kind == "number":
        return read_final_number(text, expect_percent=_expects_percent(record), query=record.query,
                                 chain=chain, raw=raw), text  # fmt: skip
    if opts.kind == "letters":
        return read_letter_set(text, opts.letters, query=record.query, chain=chain, raw=raw), text
    # span: the answer is a stretch of the document, so only the rest of the prompt
    # (instruction, question) counts as copied
    return read_span_answer(text, record.query, record.text, "，" not in record.answer_text, chain,
                            raw=raw, gold=record.answer_text)  # fmt: skip


def _expects_percent(record: Record) -> bool | None:
    from taxpraben.parsing.numbers import expects_percent, read_gold_number
    from taxpraben.parsing.units import gold_unit

    return expects_percent(gold_unit(record.answer, record.query).convert(read_gold_number(record.answer)),
                           record.query)


def _compare(kind: str, spec: TaskSpec, record: Record, reading: Reading, own_text: str) -> Compared:
    """This project's comparison of what was read with the gold."""
    from taxpraben.parsing.numbers import asks_for_rate, numbers_equal, read_gold_number
    from taxpraben.parsing.readers.span import span_match
    from taxpraben.parsing.span_words import question_of
    from taxpraben.parsing.units import YUAN, figures_scale, gold_unit, same_amount_at_scale

    opts = spec.structured
    assert opts is not None
    if kind == "number":
        # Both sides in the gold's unit: the one its text is written in, else the one the
        # question asks for, else the one the output gives the prompt's own figures
        # (parsing.units.gold_unit); compared at N decimals of it.
        match = cast("NumberMatch | None", reading.value)
        # an answer with a multiplier may be in the unit the output gives the prompt's figures
        unit = gold_unit(record.answer, record.query, own_text if match is not None and match.scaled else "")
        gold = unit.convert(read_gold_number(record.answer))
        if match is None:
            return Compared(0.0, [], None, reading.failure, False)
        answers = [match.text]
        match = unit.convert(match)
        if match.refund and gold.value < 0 < match.value:  # "应退税2520元" for gold -2520
            match = replace(match, value=-match.value)
        em = numbers_equal(match, gold, decimals=opts.decimals, percent_as_fraction=opts.percent_as_fraction)
        if not em and opts.percent_as_fraction and not match.is_percent and not gold.is_percent \
                and abs(gold.value) <= 1 and asks_for_rate(question_of(record.query)):
            # a bare number answering "what is the percentage change …" in percent points
            # ("-4.38" for the gold -0.044), as models told "no units" write it
            em = numbers_equal(replace(match, is_percent=True), gold, decimals=opts.decimals)
        if not em and unit.factor == 1 and (scale := figures_scale(record.query, own_text)) is not None:
            # figures in thousands (millions): "$24,584,000" is the table's 24,584, either way round
            em = same_amount_at_scale(match, gold, scale, opts.decimals)
        shown = YUAN.show(match.value) + "%" if match.is_percent else unit.show(match.value)  # "5%", not "5万元%"
        return Compared(float(em), answers, shown,
                        reading.failure, True)  # fmt: skip
    if kind == "letters":
        letters = cast("frozenset[str] | None", reading.value)
        if letters is None:
            return Compared(0.0, [], None, reading.failure, False)
        extracted = "".join(sorted(letters))
        return Compared(float(letters == frozenset(str(record.answer).strip().upper())), [extracted], extracted,
                        reading.failure, True)  # fmt: skip
    span = "" if reading.value is None else str(reading.value)
    if reading.failure is not None:
        return Compared(0.0, [span], span, reading.failure, False)
    return Compared(float(span_match(own_text, record.answer_text, question_of(record.query))), [span], span, None, True)


KIND = StructuredKind()

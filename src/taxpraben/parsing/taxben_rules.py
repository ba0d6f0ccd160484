"""TaxBen's rules as attempts of the chains named ``taxben`` (:data:`taxpraben.parsing.rules.TAXBEN_CHAINS`).

The matchers of TaxBen's rules are here too (C3, M1-M2, K1-K2, K4-K5, R1: the rule ids and
TaxBen's lines are in :mod:`taxpraben.parsing.taxben`, which restates ``process_results`` with
them): the readers import this module, and :mod:`~taxpraben.parsing.taxben` imports the number
reader (K3's stand-in).

Each attempt reads the **raw** output (every kind's view keeps it as ``raw``) by one rule and says where: its ``span`` is the stretch of the raw output
it read (the choice it found, the letter run, the gold's occurrence, the number expression;
the whole output for the rules that read it whole). Each kind's reader merges these attempts
into its own (``LABEL_ATTEMPTS``, ...), so the chain named ``taxben`` runs as any other.

What TaxBen reads is compared with the gold as TaxBen compares it; the values say how
(:class:`ComparedAnswer`: a letter string equal to the gold string, a ``"{:.2f}"`` string equal
to the gold's, the gold found in the output). The label reader's value stays an option index:
TaxBen's labels (lower-cased choices) are the comparison its rule declares
(:attr:`~taxpraben.parsing.rules.Rule.comparison`, see :mod:`taxpraben.kinds.classification`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from taxpraben.parsing.region import NO_ANSWER, Reading, veto_of

__all__ = [
    "LABEL_ATTEMPTS",
    "LETTERS_ATTEMPTS",
    "NUMBER_ATTEMPTS",
    "SPAN_ATTEMPTS",
    "TEXT_ATTEMPTS",
    "UNKNOWN",
    "AmountString",
    "ComparedAnswer",
    "GoldInOutput",
    "LetterString",
    "calc_direct",
    "calc_from_reader_answer",
    "calc_gold",
    "classification_match",
    "mcq_run",
    "read_correct",
]

#: TaxBen's TaxCalc answer when no number is found (L454; also what its GPT prompt asks for).
UNKNOWN = "未知"

_MCQ_RUN = re.compile(r"[ABCDE](?:\W*[ABCDE]){1,4}")  # M1, L322
_NOT_LETTER = re.compile(r"[^A-Z]")  # M2, L324
_BEFORE_YUAN = re.compile(r"([-+]?\d*\.?\d+)\s?(?=万元|元)")  # K4, L444
_AFTER_BAIFENZHI = re.compile(r"(?<=百分之)\d*\.?\d+")  # K4, L446


# --- the matchers (the rule ids and TaxBen's lines: taxpraben.parsing.taxben) ------------


def classification_match(output: str, choices: Sequence[str]) -> tuple[int, tuple[int, int]] | None:
    """C2-C4 with where: the index of the first choice in list order whose lower-cased text
    is in the stripped, lower-cased output, and the offsets of its first occurrence in
    ``output`` (the whole output when lower-casing changed the text's length); or None."""
    stripped = output.strip()
    haystack = stripped.lower()
    for index, choice in enumerate(choices):
        label = choice.lower()
        at = haystack.find(label)
        if at >= 0:
            if len(haystack) != len(stripped):
                return index, (0, len(output))
            start = output.find(stripped) + at
            return index, (start, start + len(label))
    return None


def mcq_run(output: str) -> tuple[str, tuple[int, int]] | None:
    """M1-M2 with where: the letters of the first option run and its offsets; or None."""
    run = _MCQ_RUN.search(output)
    return None if run is None else (_NOT_LETTER.sub("", run.group(0)), run.span())


def calc_gold(answer: object) -> str | None:
    """K1: the gold as ``"{:.2f}"`` of ``float(answer)``, or None when float() cannot read it."""
    try:
        return f"{float(answer):.2f}"  # type: ignore[arg-type]  # any gold: float() refusing it is K1's None
    except (ValueError, TypeError, OverflowError):
        return None


def calc_direct(output: str) -> str | None:
    """K2: ``round(float(output), 2)`` formatted, or None when float() rejects the output."""
    try:
        value = float(output)
    except ValueError:
        return None
    return f"{round(value, 2):.2f}"


def calc_from_reader_answer(answer: str) -> str:
    """K4-K5: TaxBen's post-processing of the extracted answer into a ``"{:.2f}"`` string.

    The number written before 万元/元 (unscaled), else the Arabic number after 百分之,
    else ``"未知"``.
    """
    found = _BEFORE_YUAN.search(answer)
    number = found.group(1) if found else None
    if number is None:
        percent = _AFTER_BAIFENZHI.search(answer)
        number = percent.group(0) if percent else None
    return UNKNOWN if number is None else f"{float(number):.2f}"


def read_correct(output: str, gold: str) -> bool:
    """R1: whether the gold, as written, is a substring of the raw output."""
    return gold in output


class ComparedAnswer:
    """A value that knows how it matches the gold (TaxBen's comparisons): ``extracted`` is
    what samples.jsonl writes, :meth:`matches` whether it is right (whatever the status:
    TaxBen scores a format failure as it scores the rest)."""

    @property
    def extracted(self) -> str | None:
        raise NotImplementedError

    def matches(self, gold: object) -> bool:
        raise NotImplementedError

    def __str__(self) -> str:
        return str(self.extracted)


@dataclass(frozen=True)
class LetterString(ComparedAnswer):
    """M2-M3: the letters of the run in output order, duplicates kept; right when equal to
    the gold string as written (``"DA"`` is wrong for ``"AD"``)."""

    letters: str

    @property
    def extracted(self) -> str:
        return self.letters

    def matches(self, gold: object) -> bool:
        return self.letters == gold


@dataclass(frozen=True)
class AmountString(ComparedAnswer):
    """K2-K5: TaxBen's ``"{:.2f}"`` string (or ``"未知"``); right when equal to the gold's
    ``"{:.2f}"`` string (K1: a gold ``float()`` cannot read is never matched)."""

    text: str

    @property
    def extracted(self) -> str:
        return self.text

    def matches(self, gold: object) -> bool:
        expected = calc_gold(gold)
        return expected is not None and self.text == expected


@dataclass(frozen=True)
class GoldInOutput(ComparedAnswer):
    """R1: whether the gold, as written, occurs in the raw output; the extracted answer is
    the gold when it does."""

    gold: str
    found: bool

    @property
    def extracted(self) -> str | None:
        return self.gold if self.found else None

    def matches(self, gold: object) -> bool:
        return self.found


class RawView(Protocol):
    @property
    def raw(self) -> str: ...


class ChoicesView(RawView, Protocol):
    @property
    def choices(self) -> Sequence[str]: ...


class NumberRawView(RawView, Protocol):
    @property
    def raw_final_text(self) -> str | None:
        """The number expression our number reader finds in the raw output, as written (K3's stand-in)."""


class GoldView(RawView, Protocol):
    @property
    def gold(self) -> str | None: ...


def _whole(raw: str) -> tuple[int, int]:
    return (0, len(raw))


def _located(raw: str, text: str) -> tuple[int, int]:
    """The latest occurrence of ``text`` in ``raw`` (the whole output when it is not there as written)."""
    at = raw.rfind(text) if text else -1
    return (at, at + len(text)) if at >= 0 else _whole(raw)


# --- the attempts -----------------------------------------------------------------------


def _choice_substring(view: ChoicesView) -> Reading | None:
    found = classification_match(view.raw, view.choices)
    if found is None:
        return None
    index, span = found
    return Reading(index, rule="taxben.choice-substring", source=view.raw[span[0]:span[1]], span=span)


def _letter_run(view: RawView) -> Reading | None:
    found = mcq_run(view.raw)
    if found is None:
        return None
    letters, span = found
    return Reading(LetterString(letters), rule="taxben.letter-run", source=view.raw[span[0]:span[1]], span=span)


def _whole_output_float(view: RawView) -> Reading | None:
    direct = calc_direct(view.raw)
    if direct is None:
        return None
    return Reading(AmountString(direct), rule="taxben.whole-output-float", source=view.raw, span=_whole(view.raw))


def _yuan_amount(view: NumberRawView) -> Reading:
    """K3-K5; ``"未知"`` is a format failure that keeps TaxBen's answer as its value."""
    answer = view.raw_final_text
    answer = UNKNOWN if answer is None else answer.strip()  # K3's stand-in, as taxben.calc_reader_answer
    result = calc_from_reader_answer(answer)
    if result == UNKNOWN:
        return Reading(AmountString(result), NO_ANSWER, rule=veto_of(NO_ANSWER))
    return Reading(AmountString(result), rule="taxben.yuan-amount", source=answer, span=_located(view.raw, answer))


def _gold_substring(view: GoldView) -> Reading | None:
    gold = view.gold
    if gold is None or not view.raw.strip() or not read_correct(view.raw, gold):
        return None
    return Reading(GoldInOutput(gold, True), rule="taxben.gold-substring", source=gold,
                   span=_located(view.raw, gold))  # fmt: skip


def _gold_absent(view: GoldView) -> Reading | None:
    """A raw output that holds something is read whole (wrong); a blank one is a format
    failure, still compared as TaxBen compares it (an empty gold occurs in it)."""
    gold = view.gold if view.gold is not None else ""
    found = GoldInOutput(gold, read_correct(view.raw, gold))
    if not view.raw.strip():
        return Reading(found, NO_ANSWER, rule=veto_of(NO_ANSWER))
    return Reading(found, rule="taxben.gold-absent", source=view.raw, span=_whole(view.raw))


def _raw_output(view: RawView) -> Reading | None:
    raw = view.raw
    return Reading(raw, rule="taxben.raw-output", source=raw, span=_whole(raw)) if raw.strip() else None


#: TaxBen's attempts, by reading kind and rule name (each kind's reader adds them to its own).
LABEL_ATTEMPTS: dict[str, Callable[[ChoicesView], Reading | None]] = {"taxben.choice-substring": _choice_substring}
LETTERS_ATTEMPTS: dict[str, Callable[[RawView], Reading | None]] = {"taxben.letter-run": _letter_run}
NUMBER_ATTEMPTS: dict[str, Callable[[NumberRawView], Reading | None]] = {
    "taxben.whole-output-float": _whole_output_float,
    "taxben.yuan-amount": _yuan_amount,
}
SPAN_ATTEMPTS: dict[str, Callable[[GoldView], Reading | None]] = {
    "taxben.gold-substring": _gold_substring,
    "taxben.gold-absent": _gold_absent,
}
TEXT_ATTEMPTS: dict[str, Callable[[RawView], Reading | None]] = {"taxben.raw-output": _raw_output}

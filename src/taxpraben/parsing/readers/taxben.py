"""TaxBen's own scoring rules, for ``--profile taxben``: reproduced exactly, flaws included.

The source is TaxBen's ``process_results`` methods in Yating-Chen/TaxBen,
``TaxBen/src/tasks/TaxBen.py`` (branch master, commit 80c9f1c); ``L59`` below means line 59 of
that file. This is our own implementation of those rules, not a copy of the code. Every
function here takes the model's **raw** output: TaxBen removes no ``<think>`` block, unwraps
no code fence and folds no full-width or zero-width character, and neither does this profile.
Rules we consider wrong are kept on purpose (the README's "The ``taxben`` profile" lists them
with an example each); the default profile ``taxpraben`` is where they are fixed.

**Classification** (TaxTopic, TaxSCQ; here also TaxCrime), ``Classification.process_results``
L59-89, with ``LOWER_CASE = True`` (L18):

- C1 (L60-62): the gold label is ``choices[gold]`` lower-cased (:func:`classification_gold`).
- C2 (L63-65): the output is stripped, then lower-cased.
- C3 (L67-73): the label is the first choice *in list order* whose lower-cased form is a
  substring of that output, returned lower-cased (:func:`classification_label`). So
  ``"企业所得税"`` also "contains" ``"所得税"``, ``"\boxed{D}"`` contains choice ``"B"``
  (through ``boxed``), and an empty choice matches every output.
- C4 (L74-75): no choice occurs: the label ``"missing"`` (the caller maps None to it).
- C5 (L77): ACC is plain string equality of the two lower-cased labels; weighted F1 and
  Macro-F1 (L102-116) take these same lower-cased labels, ``labels = set(golds)``.

**TaxMCQ**, ``MatchAnswer.process_results`` L319-330:

- M1 (L322): the first match of ``[ABCDE](?:\\W*[ABCDE]){1,4}`` in the raw output. ``\\W`` is
  Unicode-aware: Chinese characters are word characters (``"A和D"`` is no match), zero-width
  and full-width punctuation are not (``"A\u200bB"`` is a match); full-width ``Ｂ`` is no letter.
- M2 (L324): the answer is that match minus everything outside ``A-Z``: the letters *in output
  order, duplicates kept* (``"本题选择ACD。A项正确"`` reads ``"ACDA"``); no match is ``"null"``.
- M3 (L326): correct when the answer *string* equals the gold string as written, so ``"DA"``
  is wrong for gold ``"AD"``, and a one-letter gold can never be right (M1 needs two letters).

**TaxCalc**, ``ComputeAnswer.process_results`` L389-469:

- K1 (L391-396): the gold is ``float(answer)`` formatted ``"{:.2f}"``; a gold ``float()``
  cannot read (``"1.2万"``, ``"12,000"``, ``"104000元"``) scores 0 whatever the output.
  TaxBen catches only ValueError there; a gold of another type (None, an object) or too
  large for a float would crash its run: we score it 0 too.
- K2 (L405-410): if ``float(output)`` reads the *whole raw output* (Python's rules: surrounding
  whitespace, ``1e4``, ``1_000``, full-width digits, ``nan``, ``inf``, ``-0``), the prediction
  is ``"{:.2f}"`` of ``round(value, 2)``: binary floats round as Python does (``2.675`` ->
  ``"2.67"``) and the sign of zero is kept (``-0`` -> ``"-0.00"``, which is not ``"0.00"``).
- K3 (L412-436): otherwise TaxBen asks GPT-3.5 for the answer in the output. **We do not call
  GPT-3.5**: our number reader (:func:`~taxpraben.parsing.readers.number.extract_final_number`)
  stands in for it and hands over the number expression it found *as written* (``"1.2万元"``,
  ``"13,000.00元"``, ``"12%"``), or ``"未知"`` (TaxBen's "unknown") when it finds none
  (:func:`calc_reader_answer`), stripped as TaxBen strips GPT's reply (L436). TaxBen needs
  ``问题为：`` in the query for its GPT prompt and crashes without it (L415); we need no query.
- K4 (L440-454): from that answer, the first ``[-+]?\\d*\\.?\\d+`` followed (after at most one
  whitespace) by ``万元`` or ``元``, *unscaled* (``"1.2万元"`` -> 1.2); else the number after
  ``百分之`` in Arabic digits; else ``"未知"``. A number without 元 (``"13000"``, ``"12%"``)
  is therefore ``"未知"``, and a thousands separator cuts the number (``"13,000元"`` -> 0).
- K5 (L456-458, L463): a number found there is ``"{:.2f}"`` of ``float(number)``; the
  prediction string equals the gold string, or it is wrong.

**TaxRead**, ``ReadComprehens.process_results`` L528-535:

- R1 (L531): correct when the gold, as written (not stripped), is a substring of the raw
  output: case-sensitive, any length of output, an empty gold always matches.

**Generation** (TaxRecite, TaxSum, TaxQA, TaxBoard; here also TaxOpinion),
``AbstractiveSummarization.process_results`` L177-184: the raw output goes to BERTScore and
BARTScore unchanged (no function needed here; the scoring step passes the raw prediction).

TaxRisk, TaxInspect and TaxPlan have no TaxBen counterpart and keep the ``taxpraben`` rules.

The profile reads with the chains named ``taxben`` (:data:`taxpraben.parsing.chain.TAXBEN_CHAINS`):
these rules registered as ``taxben.choice-substring`` (C2-C4), ``taxben.letter-run`` (M1-M2),
``taxben.whole-output-float`` (K2), ``taxben.yuan-amount`` (K3-K5), ``taxben.gold-substring``
and ``taxben.gold-absent`` (R1) and ``taxben.raw-output`` (generation), declared here beside their attempts.

**The rules.** Each attempt reads the **raw** output (every kind's view keeps it as ``raw``)
by one rule and says where: its ``span`` is the stretch of the raw output it read (the choice
it found, the letter run, the gold's occurrence, the number expression; the whole output for
the rules that read it whole). The attempts need of a view only what the protocols below
name, so that each kind's reader runs them as any other rule.

What TaxBen reads is compared with the gold as TaxBen compares it; the values say how
(:class:`ComparedAnswer`: a letter string equal to the gold string, a ``"{:.2f}"`` string equal
to the gold's, the gold found in the output). The label reader's value stays an option index:
TaxBen's labels (lower-cased choices) are the comparison its rule declares
(:attr:`~taxpraben.parsing.registry.Rule.comparison`, see :mod:`taxpraben.kinds.classification`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from taxpraben.parsing.readers.number import extract_final_number
from taxpraben.parsing.readers.shared import NO_ANSWER_RULE
from taxpraben.parsing.region import NO_ANSWER, Reading
from taxpraben.parsing.registry import Example, register_rule

__all__ = [
    "MCQ_NO_MATCH",
    "TAXBEN_CHAINS",
    "UNKNOWN",
    "AmountString",
    "ComparedAnswer",
    "GoldInOutput",
    "LetterString",
    "calc_answer",
    "calc_correct",
    "calc_direct",
    "calc_from_reader_answer",
    "calc_gold",
    "calc_reader_answer",
    "classification_gold",
    "classification_label",
    "classification_match",
    "mcq_correct",
    "mcq_letters",
    "mcq_run",
    "read_correct",
]


#: TaxBen's TaxCalc answer when no number is found (L454; also what its GPT prompt asks for).
UNKNOWN = "未知"

_MCQ_RUN = re.compile(r"[ABCDE](?:\W*[ABCDE]){1,4}")  # M1, L322
_NOT_LETTER = re.compile(r"[^A-Z]")  # M2, L324
_BEFORE_YUAN = re.compile(r"([-+]?\d*\.?\d+)\s?(?=万元|元)")  # K4, L444
_AFTER_BAIFENZHI = re.compile(r"(?<=百分之)\d*\.?\d+")  # K4, L446


# --- the matchers (the rule ids and TaxBen's lines: the module docstring) ----------------


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


# TaxBen's process_results (Yating-Chen/TaxBen, TaxBen/src/tasks/TaxBen.py, commit 80c9f1c),
# flaws included: the rule ids are those of the module docstring. They read the RAW output.
CHOICE_SUBSTRING_RULE = register_rule(
    "taxben.choice-substring", kinds=("label",), tier=6, confidence="high", comparison="taxben",
    description="TaxBen C2-C4 (L63-75): the first choice, in list order, whose lower-cased text is a substring of the "
                "stripped, lower-cased raw output; its label is that choice lower-cased, compared with the gold choice "
                "lower-cased (C1, C5). The list order decides, not the output: a choice named in passing wins.",
    examples=(Example("label", "答案：C. 信息技术服务", "信息技术服务"),
              # the first choice in list order that occurs anywhere, not the answer given
              Example("label", "信息技术服务适用6%，不动产租赁服务适用9%，故选C", "不动产租赁服务")),
    leaves_alone=(Example("label", "答案：C", None),),
)


@CHOICE_SUBSTRING_RULE.reads("label")
def _choice_substring(view: ChoicesView) -> Reading | None:
    found = classification_match(view.raw, view.choices)
    if found is None:
        return None
    index, span = found
    return Reading(index, rule=CHOICE_SUBSTRING_RULE.name, source=view.raw[span[0]:span[1]], span=span)


LETTER_RUN_RULE = register_rule(
    "taxben.letter-run", kinds=("letters",), tier=6, confidence="high", comparison="taxben",
    description="TaxBen M1-M2 (L322-324): the first run of two to five option letters A-E (anything but word "
                "characters between them) in the raw output; the answer is its letters in output order, duplicates "
                "kept, compared as a string with the gold as written (M3).",
    examples=(Example("letters", "答案：ABD", "ABD"), Example("letters", "本题选择ABD。A项正确", "ABDA")),
    leaves_alone=(Example("letters", "答案：A", None), Example("letters", "A和D", None)),
)


@LETTER_RUN_RULE.reads("letters")
def _letter_run(view: RawView) -> Reading | None:
    found = mcq_run(view.raw)
    if found is None:
        return None
    letters, span = found
    return Reading(LetterString(letters), rule=LETTER_RUN_RULE.name, source=view.raw[span[0]:span[1]], span=span)


WHOLE_OUTPUT_FLOAT_RULE = register_rule(
    "taxben.whole-output-float", kinds=("number",), tier=6, confidence="high", comparison="taxben",
    description="TaxBen K2 (L405-410): the whole raw output is a float to Python (spaces around it, 1e4, 1_000): "
                "the answer is '{:.2f}' of it rounded to 2 places, compared as a string with the gold's '{:.2f}' (K1, K5).",
    examples=(Example("number", " 44000 ", "44000.00"), Example("number", "4.4e4", "44000.00")),
    leaves_alone=(Example("number", "44000元", "44000.00"),),
)


@WHOLE_OUTPUT_FLOAT_RULE.reads("number")
def _whole_output_float(view: RawView) -> Reading | None:
    direct = calc_direct(view.raw)
    if direct is None:
        return None
    return Reading(AmountString(direct), rule=WHOLE_OUTPUT_FLOAT_RULE.name, source=view.raw, span=_whole(view.raw))


YUAN_AMOUNT_RULE = register_rule(
    "taxben.yuan-amount", kinds=("number",), tier=6, confidence="high", comparison="taxben",
    description="TaxBen K3-K5 (L412-458), our number reader standing in for its GPT-3.5 call: in the number "
                "expression the reader finds, the number before 万元/元 (unscaled), else the number after 百分之; "
                "'{:.2f}' of it. None there is TaxBen's '未知', a format failure.",
    examples=(Example("number", "应纳税额=104000-60000=44000元", "44000.00"),
              # 万 is not scaled: TaxBen reads 4.4万元 as 4.40
              Example("number", "答案：4.4万元", "4.40")),
    leaves_alone=(Example("number", "应纳税额为44000", None),),
)


@YUAN_AMOUNT_RULE.reads("number")
def _yuan_amount(view: NumberRawView) -> Reading:
    """K3-K5; ``"未知"`` is a format failure that keeps TaxBen's answer as its value."""
    answer = view.raw_final_text
    answer = UNKNOWN if answer is None else answer.strip()  # K3's stand-in, as taxben.calc_reader_answer
    result = calc_from_reader_answer(answer)
    if result == UNKNOWN:
        return Reading(AmountString(result), NO_ANSWER, rule=NO_ANSWER_RULE.name)
    return Reading(AmountString(result), rule=YUAN_AMOUNT_RULE.name, source=answer, span=_located(view.raw, answer))


GOLD_SUBSTRING_RULE = register_rule(
    "taxben.gold-substring", kinds=("span",), tier=6, confidence="high", comparison="taxben",
    description="TaxBen R1 (L531): the gold, as written, occurs in the raw output (case-sensitive, any length): "
                "the answer is the gold, right.",
    examples=(Example("span", "<think>看材料</think>按日加收滞纳税款万分之五的滞纳金", "万分之五"),),
    leaves_alone=(Example("span", "按日加收千分之五", None),),
)


@GOLD_SUBSTRING_RULE.reads("span")
def _gold_substring(view: GoldView) -> Reading | None:
    gold = view.gold
    if gold is None or not view.raw.strip() or not read_correct(view.raw, gold):
        return None
    return Reading(GoldInOutput(gold, True), rule=GOLD_SUBSTRING_RULE.name, source=gold,
                   span=_located(view.raw, gold))  # fmt: skip


GOLD_ABSENT_RULE = register_rule(
    "taxben.gold-absent", kinds=("span",), tier=6, confidence="high", comparison="taxben",
    description="TaxBen R1 (L531): a raw output that holds something but not the gold is read whole, and wrong "
                "(no answer extracted; not a format failure).",
    examples=(Example("span", "按日加收千分之五", None),),
    leaves_alone=(Example("span", "万分之五", "万分之五"),),
)


@GOLD_ABSENT_RULE.reads("span")
def _gold_absent(view: GoldView) -> Reading | None:
    """A raw output that holds something is read whole (wrong); a blank one is a format
    failure, still compared as TaxBen compares it (an empty gold occurs in it)."""
    gold = view.gold if view.gold is not None else ""
    found = GoldInOutput(gold, read_correct(view.raw, gold))
    if not view.raw.strip():
        return Reading(found, NO_ANSWER, rule=NO_ANSWER_RULE.name)
    return Reading(found, rule=GOLD_ABSENT_RULE.name, source=view.raw, span=_whole(view.raw))


RAW_OUTPUT_RULE = register_rule(
    "taxben.raw-output", kinds=("text",), tier=6, confidence="high", comparison="taxben",
    description="TaxBen's generation tasks (L177-184): the raw output, unchanged (no <think> block removed, no "
                "character folded), is what BERTScore and BARTScore read.",
    examples=(Example("text", "<think>想一想</think>小规模纳税人的增值税征收率为3%。", None),),
)


@RAW_OUTPUT_RULE.reads("text")
def _raw_output(view: RawView) -> Reading | None:
    raw = view.raw
    return Reading(raw, rule=RAW_OUTPUT_RULE.name, source=raw, span=_whole(raw)) if raw.strip() else None


#: TaxBen's chains (``--profile taxben``, or a spec's ``reading: {chain: taxben}``): its rules
#: on the raw output. Kinds TaxBen never had read by this project's rules, the fields without
#: the copy veto (TaxBen would credit a copy of the prompt's JSON template).
TAXBEN_CHAINS: dict[str, tuple[str, ...]] = {
    "label": ("taxben.choice-substring", "veto.no-answer"),
    "letters": ("taxben.letter-run", "veto.no-answer"),
    "number": ("taxben.whole-output-float", "taxben.yuan-amount", "veto.no-answer"),
    "span": ("taxben.gold-substring", "taxben.gold-absent", "veto.no-answer"),
    "fields": ("fields.json", "fields.lines", "veto.no-field", "veto.no-answer"),
    "text": ("taxben.raw-output", "veto.no-answer"),
}


# --- TaxBen's process_results, restated with the matchers above ----------------------------


#: TaxBen's TaxMCQ answer when its regex finds nothing (L324).
MCQ_NO_MATCH = "null"
#: The matchers of C3, M1-M2, K1, K2, K4-K5 and R1 are in :mod:`taxpraben.parsing.readers.taxben`
#: (with the attempts that use them: the number reader imports them, and this module it).


# --- classification ---------------------------------------------------------------------


def classification_gold(gold_choice: str) -> str:
    """C1: TaxBen's gold label, the gold choice lower-cased."""
    return gold_choice.lower()


def classification_label(output: str, choices: Sequence[str]) -> str | None:
    """C2-C4: the first choice in list order contained in the stripped, lower-cased output.

    Returns that choice lower-cased (TaxBen's label), or None (TaxBen's "missing").
    """
    found = classification_match(output, choices)
    return None if found is None else choices[found[0]].lower()


# --- TaxMCQ -----------------------------------------------------------------------------


def mcq_letters(output: str) -> str | None:
    """M1-M2: the letters of the first option run, in output order with duplicates; or None."""
    found = mcq_run(output)
    return None if found is None else found[0]


def mcq_correct(output: str, gold: object) -> bool:
    """M3: whether the letter string (``"null"`` when none) equals the gold as written."""
    letters = mcq_letters(output)
    return (MCQ_NO_MATCH if letters is None else letters) == gold


# --- TaxCalc ----------------------------------------------------------------------------


def calc_reader_answer(output: str) -> str:
    """K3: our stand-in for TaxBen's GPT-3.5 extraction.

    The number expression :func:`~taxpraben.parsing.readers.number.extract_final_number` finds,
    as written (with its 万/元/% and separators), or ``"未知"`` when there is none.
    """
    found = extract_final_number(output)
    return UNKNOWN if found is None else found.text.strip()


def calc_answer(output: str) -> str:
    """K2-K5: TaxBen's prediction string for a raw output: ``"13000.00"``, or ``"未知"``."""
    direct = calc_direct(output)
    if direct is not None:
        return direct
    return calc_from_reader_answer(calc_reader_answer(output))


def calc_correct(output: str, answer: object) -> bool:
    """K1-K5: whether the prediction string equals the gold string (a bad gold: never)."""
    gold = calc_gold(answer)
    return gold is not None and calc_answer(output) == gold


# --- TaxRead ----------------------------------------------------------------------------


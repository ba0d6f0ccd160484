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
  ``"企业所得税"`` also "contains" ``"所得税"``, ``"\\boxed{D}"`` contains choice ``"B"``
  (through ``boxed``), and an empty choice matches every output.
- C4 (L74-75): no choice occurs: the label ``"missing"`` (the caller maps None to it).
- C5 (L77): ACC is plain string equality of the two lower-cased labels; weighted F1 and
  Macro-F1 (L102-116) take these same lower-cased labels, ``labels = set(golds)``.

**TaxMCQ**, ``MatchAnswer.process_results`` L319-330:

- M1 (L322): the first match of ``[ABCDE](?:\\W*[ABCDE]){1,4}`` in the raw output. ``\\W`` is
  Unicode-aware: Chinese characters are word characters (``"A和D"`` is no match), zero-width
  and full-width punctuation are not (``"A\\u200bB"`` is a match); full-width ``Ｂ`` is no letter.
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
  GPT-3.5**: our number reader (:func:`~taxpraben.parsing.final_number.extract_final_number`)
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

The profile reads with the chains named ``taxben`` (:data:`taxpraben.parsing.rules.TAXBEN_CHAINS`):
these rules registered as ``taxben.choice-substring`` (C2-C4), ``taxben.letter-run`` (M1-M2),
``taxben.whole-output-float`` (K2), ``taxben.yuan-amount`` (K3-K5), ``taxben.gold-substring``
and ``taxben.gold-absent`` (R1) and ``taxben.raw-output`` (generation), whose attempts are
:mod:`taxpraben.parsing.taxben_rules`.
"""

from __future__ import annotations

from collections.abc import Sequence

from taxpraben.parsing.number_rules import extract_final_number
from taxpraben.parsing.taxben_rules import (
    UNKNOWN,
    calc_direct,
    calc_from_reader_answer,
    calc_gold,
    classification_match,
    mcq_run,
    read_correct,
)

__all__ = [
    "MCQ_NO_MATCH",
    "UNKNOWN",
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

#: TaxBen's TaxMCQ answer when its regex finds nothing (L324).
MCQ_NO_MATCH = "null"
#: The matchers of C3, M1-M2, K1, K2, K4-K5 and R1 are in :mod:`taxpraben.parsing.taxben_rules`
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

    The number expression :func:`~taxpraben.parsing.final_number.extract_final_number` finds,
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


"""What a computation's text writes beside its result: notes, bracketed asides, calculator marks.

A note after the answer ("……104000元。注：如不考虑进项则为260000元") supposes something else
or comments; a bracketed formula or supposition ("104,000元（2,260,000÷1.13×13%−156,000）",
"（若进项税额不得抵扣，则为260000元）") says how the amount was reached or what else it could
be; a calculator mark of GSM8K's format ("<<60-208=-148>>") is markup for a tool. None of them
is the amount the model gives: the number reader (:mod:`taxpraben.parsing.readers.number`)
reads without them.

Pure; no I/O.
"""

from __future__ import annotations

import re

from taxpraben.parsing.numbers import find_numbers
from taxpraben.parsing.region import SUPPOSITION

__all__ = ["before_note", "without_asides", "without_calculator_notes"]


#: A note after the answer ("……104000元。注：如不考虑进项则为260000元", "104000元（注：……）"):
#: commentary.
_NOTE = re.compile(
    r"(?:(?:^|(?<=[。！？!?\n]))\s*[(（]?|[(（])\s*[*_]*\s*(?:注|备注|注意|说明|提示|验算)\s*[*_]*\s*[:：]", re.MULTILINE
)
#: A bracketed formula or supposition after an amount ("104,000元（2,260,000÷1.13×13%−156,000）",
#: "（若进项税额不得抵扣，则为260000元）"): how it was reached or what else it could be.
_BRACKETED_ASIDE = re.compile(r"[(（](?:[^()（）]*[×÷*/−+]|\s*(?:" + SUPPOSITION + r"|如))[^()（）]*[)）]")
_SUPPOSES = re.compile(SUPPOSITION + r"|如|不考虑|否则")
#: A calculator note of GSM8K's format ("<<60-208=-148>>"): markup for a tool, never the value the
#: model writes after it ("… = $<<60-208=-148>>148 more").
_CALCULATOR_NOTE = re.compile(r"<<[^<>\n]*=[^<>\n]*>>")


def without_asides(text: str) -> str | None:
    """``text`` with its bracketed formulas and suppositions blanked (offsets kept), when it
    has any and a number stands outside them; None otherwise."""
    if not _BRACKETED_ASIDE.search(text):
        return None
    blanked = _BRACKETED_ASIDE.sub(lambda m: " " * len(m.group(0)), text)
    return blanked if find_numbers(blanked) else None


def before_note(text: str, concludes: re.Pattern[str]) -> str | None:
    """``text`` up to a note that follows a number and gives no result of its own (it
    supposes something else, or names no result: no match of ``concludes``, the reader's
    conclusion words): without a final statement, the number of the text before it is the
    answer, not one the note supposes. None when there is none."""
    for m in _NOTE.finditer(text):
        note = text[m.end() :]
        if find_numbers(text[: m.start()]) and (_SUPPOSES.search(note) or not concludes.search(note)):
            return text[: m.start()]
    return None


def without_calculator_notes(text: str) -> str:
    """``text`` with its calculator notes blanked (offsets kept)."""
    return _CALCULATOR_NOTE.sub(lambda m: " " * len(m.group(0)), text) if "<<" in text else text

"""Short-answer spans (TaxRead): what the answer is, and when two spans are the same.

:func:`normalize_span` is the comparison form of a span:

- NFKC character folding (as in :mod:`taxpraben.parsing.clean`), Latin case-folded;
- all whitespace removed (Chinese has no word spaces; ``"13 %"`` = ``"13%"``);
- all punctuation removed, ASCII and Chinese (``，。、：；！？“”《》【】（）`` ...), with
  three exceptions that carry meaning in numbers: ``%``; a ``.`` between two digits (a
  decimal point); a ``-`` right before a digit and not after one (a sign);
- thousands separators therefore disappear (``12,000元`` = ``12000元``), but nothing else
  about numbers is normalised: units and currency stay (``12000元`` != ``12000``),
  Chinese numerals are not converted (``三十日`` != ``30日``) and trailing zeros count
  (``12.50`` != ``12.5``). A span is text; numeric answers are TaxCalc's business.

:func:`extract_span` picks the answer out of an output: a JSON answer field; else the text
after the last answer marker (``最终答案``, ``答案``, ``答:``, ``Answer:``); in both cases
its first clause (up to ``，。；！？\\n``: "答案是2024年6月30日，依据是……" gives the date).
When the gold itself contains a Chinese comma, :func:`span_match` reads the first sentence
instead (``clause=False``), so such a gold can still be matched. Without a marker or field,
the whole cleaned output (a chatty answer then fails exact match, which is the point of EM).

:func:`span_match` is exact match of the two normalised forms; an empty normalised gold never
matches. :func:`span_match_taxben` is TaxBen's lenient rule: the stripped, folded gold occurs
as a substring of the cleaned output (the gold goes through the same cleaning).
"""

from __future__ import annotations

import re
import unicodedata

from taxpraben.parsing._jsonish import answer_text, answer_value, find_json_values
from taxpraben.parsing.clean import clean_prediction, fold_characters

__all__ = ["SPAN_ANSWER_KEYS", "extract_span", "normalize_span", "span_match", "span_match_taxben"]

#: JSON keys holding a short answer, in priority order.
SPAN_ANSWER_KEYS: tuple[str, ...] = ("最终答案", "final_answer", "答案", "answer", "结果", "result")

_MARKER = re.compile(r"最终答案|正确答案|答案|(?i:final\s+answer|answer)|答(?=\s*[:：])")
_LEAD = re.compile(r"[\s:：是为*#>】\]]*")
_SENTENCE_END = re.compile(r"[。；;！!？?\n]")
_CLAUSE_END = re.compile(r"[，。；;！!？?\n]")


def _keep(text: str, i: int) -> bool:
    c = text[i]
    if c == "%":
        return True
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if c == ".":
        return before.isdigit() and after.isdigit()
    if c == "-":
        return after.isdigit() and not before.isdigit()
    return False


def normalize_span(text: str) -> str:
    """The comparison form of a span (rules in the module docstring)."""
    if not text:
        return ""
    folded = "".join(fold_characters(str(text)).casefold().split())
    return "".join(
        c
        for i, c in enumerate(folded)
        if not unicodedata.category(c).startswith("P") or _keep(folded, i)
    )


def _first_sentence(text: str, clause: bool = False) -> str:
    lead = _LEAD.match(text)
    text = text[lead.end() :] if lead else text
    end = (_CLAUSE_END if clause else _SENTENCE_END).search(text)
    # Markdown emphasis around the answer (**三十日**) is not part of it.
    return (text[: end.start()] if end else text).strip().strip("*_`").strip()


def extract_span(text: str, *, clause: bool = True) -> str:
    """The answer span of an output (rules in the module docstring); may be empty.

    ``clause`` ends a span after a marker at the first Chinese comma as well as at the end
    of the sentence.
    """
    cleaned = clean_prediction(text)
    if not cleaned:
        return ""
    found, value = answer_value(find_json_values(cleaned), SPAN_ANSWER_KEYS)
    if found:
        span = _first_sentence(clean_prediction(answer_text(value)), clause)
        if span:
            return span
    for marker in reversed(list(_MARKER.finditer(cleaned))):
        span = _first_sentence(cleaned[marker.end() :], clause)
        if span:
            return span
    return cleaned


def span_match(pred: str, gold: str) -> bool:
    """Exact match of ``extract_span(pred)`` and ``gold`` after :func:`normalize_span`."""
    target = normalize_span(gold)
    clause = "，" not in fold_characters(str(gold))
    return bool(target) and normalize_span(extract_span(pred, clause=clause)) == target


def span_match_taxben(pred: str, gold: str) -> bool:
    """TaxBen's rule: the gold (cleaned like the output) is a substring of the cleaned output."""
    target = clean_prediction(str(gold))
    return bool(target) and target in clean_prediction(pred)

"""Classification labels (TaxSCQ, TaxTopic, TaxCrime): which of the choices an output names.

:func:`extract_choice` (profile ``taxpraben``) works on the cleaned output and returns one of
``choices`` or None (the caller's label "missing"):

1. **JSON answer field.** When the output holds a JSON object with an answer-like key
   (:data:`CHOICE_ANSWER_KEYS`, e.g. ``答案``, ``answer``, ``类别``, ``罪名``), its value is
   read with rules 2 and 3 (a letter when choices are lettered, a choice string otherwise). A
   value that names nothing falls through to the whole text.
2. **Option letter** (only when ``option_letters``; letter *i* is ``choices[i]``, letters
   beyond the number of choices are ignored). In order: the letter after the *last* explicit
   marker (``答案：B``, ``答案是 B 项``, ``正确选项为(B)``, ``选B``, ``故选B``,
   ``Answer: B``); a letter that starts the output (``B``, ``B.``, ``(B)``, ``B、企业所得税``);
   the only letter named as ``选项X`` / ``X项``; the only standalone option letter in the text
   (not touching Latin letters, digits, or a following Chinese character: ``A股`` is a word).
   A letter only counts when it is not part of a Latin word (``VAT``, ``Answer``, ``CEO`` hold
   no options).
3. **Named choice.** Every occurrence of every choice is found (case-insensitive for Latin),
   longest first: an occurrence inside a longer accepted one is dropped, so ``企业所得税``
   does not also count as ``所得税`` (the overlap rule). Then the first occurrence after the
   *last* answer marker (``markers``, e.g. ``答案``, ``属于``) that has one is taken; markers
   right after a negation (``不属于``, ``并非``, ``不是``) are ignored. Without such a marker,
   the earliest occurrence, preferring one not directly negated (``不属于增值税，属于消费税``).

:func:`extract_choice_taxben` is TaxBen's rule for comparison with published numbers: the
first choice *in list order* that occurs as a substring of the cleaned output. It has the
substring flaw on purpose (``企业所得税`` also "contains" ``所得税``).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from taxpraben.parsing._jsonish import (
    OPTION_ANSWER_KEYS,
    answer_text,
    answer_value,
    find_json_values,
)
from taxpraben.parsing.clean import clean_prediction, fold_characters

__all__ = ["CHOICE_ANSWER_KEYS", "extract_choice", "extract_choice_taxben"]

#: JSON keys holding a classification answer, in priority order.
CHOICE_ANSWER_KEYS: tuple[str, ...] = (
    *OPTION_ANSWER_KEYS,
    "结论",
    "类别",
    "分类",
    "类型",
    "主题",
    "税种",
    "罪名",
    "label",
    "category",
    "choice",
    "结果",
    "result",
)

_OPEN = r"[(（\[【]?"
_STRONG_LETTER = re.compile(
    r"(?:最终答案|正确答案|答案|正确选项|选择|故选|应选|选(?!项)|(?i:answer(?:\s+is)?|option))"
    r"[\s:：*】\]]*(?:是|为|应为|应该是|应是|应选|选)?[\s:：*]*(?:选项)?\s*"
    + _OPEN
    + r"\s*([A-Z])(?![A-Za-z])"
)
_LEADING_LETTER = re.compile(r"^[\s*#>]*" + _OPEN + r"\s*([A-Z])(?:[.)）\]】、:：。,，\s*]|$)")
_WEAK_LETTER = re.compile(r"选项\s*([A-Z])(?![A-Za-z])|(?<![A-Za-z])([A-Z])\s*项")
# Not before a Chinese character either: "A股" (A-shares) is a word, not an option.
_STANDALONE_LETTER = re.compile(r"(?<![A-Za-z0-9])([A-Z])(?![A-Za-z0-9\u4e00-\u9fff])")
_NEGATION = ("不", "非", "未", "没", "无", "不是")
_NEGATED_MENTION = re.compile(
    r"(?:不属于|不是|并非|而非|非|不为|不应为|排除|不构成|不涉嫌|不认定为|不应认定为|不能认定为|不定性为)\s*$"
)


def _letter_index(letter: str, count: int) -> int | None:
    index = string.ascii_uppercase.find(letter)
    return index if 0 <= index < count else None


def _letter_choice(text: str, choices: Sequence[str]) -> str | None:
    """Rule 2: the option letter the text gives, mapped to its choice."""
    count = len(choices)
    for m in reversed(list(_STRONG_LETTER.finditer(text))):
        index = _letter_index(m.group(1), count)
        if index is not None:
            return choices[index]
    leading = _LEADING_LETTER.match(text)
    if leading:
        index = _letter_index(leading.group(1), count)
        if index is not None:
            return choices[index]
    for pattern in (_WEAK_LETTER, _STANDALONE_LETTER):
        found = {
            index
            for m in pattern.finditer(text)
            if (index := _letter_index(m.group(m.lastindex or 1), count)) is not None
        }
        if len(found) == 1:
            return choices[found.pop()]
    return None


def _occurrences(haystack: str, needle: str, limit: int = 10_000) -> list[int]:
    found, start = [], haystack.find(needle)
    while start >= 0 and len(found) < limit:
        found.append(start)
        start = haystack.find(needle, start + 1)
    return found


def _named_choice(text: str, choices: Sequence[str], markers: Sequence[str]) -> str | None:
    """Rule 3: the choice string the text names (longest first, marker-aware)."""
    haystack = text.lower()
    candidates: list[tuple[int, int, int]] = []  # (-length, start, choice index)
    seen: set[str] = set()
    for index, choice in enumerate(choices):
        needle = fold_characters(str(choice)).strip().lower()
        if not needle or needle in seen:
            continue
        seen.add(needle)
        candidates.extend((-len(needle), start, index) for start in _occurrences(haystack, needle))
    if not candidates:
        return None
    candidates.sort()
    covered = bytearray(len(haystack))
    accepted: list[tuple[int, int, int]] = []  # (start, end, choice index)
    for negative_length, start, index in candidates:
        end = start - negative_length
        if not any(covered[start:end]):
            covered[start:end] = b"\x01" * (end - start)
            accepted.append((start, end, index))
    accepted.sort()

    marker_ends: list[int] = []
    for marker in markers:
        needle = fold_characters(marker).strip().lower()
        if not needle:
            continue
        for start in _occurrences(haystack, needle):
            if not any(haystack[max(0, start - len(neg)) : start] == neg for neg in _NEGATION):
                marker_ends.append(start + len(needle))
    for marker_end in sorted(marker_ends, reverse=True):
        for start, _end, index in accepted:
            if start >= marker_end:
                return choices[index]
    for start, _end, index in accepted:
        if not _NEGATED_MENTION.search(haystack[max(0, start - 6) : start]):
            return choices[index]
    return choices[accepted[0][2]]


def extract_choice(
    text: str,
    choices: Sequence[str],
    *,
    option_letters: bool,
    markers: Sequence[str],
) -> str | None:
    """The choice an output selects, or None when it names none (rules in the module docstring).

    ``text`` is the raw model output (it is cleaned here); ``choices`` are the labels in
    option order; ``option_letters`` says whether the choices were shown as A, B, C, ...;
    ``markers`` are the phrases after which the answer is expected (the task spec's
    ``answer_markers``). The result is always an element of ``choices`` (the first of equal
    duplicates) or None.
    """
    cleaned = clean_prediction(text)
    if not cleaned or not choices:
        return None
    found, value = answer_value(find_json_values(cleaned), CHOICE_ANSWER_KEYS)
    if found:
        value_text = clean_prediction(answer_text(value, " ", dict_values=True))
        if value_text:
            folded = value_text.strip(" .。、:：*").lower()
            for choice in choices:
                if fold_characters(str(choice)).strip().lower() == folded:
                    return choice
            picked = _letter_choice(value_text, choices) if option_letters else None
            picked = picked or _named_choice(value_text, choices, markers)
            if picked is not None:
                return picked
    if option_letters:
        picked = _letter_choice(cleaned, choices)
        if picked is not None:
            return picked
    return _named_choice(cleaned, choices, markers)


def extract_choice_taxben(text: str, choices: Sequence[str]) -> str | None:
    """TaxBen's rule: the first choice, in list order, that is a substring of the output.

    The output is cleaned first (DESIGN.md: cleaning is shared by both profiles); choices are
    compared after the same character folding. Returns the choice as given, or None.
    """
    cleaned = clean_prediction(text)
    for choice in choices:
        needle = fold_characters(str(choice)).strip()
        if needle and needle in cleaned:
            return choice
    return None

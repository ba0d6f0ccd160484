"""Option-letter sets (TaxMCQ): ``"A、B和D"``, ``"ABD"``, ``"A,B,D"``, ``"选项A与D"`` -> {A, B, D}.

:func:`extract_letter_set` (profile ``taxpraben``), on the cleaned output:

- **Letter tokens.** A maximal run of Latin letters is an option token only when every letter
  in it is an (upper-case) option letter: ``ABD`` and ``A`` are tokens; ``VAT``, ``CEO``,
  ``Answer`` and ``bad`` are not, so English words never contribute letters.
- **Groups.** Consecutive tokens joined only by separators (spaces, ``、 , ， / ; ； + &``,
  ``和 与 及 以及 或``, ``.``, brackets, quotes, Markdown ``*``, and the words ``选项``/``项``)
  form one answer group: ``A、B和D``, ``A, B, D``, ``(A)(C)``, ``A项和C项``.
- **Which group.** A JSON answer field first (a list ``["A", "C"]`` or a string ``"AC"``);
  else the group right after the *last* answer marker (``答案``, ``正确答案``, ``正确选项``,
  ``选项为``, ``应选``, ``故选``, ``选择``, ``选``, ``Answer``) that is followed by one
  within 12 characters (no ``。`` in between); else the first group in the text. Duplicate
  letters collapse (``AAB`` is {A, B}). None when there is no option letter at all.

:func:`extract_letter_set_taxben` is TaxBen's rule: the first match of
``[ABCDE](?:\\W*[ABCDE]){1,4}`` in the cleaned output, as a set. Consequences of that regex,
kept on purpose for comparability: a single-letter answer (``"答案：A"``) never matches and is
a format failure; Chinese connectives are word characters, so ``"A和D"`` does not match as one
answer; upper-case runs in English words match (``"CASE"`` gives {C, A}); at most five
letters are read.
"""

from __future__ import annotations

import re

from taxpraben.parsing._jsonish import (
    OPTION_ANSWER_KEYS,
    answer_text,
    answer_value,
    find_json_values,
)
from taxpraben.parsing.clean import clean_prediction

__all__ = ["LETTER_ANSWER_KEYS", "extract_letter_set", "extract_letter_set_taxben"]

#: JSON keys holding a multiple-choice answer, in priority order.
LETTER_ANSWER_KEYS: tuple[str, ...] = (
    *OPTION_ANSWER_KEYS,
    "answers",
    "choices",
    "result",
    "结果",
)

_RUN = re.compile(r"[A-Za-z]+")
_SEPARATORS = re.compile(r"(?:[\s、,，/;；&+和与及或.·()（）【】\[\]\"'“”‘’*]|以及|选项|项)*")
_MARKER = re.compile(
    r"最终答案|正确答案|答案|正确选项|选项(?:是|为|应为)|应选|故选|选择|选(?!项)|(?i:answer)"
)
_MARKER_GAP = 12
_TAXBEN = re.compile(r"[ABCDE](?:\W*[ABCDE]){1,4}")


def _groups(text: str, letters: str) -> list[tuple[int, frozenset[str]]]:
    """Answer groups as (start offset, letters), in order."""
    groups: list[tuple[int, frozenset[str]]] = []
    current: set[str] = set()
    start = previous_end = -1
    for m in _RUN.finditer(text):
        run = m.group(0)
        if not all(c in letters for c in run):
            if current:
                groups.append((start, frozenset(current)))
            current = set()
            continue
        if current and _SEPARATORS.fullmatch(text, previous_end, m.start()):
            current.update(run)
        else:
            if current:
                groups.append((start, frozenset(current)))
            current, start = set(run), m.start()
        previous_end = m.end()
    if current:
        groups.append((start, frozenset(current)))
    return groups


def extract_letter_set(text: str, letters: str = "ABCDE") -> frozenset[str] | None:
    """The set of option letters an output answers, or None (rules in the module docstring).

    ``text`` is the raw output (cleaned here); ``letters`` the allowed option letters,
    upper case.
    """
    cleaned = clean_prediction(text)
    allowed = set(letters.upper())
    if not cleaned or not allowed:
        return None
    found, value = answer_value(find_json_values(cleaned), LETTER_ANSWER_KEYS)
    if found:
        from_json = _groups(clean_prediction(answer_text(value)), "".join(allowed))
        if from_json:
            return frozenset().union(*(g for _, g in from_json))
    groups = _groups(cleaned, "".join(allowed))
    if not groups:
        return None
    for marker in reversed(list(_MARKER.finditer(cleaned))):
        for start, group in groups:
            if start >= marker.end():
                gap = cleaned[marker.end() : start]
                if len(gap) <= _MARKER_GAP and "。" not in gap:
                    return group
                break
    return groups[0][1]


def extract_letter_set_taxben(text: str) -> frozenset[str] | None:
    """TaxBen's rule: letters of the first ``[ABCDE](?:\\W*[ABCDE]){1,4}`` match, or None."""
    m = _TAXBEN.search(clean_prediction(text))
    if m is None:
        return None
    return frozenset(c for c in m.group(0) if c in "ABCDE")

"""Where in the raw output a reading was read: its evidence span.

A reader reads a cleaned text (reasoning dropped, fences unwrapped, characters folded,
copies of the prompt blanked), and a rule reads a stretch of it (``Reading.source``: the
statement, the line, the sentence, the JSON value). :func:`evidence_span` finds that stretch
in the raw output, then the answer's own text inside it, and returns their offsets into the
raw output: ``prediction[start:end]`` is what a person is shown as the evidence.

Both sides are compared on a *key*: characters folded as the cleaner folds them
(NFKC, case), whitespace and Markdown emphasis left out, each key character remembering
the raw offset it came from. Cleaning only drops and folds characters, so the stretch a rule
read is found in the raw output's key; the latest occurrence is taken (the model's own
answer comes after its reasoning and after any copy of the prompt). Pure; linear in the
output's length.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["covering_span", "evidence_span", "keyed"]

#: Characters a key leaves out: whitespace, Markdown emphasis, headings, quotes and tables,
#: LaTeX's braces and math delimiters; LaTeX commands (``\boxed``, ``\text``, ``\,``) too,
#: as the cleaner drops them.
_SKIPPED = frozenset("*_`#>|~{}$")
#: The runs a key keeps, and the LaTeX commands it drops (those start with a backslash).
_KEPT = re.compile(r"[^\s*_`#>|~{}$\\]+|\\(?:[A-Za-z]+|.)?", re.DOTALL)
#: Dashes and minus signs the cleaner folds to "-".
_DASHES = str.maketrans({c: "-" for c in "−–—﹣－"})
_DASH = re.compile("[−–—﹣－]")
#: Full-width ASCII forms (，：（）０-９Ａ-Ｚ) to their ASCII characters, one for one, as NFKC maps them.
_HALF = str.maketrans({chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F) if chr(c) != "－"})
#: Runs of the characters :data:`_HALF` maps.
_WIDE = re.compile("[\uff01-\uff0c\uff0e-\uff5e]+")


def _to_half(match: re.Match[str]) -> str:
    return match.group().translate(_HALF)


def keyed(text: str) -> tuple[str, list[int]]:
    """``text``'s comparison key and, for each key character, its offset in ``text``
    (characters NFKC-folded, case kept: option letters are case-sensitive).

    Run by run: a run that folding leaves alone (nearly every one) is taken whole with its
    offsets at C speed, and only the others are folded character by character (a loop over
    every character was a quarter of the readers' time)."""
    chars: list[str] = []
    offsets: list[int] = []
    # The full-width forms made ASCII over the whole text first: one for one, so a run's
    # offsets stay those of the text (a translate of every run walked every character).
    half = _WIDE.sub(_to_half, text) if _WIDE.search(text) else text
    for m in _KEPT.finditer(text):
        start, end = m.span()
        if text[start] == "\\":
            continue
        run = half[start:end]
        if (run.isascii() or unicodedata.is_normalized("NFKC", run)) and not _DASH.search(run):
            chars.append(run)
            offsets.extend(range(start, end))
            continue
        for k, c in enumerate(run):
            for f in (c if c.isascii() else unicodedata.normalize("NFKC", c)).translate(_DASHES):
                if not f.isspace() and f not in _SKIPPED:
                    chars.append(f)
                    offsets.append(start + k)
    return "".join(chars), offsets


@lru_cache(maxsize=1024)
def _key(text: str) -> str:
    """The key of a stretch or an answer text (cached: a reading's answer texts, its options
    and their letters, recur from item to item)."""
    return keyed(text)[0]


def evidence_span(raw: str, source: str | None, answers: Iterable[str]) -> tuple[int, int] | None:
    """The ``[start, end)`` offsets of ``raw`` a reading was read from.

    ``source`` is the stretch the rule read (None: unknown); ``answers`` are the texts the
    answer may be written as, preferred first (an option's text, its letter; a number as
    written). The span is the first answer text inside the latest occurrence of ``source``;
    ``source`` itself when no answer text is in it; the latest answer text anywhere when
    ``source`` is not found; None when neither is.
    """
    answers = list(answers)
    if source and (at := raw.rfind(source)) >= 0:  # written as read (most outputs): no key needed
        for text in answers:
            inside = raw.find(text, at, at + len(source)) if text else -1
            if inside >= 0:
                return inside, inside + len(text)
    if source and raw.rfind(source) < 0 and len(raw.lower()) == len(raw) and raw.lower().rfind(source.lower()) >= 0:
        # read with its letters in upper case ("【回答】d,e" for options labelled a-e): the stretch
        # as written, its case aside
        at = raw.lower().rfind(source.lower())
        return at, at + len(source)
    source_key = _key(source) if source else ""
    needles = [k for k in map(_key, answers) if k]
    if not source_key and not needles:  # nothing to look for (a reading without a stretch)
        return None
    key, offsets = keyed(raw)
    if not key:
        return None
    lo, hi = 0, len(key)
    found_source = False
    if source_key:
        at = key.rfind(source_key)
        if at >= 0:
            lo, hi, found_source = at, at + len(source_key), True
        elif source is not None:  # stretches blanked inside it (a copy of the prompt): its ends
            found = _ends(key, source)
            if found is not None:
                (lo, hi), found_source = found, True
    for needle in needles:
        at = key.find(needle, lo, hi) if found_source else key.rfind(needle, lo, hi)
        if at >= 0:
            return offsets[at], offsets[at + len(needle) - 1] + 1
    if found_source:
        return offsets[lo], offsets[hi - 1] + 1
    return _line_holding(raw, [source_key, *needles] if source_key else needles)


def _line_holding(raw: str, keys: list[str]) -> tuple[int, int] | None:
    """The latest line of ``raw`` that, cleaned as the readers clean it (LaTeX rendered:
    ``\\frac{1}{3}`` is 0.333333), holds one of ``keys``: the stretch a reading came
    from when the reader rewrote it."""
    from taxpraben.parsing.clean import clean_prediction
    from taxpraben.parsing.latex import strip_latex

    end = len(raw)
    while end > 0:
        start = raw.rfind("\n", 0, end - 1) + 1
        line = raw[start:end]
        if line.strip():
            rendered = _key(strip_latex(clean_prediction(line)))
            if any(k and k in rendered for k in keys):
                lead = len(line) - len(line.lstrip())
                return start + lead, start + len(line.rstrip())
        end = start - 1 if start > 0 else 0
    return None


#: Where a reader's text may differ from the raw output between its pieces: blanked or
#: collapsed whitespace, list separators written otherwise (a JSON list read as "A、B").
_PIECES = re.compile(r"[\s、,，;；/]+")


def _ends(key: str, source: str) -> tuple[int, int] | None:
    """The key range from the first to the last piece of ``source`` (split where the reader
    blanked or collapsed whitespace), the last found latest and the first before it."""
    pieces = [k for k in map(_key, _PIECES.split(source)) if k]
    if len(pieces) < 2:
        return None
    last = key.rfind(pieces[-1])
    if last < 0:
        return None
    first = key.rfind(pieces[0], 0, last)
    return (first, last + len(pieces[-1])) if first >= 0 else None


def covering_span(raw: str, texts: Iterable[str]) -> tuple[int, int] | None:
    """The smallest span of ``raw`` covering the latest occurrence of each of ``texts``
    found in it (the values of an answer's fields); None when none is found."""
    key, offsets = keyed(raw)
    spans = []
    for needle in map(_key, texts):
        at = key.rfind(needle) if needle else -1
        if at >= 0:
            spans.append((offsets[at], offsets[at + len(needle) - 1] + 1))
    if not spans:
        return None
    return min(s for s, _ in spans), max(e for _, e in spans)

"""What an output shares with its prompt: the comparison key, copied runs, blanking.

Output and prompt are compared on a *key*: the text cleaned, LaTeX made plain, without
whitespace, Markdown and punctuation, Latin case-folded (:func:`comparison_key`), so that
``A.增值税`` and ``A、增值税`` are the same. A *copied run* is a stretch of at least
:data:`COPY_MIN` key characters that is one piece of the prompt (:func:`copied_runs`: one hash
set of the prompt's :data:`COPY_MIN`-grams, then each run extended while it stays a piece of the
prompt; linear in practice). Spans are in key indices; :func:`blank_spans` maps them back onto
the text. Used by :mod:`taxpraben.parsing.prompt_copy`.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain, compress, starmap

from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.latex import strip_latex

__all__ = [
    "COPY_MIN",
    "SIMILAR_N",
    "blank_spans",
    "comparison_key",
    "copied_runs",
    "end_before",
    "gram_share",
    "key_only",
    "merge_spans",
    "plain_prompt",
    "prompt_key_of",
    "single_option",
    "split_at_own_lines",
    "text_key",
]


#: Shortest run (in key characters) shared with the prompt that counts as a copy.
COPY_MIN = 10


_MARKDOWN = frozenset("*#>|_~`$")


def _is_key_char(ch: str) -> bool:
    if ch.isspace() or ch in _MARKDOWN:
        return False
    if ch == "%":
        return True
    return unicodedata.category(ch)[0] not in "PSZC"


#: Each character seen, and whether it belongs to the key (the category lookup is the cost).
_KEY_CHARS: dict[str, bool] = {}
_ASCII_UPPER_RUN = re.compile("[A-Z]+")
#: Characters beyond the Basic Multilingual Plane (emoji, rare ideographs): texts that hold
#: one take the character-by-character way (:func:`_key_flags`).
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@functools.cache
def _bmp_runs() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Regexes of runs of key characters and of other characters, exact for the Basic
    Multilingual Plane: :func:`_is_key_char` asked once for each of its 65,536 code points
    (10-30 ms, once per process; the scoring warm-up of ``run`` pays it). A regex walks a
    text at C speed: a prompt's key took ~100 us a record as a Python-level map over its
    characters, ~15 us this way."""
    bounds: list[tuple[int, int]] = []  # ranges of key characters
    start: int | None = None
    for cp in range(0x10000):
        if _is_key_char(chr(cp)):
            if start is None:
                start = cp
        elif start is not None:
            bounds.append((start, cp - 1))
            start = None
    if start is not None:
        bounds.append((start, 0xFFFF))
    ranges = "".join(f"\\u{a:04x}-\\u{b:04x}" if b > a else f"\\u{a:04x}" for a, b in bounds)
    return re.compile(f"[{ranges}]+"), re.compile(f"[^{ranges}\\U00010000-\\U0010ffff]+")


def _lower_latin(key: str) -> str:
    """Latin capitals lower-cased (only where there are some: most keys are Chinese)."""
    return _ASCII_UPPER_RUN.sub(lambda m: m.group().lower(), key)


def _key_flags(text: str) -> list[bool]:
    """For each character of ``text``, whether it belongs to the key (any plane)."""
    for ch in set(text).difference(_KEY_CHARS):
        _KEY_CHARS[ch] = _is_key_char(ch)
    return list(map(_KEY_CHARS.__getitem__, text))


def text_key(text: str) -> tuple[str, list[int]]:
    """The comparison key of ``text`` and, for each key character, its index in ``text``.

    Latin letters are lower-cased one for one (``casefold`` may change a length and with it
    the map back onto ``text``); full-width forms are already folded by the cleaning."""
    if _ASTRAL.search(text):
        flags = _key_flags(text)
        return _lower_latin("".join(compress(text, flags))), list(compress(range(len(text)), flags))
    runs = [m.span() for m in _bmp_runs()[0].finditer(text)]
    key = "".join([text[a:b] for a, b in runs])
    return _lower_latin(key), list(chain.from_iterable(starmap(range, runs)))


def key_only(text: str) -> str:
    """:func:`text_key`'s key without the map back onto ``text`` (the prompt's keys)."""
    if _ASTRAL.search(text):
        return _lower_latin("".join(compress(text, _key_flags(text))))
    return _lower_latin(_bmp_runs()[1].sub("", text))


@lru_cache(maxsize=2048)
def comparison_key(text: str) -> str:
    """``text`` cleaned, LaTeX made plain, without whitespace, Markdown and punctuation,
    Latin case-folded: the form in which an output and its prompt are compared (cached: the
    options, the document's clauses and the prompt's lines are keyed for every reading)."""
    return key_only(strip_latex(clean_prediction(text)))


@lru_cache(maxsize=1024)
def _prompt_grams(prompt_key: str) -> frozenset[str]:
    n = COPY_MIN
    count = len(prompt_key) - n + 1
    return frozenset(map(prompt_key.__getitem__, map(slice, range(count), range(n, n + count))))


@lru_cache(maxsize=1024)
def plain_prompt(text: str) -> str:
    """``text`` (a query, a document) cleaned and its LaTeX made plain (cached: the prompt's
    key and its lines' keys are made from it, for every run and every reader)."""
    return strip_latex(clean_prediction(text))


@lru_cache(maxsize=1024)
def prompt_key_of(query: str, document: str | None) -> str:
    """The key of the prompt, without the document when one is given (cached: the same prompt
    is read for every run and every reader)."""
    text = plain_prompt(query)
    if document:
        doc = plain_prompt(document)
        if doc and doc in text:
            text = text.replace(doc, "\n")
        elif doc:
            # the document given in pieces (a passage before its table): each of its lines the prompt holds
            for line in sorted({line.strip() for line in doc.split("\n")}, key=len, reverse=True):
                if len(line) >= _DOCUMENT_LINE_MIN and line in text:
                    text = text.replace(line, "\n")
    return key_only(text)


#: The shortest line of a document given in pieces that is taken out of the prompt as document.
_DOCUMENT_LINE_MIN = 8


def copied_runs(key: str, prompt_key: str) -> list[tuple[int, int]]:
    """Key spans that repeat the prompt: from each :data:`COPY_MIN`-gram of the prompt, the
    longest stretch that is one piece of it (two copies of different places that happen to
    touch stay two runs)."""
    n = COPY_MIN
    if len(key) < n or len(prompt_key) < n:
        return []
    grams = _prompt_grams(prompt_key)
    runs: list[tuple[int, int]] = []
    i = 0
    while i <= len(key) - n:
        if key[i : i + n] not in grams:
            i += 1
            continue
        end = _longest_piece(key, i, i + n, prompt_key)
        # A copy starts and ends between numbers, never inside one ("44,000元（适用税率13%）"
        # shares "000元适用税率13%" with "800000元，适用税率13%": 44000 is no copy).
        start, stop = i, end
        while 0 < start < stop and key[start - 1].isdigit() and key[start].isdigit():
            start += 1
        while start < stop < len(key) and key[stop - 1].isdigit() and key[stop].isdigit():
            stop -= 1
        if stop - start >= n:
            runs.append((start, stop))
        i = end
    return runs


def _longest_piece(key: str, start: int, end: int, prompt_key: str) -> int:
    """The largest ``stop`` (from ``end``, with ``key[start:end]`` in ``prompt_key``) such that
    ``key[start:stop]`` is one piece of ``prompt_key``. Each prefix of a piece is one too, so
    the stretch grows by doubling steps and is then halved to its end (a long copy costs a
    few searches of the prompt, not one per character)."""
    good, bad, step = end, len(key) + 1, 1
    while good + step < bad:
        if key[start : good + step] not in prompt_key:
            bad = good + step
            break
        good += step
        step *= 2
    while bad - good > 1:
        mid = (good + bad) // 2
        if key[start:mid] in prompt_key:
            good = mid
        else:
            bad = mid
    return good


#: A line that is nothing but an option letter ("A", "(B)", "C."): an answer of the model's own.
_LONE_LABEL = re.compile(r"[ \t*]*[(（]?[A-Ja-j][)）.．:：]?[ \t*]*")


def split_at_own_lines(runs: list[tuple[int, int]], text: str, where: list[int]) -> list[tuple[int, int]]:
    """Runs that start inside a line of the model's own, or on a line that is nothing but an
    option letter, and go on over a line break are split there, each piece kept when it is
    :data:`COPY_MIN` characters long: the end of one analysis line and the letter of the next
    ("……是否存在心力衰竭。\nD. 感染性心内膜炎"), an answer letter and the heading after it
    ("A\n\nRationale:" beside a prompt that asks for "a rationale") are no copy, whatever the
    prompt runs together."""
    out: list[tuple[int, int]] = []
    for start, end in runs:
        line_start = text.rfind("\n", 0, where[start]) + 1
        line_end = text.find("\n", where[start])
        lone_label = line_end > 0 and _LONE_LABEL.fullmatch(text, line_start, line_end) is not None
        if not key_only(text[line_start : where[start]]) and not lone_label:
            out.append((start, end))
            continue
        cut = next((i for i in range(start + 1, end) if "\n" in text[where[i - 1] : where[i]]), end)
        out.extend(piece for piece in ((start, cut), (cut, end)) if piece[1] - piece[0] >= COPY_MIN)
    return out


_COMMAND = re.compile(r"\\[A-Za-z]+")
_BRACE = re.compile("[{}]")


def split_at_markup(
    runs: list[tuple[int, int]], text: str, where: list[int], protected: Sequence[tuple[int, int]] = ()
) -> list[tuple[int, int]]:
    """Copied runs cut to what a copy can be: never the letters of a LaTeX command's name
    (``\\boxed``) nor a ``protected`` stretch of ``text`` (an answer marker such as "the
    answer is", which a prompt may ask for word for word), split at a box's braces, and
    starting and ending at the edges of Latin words. Markup is never content, a box and an
    answer marker are statements of their own, and half a word is no copy: without this the
    tail of ``\\boxed`` and the answer in its braces copied "…increased 3 degrees", and
    "Thu|s, the average price" lost its "s". Each piece is kept when it is :data:`COPY_MIN`
    characters long."""
    if not runs:
        return runs
    blocked = bytearray(len(text))
    for a, b in [*protected, *(m.span() for m in _COMMAND.finditer(text))] if "\\" in text or protected else protected:
        blocked[a:b] = b"\x01" * (b - a)
    out: list[tuple[int, int]] = []
    for start, end in runs:
        piece = start
        for i in range(start, end + 1):
            if piece < i < end and _BRACE.search(text, where[i - 1], where[i]):
                _keep_words(out, piece, i, text, where)
                piece = i
            if i == end or blocked[where[i]]:
                _keep_words(out, piece, i, text, where)
                piece = i + 1
    return out


def _latin(ch: str) -> bool:
    return ch.isascii() and ch.isalpha()


def _keep_words(out: list[tuple[int, int]], start: int, end: int, text: str, where: list[int]) -> None:
    """Add the key span ``start:end`` without a word cut at either edge, when long enough."""
    while start < end and _latin(text[where[start]]) and where[start] > 0 and _latin(text[where[start] - 1]):
        start += 1
    while end > start and _latin(text[where[end - 1]]) and where[end - 1] + 1 < len(text) and _latin(
            text[where[end - 1] + 1]):
        end -= 1
    if end - start >= COPY_MIN:
        out.append((start, end))


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def blank_spans(text: str, where: list[int], spans: list[tuple[int, int]]) -> str:
    """``text`` with each key span (and the non-key characters inside it) replaced by a space."""
    if not spans:
        return text
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        begin, stop = where[start], where[end - 1] + 1
        pieces.append(text[last:begin])
        pieces.append("\n" * text.count("\n", begin, stop) or " ")  # lines keep their breaks
        last = stop
    pieces.append(text[last:])
    return "".join(pieces)


SIMILAR_N = 3


def gram_share(key: str, other_key: str) -> float:
    """The share of ``key``'s character 3-grams that occur in ``other_key`` (both keys)."""
    grams = [key[i : i + SIMILAR_N] for i in range(len(key) - SIMILAR_N + 1)]
    return sum(g in other_key for g in grams) / len(grams) if grams else 0.0


def end_before(where: list[int], start: int, end: int, limit: int) -> int:
    """The end (exclusive, key index) of the span ``start:end`` cut at text offset ``limit``."""
    stop = start + 1
    while stop < end and where[stop] < limit:
        stop += 1
    return stop


def single_option(run_key: str, option_keys: Sequence[str]) -> bool:
    """A run that is one option: its text or part of it, with or without its letter (or number), and
    less than :data:`COPY_MIN` characters of the prompt around it (``是A. 承受……的单位和个人``
    after the question's ``……纳税人是（ ）。``)."""
    for i, key in enumerate(option_keys):
        # its label: the letter, or the number where the options are numbered ("② …" is "(2) …")
        labels = (chr(ord("a") + i), str(i + 1))
        if run_key in key or any(run_key.startswith(label) and run_key[len(label) :] in key for label in labels):
            return True
        at = run_key.find(key) if key else -1
        if at >= 0:
            head = run_key[:at]
            head = next((head[: -len(label)] for label in labels if head.endswith(label)), head)
            tail = run_key[at + len(key) :]
            others = [k for j, k in enumerate(option_keys) if j != i and k]
            if len(head) < COPY_MIN and len(tail) < COPY_MIN and not any(k in head or k in tail for k in others):
                return True
    return False

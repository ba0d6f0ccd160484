"""Options written back: lists, restated lines, inline enumerations, invented options.

An option list written back (three or more options, in any layout or order, verbatim or
reworded), one line listing the options (``A. 89 （……） B. 200 …``) and an option list of the
model's own are no answer; one option written back, a multiple choice's selection written back,
and the question's stem restated with the option it answers with are. The option lines written
back from the first, in order, up to a line cut off inside the next one, are the list copied when
the generation stopped, not a selection (:func:`list_cut_off`). Used by
:mod:`taxpraben.parsing.prompt_copy`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

from taxpraben.parsing.continuations import (
    own_before,
    restates,
)
from taxpraben.parsing.overlap import (
    comparison_key,
    gram_share,
)

__all__ = [
    "answer_kept",
    "answers_stem",
    "inline_enumerations",
    "invented_options",
    "list_cut_off",
    "listing_lines",
    "numbers_as_letters",
    "option_keys_of",
    "option_list_spans",
    "restated_option_lines",
    "selection",
    "whole_option_text",
]


#: Separators allowed between the options of a copied option list (letters, punctuation).
_LIST_GAP = 6


@lru_cache(maxsize=1024)
def option_keys_of(options: tuple[str, ...]) -> tuple[str, ...]:
    """Each option's comparison key, in option order (an option with no key keeps its place,
    empty, so that index i is always the letter chr(65 + i))."""
    return tuple(comparison_key(o) for o in options)


def option_list_spans(key: str, option_keys: Sequence[str]) -> list[tuple[int, int, int]]:
    """Key spans holding three or more options in the question's order (an option list), with
    how many options each holds."""
    if len(option_keys) < 3:
        return []
    found: list[tuple[int, int, int]] = []  # (start, end, option index), non-overlapping
    covered = bytearray(len(key))
    for index, needle in sorted(enumerate(option_keys), key=lambda p: -len(p[1])):
        if not needle:
            continue
        start = key.find(needle)
        while start >= 0:
            end = start + len(needle)
            if not any(covered[start:end]):
                covered[start:end] = b"\x01" * (end - start)
                found.append((start, end, index))
            start = key.find(needle, start + 1)
    found.sort()
    spans: list[tuple[int, int, int]] = []
    run: list[tuple[int, int, int]] = []

    def close() -> None:
        if len(run) >= 3:
            # the letter before the first option belongs to the list
            first = run[0][0]
            if first > 0 and key[first - 1] == chr(ord("a") + run[0][2]):
                first -= 1
            spans.append((first, run[-1][1], len(run)))

    for item in found:
        if run and item[2] == run[-1][2] + 1 and item[0] - run[-1][1] <= _LIST_GAP and _only_letters(
            key[run[-1][1] : item[0]]
        ):
            run.append(item)
        else:
            close()
            run = [item]
    close()
    return spans


#: The letter that opens an option line ("(a) ", "a) " after the prompt's "(", "B. ").
_OPTION_HEAD = re.compile(r"[(（]?([A-Ja-j])[)）.．:：]")
#: What ends a sentence at the end of a line.
_SENTENCE_ENDS = (".", "。", "!", "?", "！", "？")


def list_cut_off(text: str, options: Sequence[str], *, walked: bool = False) -> bool:
    """``text`` writes the option lines back from the first option, in order, each whole, and
    stops inside the next one ("(a) X.\n(b) Y.\n(c) Te", "…\n("): the model copied the prompt's
    list when its generation was cut off. Whole lines alone select (a model that answers "A. X\nB.
    Y" names A and B); the line cut off in the list's order shows a copy. ``walked``: a sentence
    per option in its own words is enough ("(a) : X est une caractéristique ….\n(b) L'"), the
    last one unfinished: the model went through the options and was cut off before it chose."""
    lines = [line.strip() for line in text.strip().split("\n")]
    keys = option_keys_of(tuple(options))
    if not 2 <= len(lines) <= len(keys):
        return False
    for index, line in enumerate(lines[:-1]):
        head = _OPTION_HEAD.match(line)
        if head is None or head.group(1).lower() != chr(ord("a") + index):
            return False
        if not walked and (comparison_key(line[head.end() :]) != keys[index] or not keys[index]):
            return False
    if walked:  # each line a sentence, the last one started on the next option and unfinished
        head = _OPTION_HEAD.match(lines[-1])
        started = lines[-1][head.end() :].strip() if head else ""
        # the next option's text started and unfinished, or its label alone ("…\n(b)")
        return head is not None and head.group(1).lower() == chr(ord("a") + len(lines) - 1) \
            and comparison_key(started) != keys[len(lines) - 1] and not started.endswith(_SENTENCE_ENDS) \
            and all(line.endswith(_SENTENCE_ENDS) for line in lines[:-1])
    following = chr(ord("a") + len(lines) - 1) + keys[len(lines) - 1]
    cut = comparison_key(lines[-1])
    return following.startswith(cut) and cut != following


def _some_options(run_key: str, block: str, option_keys: Sequence[str]) -> bool:
    """A run within the prompt's options that leaves some of them out: a selection."""
    return bool(block) and run_key in block and not all(k in run_key for k in option_keys)


#: Key characters between two copied runs for them to count as one stretch of the prompt.
_TOUCH = 3


def selection(key: str, runs: Sequence[tuple[int, int]], n: int, block: str, option_keys: Sequence[str]) -> bool:
    """Whether copied run ``n`` selects options of a multiple choice rather than copying the
    prompt: it lies within the options, leaves some out, and no copy of the rest of the
    prompt (instruction, question) touches it."""
    start, end = runs[n]
    if not _some_options(key[start:end], block, option_keys):
        return False
    if key[end:] in ("答案", "答"):
        return False  # the options and then the prompt's answer prefix: the prompt continued
    neighbours = [m for m in (n - 1, n + 1) if 0 <= m < len(runs)]
    return not any(
        (runs[m][0] - end <= _TOUCH if m > n else start - runs[m][1] <= _TOUCH)
        and key[runs[m][0] : runs[m][1]] not in block
        for m in neighbours
    )


def _only_letters(gap: str) -> bool:
    return all(ch.isascii() for ch in gap)


_LISTED_LINE = re.compile(
    r"^[\s*#>\-]*(?:(?:答案|答)\s*[:：]\s*)?(?P<opt>[(（【\[]?([A-H])[)）】\]]?\s*[.．、:：)）]).*$", re.MULTILINE
)


#: A line about an option that judges it (an analysis, not a copy).
_VERDICT = re.compile(r"[✅❌✔✓✗✘√×☑]|不?正确|错误|对的|错的|不当选|当选|不选|不?属于|(?i:correct|incorrect|wrong|true|false)")


#: Share of a listed line's 3-grams found in the prompt for it to restate an option.
_RESTATED_OPTION = 0.4


def _judges(body: str, option_key: str) -> bool:
    """Whether an option line judges its option: a verdict word that is not the option's own."""
    for m in _VERDICT.finditer(body):
        word = comparison_key(m.group(0))
        if not word or word not in option_key:  # a mark (✅, ×) is always a verdict
            return True
    return False


def restated_option_lines(
    text: str, where: list[int], prompt_key: str, option_keys: Sequence[str] = ()
) -> list[tuple[int, int, int]]:
    """Key spans of runs of three or more option lines with different letters, in any order,
    that restate the prompt (the options written back, reworded, shortened or reordered), with
    how many lines each holds."""
    lines = list(_LISTED_LINE.finditer(text))
    spans: list[tuple[int, int, int]] = []
    run: list[re.Match[str]] = []

    def close() -> None:
        if len(run) >= 3:
            begin = bisect_left(where, run[0].start("opt"))
            end = bisect_left(where, run[-1].end())
            if end > begin:
                spans.append((begin, end, len(run)))

    for m in lines:
        letter = m.group(2)
        adjacent = run and text.count("\n", run[-1].end(), m.start()) <= 2 and not text[run[-1].end() : m.start()].strip()
        body = m.group(0)[m.end("opt") - m.start() :]
        index = ord(letter) - ord("A")
        own_key = option_keys[index] if index < len(option_keys) else ""
        restated = restates(body, prompt_key, _RESTATED_OPTION) and not _judges(body, own_key)
        if restated and adjacent and letter not in {r.group(2) for r in run}:
            run.append(m)
            continue
        close()
        run = [m] if restated else []
    close()
    return spans


_INLINE_MARK = re.compile(r"(?:^|(?<=[\s，,；;。、]))([A-H])\s*[.．、:：]")


#: Characters an inline enumerated option may take (its text and a short aside).
_INLINE_ITEM = 60
_SENTENCE_END = re.compile(r"[。！？!?]")


def inline_enumerations(text: str, where: list[int], prompt_key: str) -> list[tuple[int, int, int]]:
    """Key spans of lines that enumerate three or more options in letter order from A
    (``A. 89 （……） B. 200 （……） C. 208 D. 289``): the options written back on one line,
    whatever their texts, unless the line judges them (a verdict the prompt does not hold)."""
    spans: list[tuple[int, int, int]] = []
    offset = 0
    for line in text.split("\n"):
        marks = list(_INLINE_MARK.finditer(line))
        letters = "".join(m.group(1) for m in marks)
        if len(marks) >= 3 and "ABCDEFGH".startswith(letters) and not _judges(line, prompt_key):
            gaps = [b.start() - a.end() for a, b in pairwise(marks)] + [len(line) - marks[-1].end()]
            if max(gaps) <= _INLINE_ITEM:
                begin = bisect_left(where, offset + marks[0].start())
                # the last item ends with its sentence: what follows it is the model's own
                # ("……E. 经营所得。其中E不属于综合所得，答案ABCD")
                stop = _SENTENCE_END.search(line, marks[-1].end())
                end = bisect_left(where, offset + (stop.end() if stop else len(line)))
                if end > begin:
                    spans.append((begin, end, len(marks)))
        offset += len(line) + 1
    return spans


_STEM_GAP = 3


#: The longest restated stem (key characters) kept as part of an answer sentence.
_STEM_MAX = 80


def answers_stem(key: str, span: tuple[int, int], option_keys: Sequence[str],
                  listed: Sequence[tuple[int, int]]) -> bool:
    """A copied run followed (within a verb or a letter) by one option that is no part of an
    option list: the question restated with its answer."""
    start, end = span
    if any(a <= end < b for a, b in listed) or end - start > _STEM_MAX:
        return False
    if any(k and k in key[start:end] for k in option_keys):
        return False  # it holds options itself: a copy of the question with its options
    after = key[end : end + _STEM_GAP + max((len(k) for k in option_keys), default=0)]
    for i, option in enumerate(option_keys):
        if not option:
            continue
        at = after.find(option)
        if 0 <= at <= _STEM_GAP and (at == 0 or set(after[:at]) <= set("是为即从" + chr(ord("a") + i))):
            rest = key[end + at + len(option) : end + at + len(option) + 2]
            if not rest.startswith(chr(ord("a") + i + 1)):  # not "…是A. x B. y": a list
                return True
    return False


_CONCLUDING = re.compile(r"(?:所以|因此|故|综上|答案|答|选)$")


def answer_kept(key: str, span: tuple[int, int], option_keys: Sequence[str]) -> tuple[int, int]:
    """After a concluding word, a copy of the instruction or stem that ends with one option
    (``所以，从以下选项中选择正确的一项：A. 权力意味着……``) gives that option: only the part
    before it is a copy."""
    start, end = span
    if not _CONCLUDING.search(key[max(0, start - 4) : start]):
        return span
    run = key[start:end]
    for i, option in enumerate(option_keys):
        for tail in (chr(ord("a") + i) + option, option):
            if option and run.endswith(tail) and not any(k and k in run[: -len(tail)] for k in option_keys):
                return (start, end - len(tail))
    return span


def invented_options(
    text: str, where: list[int], spans: list[tuple[int, int]], prompt_key: str, option_keys: Sequence[str]
) -> bool:
    """The output opens with an option list of its own (three or more lines A, B, C, ... that
    are not this question's options): what it then answers is its own question."""
    lines = [m for m in _LISTED_LINE.finditer(text)]
    if len(lines) < 3 or own_before(text, lines[0].start(), where, spans):
        return False
    run = lines[:1]
    for m in lines[1:]:
        if ord(m.group(2)) != ord(run[-1].group(2)) + 1 or text[run[-1].end() : m.start()].strip():
            break
        run.append(m)
    if len(run) < 3 or run[0].group(2) != "A":
        return False
    for m in run:
        body = m.group(0)[m.end("opt") - m.start() :]
        body_key = comparison_key(body)
        if (
            any(k and (k in body_key or body_key in k) for k in option_keys)
            or gram_share(body_key, prompt_key) >= 0.3
            or _VERDICT.search(body) is not None  # "A：正确。": a verdict on this question's option
        ):
            return False
    return True


def listing_lines(text: str, option_keys: Sequence[str]) -> list[tuple[int, int]]:
    """Spans of ``text`` (``[start, end)`` of each line) that list the options one a line
    without judging them: lines of a run of three or more adjacent option lines with different
    letters, each line that gives no verdict on its option (:func:`_judges`). Such a line names
    its option as the list does; it does not choose it (a judge quoting one line of an option
    list paraphrased is not quoting an answer)."""
    spans: list[tuple[int, int]] = []
    run: list[re.Match[str]] = []

    def close() -> None:
        if len(run) >= 3:
            for m in run:
                index = ord(m.group(2)) - ord("A")
                own_key = option_keys[index] if index < len(option_keys) else ""
                if not _judges(m.group(0)[m.end("opt") - m.start() :], own_key):
                    spans.append((m.start(), m.end()))

    for m in _LISTED_LINE.finditer(text):
        adjacent = run and text.count("\n", run[-1].end(), m.start()) <= 2 and not text[run[-1].end() : m.start()].strip()
        if adjacent and m.group(2) not in {r.group(2) for r in run}:
            run.append(m)
            continue
        close()
        run = [m]
    close()
    return spans


def whole_option_text(body: str, at: int, text: str, own: str) -> int:
    """Where the option's whole ``text`` (``own``, its key) ends when ``body`` writes it from ``at``,
    letters of other options inside it and all ("(A) Young's modulus of A is greater than B"), or 0."""
    if not own or not text:
        return 0
    start = len(body) - len(body[at:].lstrip(" \t*"))
    for end in range(start + max(1, len(text) - 2), min(len(body), start + len(text) + 6) + 1):
        if comparison_key(body[start:end]) == own:
            return end
    return 0


#: An option the question numbers at the start of a line ("1: バシリキシマブ", "(2) …", "3. …").
_NUMBERED_OPTION = re.compile(r"^[ \t]*[(（]?([1-9])[)）]?[ \t]*[.．:：、)）][ \t]*\S", re.MULTILINE)
#: An option the question letters at the start of a line ("A. …", "(b) …").
_LETTERED_OPTION = re.compile(r"^[ \t]*[(（]?[A-Ha-h][)）]?[ \t]*[.．:：、)）][ \t]*\S", re.MULTILINE)
#: A line that is nothing but option numbers, after an answer word or none ("3,4", "答え: 2、4").
_NUMBERS_LINE = re.compile(
    r"^(?P<head>[ \t*]*(?:(?:答え|正解|解答|回答|答案|(?i:answer))[ \t]*[:：は]?[ \t]*)?)"
    r"(?P<numbers>[1-9](?:[ \t]*(?:[,、，/&]|(?i:and)|と|和)[ \t]*[1-9])*)(?P<tail>[ \t]*[。.]?[ \t*]*)$",
    re.MULTILINE,
)


def numbers_as_letters(text: str, query: str) -> str:
    """``text`` with the option numbers it answers in written as the options' letters ("3,4" ->
    "C,D"), where the question numbers its last list of options from 1 ("1: …\\n2: …") and letters
    none: a line of the output that is nothing but option numbers names those options. Length kept."""
    numbered = [int(m.group(1)) for m in _NUMBERED_OPTION.finditer(query or "")]
    starts = [i for i, n in enumerate(numbered) if n == 1]
    if not starts or _LETTERED_OPTION.search(query or "") or not _NUMBERS_LINE.search(text):
        return text
    last = numbered[starts[-1] :]
    count = next((k for k in range(len(last)) if last[k] != k + 1), len(last))
    if count < 2:
        return text

    def letters(m: re.Match[str]) -> str:
        digits = re.findall(r"[1-9]", m.group("numbers"))
        if any(int(d) > count for d in digits):
            return m.group(0)
        written = re.sub(r"[1-9]", lambda d: chr(ord("A") + int(d.group(0)) - 1), m.group("numbers"))
        return m.group("head") + written + m.group("tail")

    return _NUMBERS_LINE.sub(letters, text)

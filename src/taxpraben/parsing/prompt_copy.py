"""What an output copies from its own prompt, and where it moves on to another question.

A base model continues its prompt: it writes the options back (``A. 增值税 B. 企业所得税
C. …``), restates the question or the document, repeats the instruction (``请选出唯一正确的
选项``) or the prompt's answer prefix (``答案：``), answers, and then invents a new question
(``题目：…``, ``问题2：``, ``第2题``, ``Question:``) and answers that too. None of what it copies
is an answer, and what it says about an invented question answers nothing that was asked.
:func:`own_answer` returns the part of an output that is the model's own answer to *this*
question, for every reader (labels, letters, numbers, spans) alike:

1. **The first answer to this question.** The output is cut where it moves on to another
   question, once it has said something of its own: a new question heading at the start of a
   line (``题目：``, ``问题2：``, ``第2题``, ``例2``, ``Question:``, ``Q2:``), a numbered
   question line (``2. 下列……（ ）``) or a question stem followed by a new option list, a
   new option list whose texts are not this question's options, or this prompt's own
   instruction or question written again. A new heading at the very start, before anything of
   the model's own, is an invented question only when it copies nothing of the prompt
   (``题目：<this question>`` is a copy, see 2).
2. **Copies blanked.** Every stretch of the output that repeats the prompt is blanked:
   a run of at least :data:`COPY_MIN` characters shared with the prompt (compared on a key
   without whitespace, Markdown and punctuation, Latin case-folded, so that ``A.增值税`` and
   ``A、增值税`` match); and an option list, three or more of the question's option texts in
   its order with nothing but letters and separators between them, in any layout. A copied
   run that lies within one option (its text or part of it, with or without its letter:
   ``B. 不动产租赁服务``, ``非法出售增值税专用发票`` for ``…发票罪``) is not blanked: naming an option is how an answer is given. With a ``document`` (the
   context of a reading task, whose answers are spans of it by design), only runs that
   repeat the rest of the prompt (instruction, question) are blanked.
3. **Nothing of its own.** When nothing is left but punctuation, Markdown and answer
   headings (``答案：``, ``解析：``), the output is a *copy of the prompt*; when the output
   began with an invented question, it *answers another question*. Either is a format
   failure (:attr:`OwnAnswer.failure`).

Pure and total; linear in the lengths of output and prompt (one hash set of the prompt's
:data:`COPY_MIN`-grams).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.latex import strip_latex

__all__ = [
    "ANOTHER_QUESTION",
    "COPY_MIN",
    "COPY_OF_PROMPT",
    "OwnAnswer",
    "comparison_key",
    "gram_share",
    "own_answer",
]

#: Shortest run (in key characters) shared with the prompt that counts as a copy.
COPY_MIN = 10
#: Format-failure reasons of :attr:`OwnAnswer.failure`.
COPY_OF_PROMPT = "copy of the prompt"
ANOTHER_QUESTION = "answers another question"


@dataclass(frozen=True)
class OwnAnswer:
    """The model's own answer part of an output.

    ``text``: the output cut before any invented continuation, copied stretches blanked
    (each replaced by one space, so lines and sentences keep their shape); ``copied``:
    whether anything was blanked; ``cut``: whether an invented continuation was cut off;
    ``failure``: :data:`COPY_OF_PROMPT` or :data:`ANOTHER_QUESTION` when nothing of the
    model's own is left, else None.
    """

    text: str
    copied: bool = False
    cut: bool = False
    failure: str | None = None


_MARKDOWN = frozenset("*#>|_~`$")


def _is_key_char(ch: str) -> bool:
    if ch.isspace() or ch in _MARKDOWN:
        return False
    if ch == "%":
        return True
    return unicodedata.category(ch)[0] not in "PSZC"


def _key(text: str) -> tuple[str, list[int]]:
    """The comparison key of ``text`` and, for each key character, its index in ``text``."""
    chars: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if _is_key_char(ch):
            chars.append(ch.casefold())
            where.append(i)
    return "".join(chars), where


def comparison_key(text: str) -> str:
    """``text`` cleaned, LaTeX made plain, without whitespace, Markdown and punctuation,
    Latin case-folded: the form in which an output and its prompt are compared."""
    return _key(strip_latex(clean_prediction(text)))[0]


@lru_cache(maxsize=64)
def _prompt_grams(prompt_key: str) -> frozenset[str]:
    n = COPY_MIN
    return frozenset(prompt_key[i : i + n] for i in range(len(prompt_key) - n + 1))


def _prompt_key(query: str, document: str | None) -> str:
    text = strip_latex(clean_prediction(query))
    if document:
        doc = strip_latex(clean_prediction(document))
        if doc and doc in text:
            text = text.replace(doc, "\n")
    return _key(text)[0]


# --- option texts -------------------------------------------------------------------------

_OPTION_LINE = re.compile(r"^[\s*#>\-]*[(（【\[]?([A-H])[)）】\]]?\s*[.．、:：)）]\s*(?P<text>\S.*?)\s*$", re.MULTILINE)
#: Separators allowed between the options of a copied option list (letters, punctuation).
_LIST_GAP = 6


def _option_keys(options: Sequence[str]) -> list[str]:
    keys = [comparison_key(o) for o in options]
    return [k for k in keys if k]


def _single_option(run_key: str, option_keys: Sequence[str]) -> bool:
    """A run that is one option: its text or part of it, with or without its letter, and
    less than :data:`COPY_MIN` characters of the prompt around it (``是A. 承受……的单位和个人``
    after the question's ``……纳税人是（ ）。``)."""
    for i, key in enumerate(option_keys):
        letter = chr(ord("a") + i)
        if run_key in key or (run_key.startswith(letter) and run_key[1:] in key):
            return True
        at = run_key.find(key) if key else -1
        if at >= 0:
            head = run_key[:at]
            head = head[:-1] if head.endswith(letter) else head
            tail = run_key[at + len(key) :]
            others = [k for j, k in enumerate(option_keys) if j != i and k]
            if len(head) < COPY_MIN and len(tail) < COPY_MIN and not any(k in head or k in tail for k in others):
                return True
    return False


def _option_list_spans(key: str, option_keys: Sequence[str]) -> list[tuple[int, int, int]]:
    """Key spans holding three or more options in the question's order (an option list), with
    how many options each holds."""
    if len(option_keys) < 3:
        return []
    found: list[tuple[int, int, int]] = []  # (start, end, option index), non-overlapping
    covered = bytearray(len(key))
    for index, needle in sorted(enumerate(option_keys), key=lambda p: -len(p[1])):
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


def _some_options(run_key: str, block: str, option_keys: Sequence[str]) -> bool:
    """A run within the prompt's options that leaves some of them out: a selection."""
    return bool(block) and run_key in block and not all(k in run_key for k in option_keys)


#: Key characters between two copied runs for them to count as one stretch of the prompt.
_TOUCH = 3


def _selection(key: str, runs: Sequence[tuple[int, int]], n: int, block: str, option_keys: Sequence[str]) -> bool:
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
_VERDICT = re.compile(r"[✅❌✔✗✘√×☑]|不?正确|错误|对的|错的|不当选|当选|不选|(?i:correct|incorrect|wrong|true|false)")
#: Share of a listed line's 3-grams found in the prompt for it to restate an option.
_RESTATED_OPTION = 0.4


def _judges(body: str, option_key: str) -> bool:
    """Whether an option line judges its option: a verdict word that is not the option's own."""
    for m in _VERDICT.finditer(body):
        word = comparison_key(m.group(0))
        if not word or word not in option_key:  # a mark (✅, ×) is always a verdict
            return True
    return False


def _restated_option_lines(
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
        restates = _restates(body, prompt_key, _RESTATED_OPTION) and not _judges(body, own_key)
        if restates and adjacent and letter not in {r.group(2) for r in run}:
            run.append(m)
            continue
        close()
        run = [m] if restates else []
    close()
    return spans


_INLINE_MARK = re.compile(r"(?:^|(?<=[\s，,；;。、]))([A-H])\s*[.．、:：]")
#: Characters an inline enumerated option may take (its text and a short aside).
_INLINE_ITEM = 60


def _inline_enumerations(text: str, where: list[int], prompt_key: str) -> list[tuple[int, int, int]]:
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
                end = bisect_left(where, offset + len(line))
                if end > begin:
                    spans.append((begin, end, len(marks)))
        offset += len(line) + 1
    return spans


_STEM_GAP = 3
#: The longest restated stem (key characters) kept as part of an answer sentence.
_STEM_MAX = 80


def _answers_stem(key: str, span: tuple[int, int], option_keys: Sequence[str],
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


def _answer_kept(key: str, span: tuple[int, int], option_keys: Sequence[str]) -> tuple[int, int]:
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


def _invented_options(
    text: str, where: list[int], spans: list[tuple[int, int]], prompt_key: str, option_keys: Sequence[str]
) -> bool:
    """The output opens with an option list of its own (three or more lines A, B, C, ... that
    are not this question's options): what it then answers is its own question."""
    lines = [m for m in _LISTED_LINE.finditer(text)]
    if len(lines) < 3 or _own_before(text, lines[0].start(), where, spans):
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


def _own_before(text: str, point: int, where: list[int], spans: list[tuple[int, int]]) -> bool:
    """Whether the output says something of its own before ``point``."""
    return bool(_residue(_blank(text[:point], where, [s for s in spans if where[s[1] - 1] < point])))


# --- copied runs --------------------------------------------------------------------------


def _copied_runs(key: str, prompt_key: str) -> list[tuple[int, int]]:
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
        end = i + n
        while end < len(key) and key[i : end + 1] in prompt_key:
            end += 1
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


def _by_line(runs: list[tuple[int, int]], text: str, where: list[int]) -> list[tuple[int, int]]:
    """Runs that start inside a line of the model's own and go on over a line break are
    split there, each piece kept when it is :data:`COPY_MIN` characters long: the end of
    one analysis line and the letter of the next ("……是否存在心力衰竭。\nD. 感染性心内膜炎")
    are no copy, whatever the prompt runs together."""
    out: list[tuple[int, int]] = []
    for start, end in runs:
        line_start = text.rfind("\n", 0, where[start]) + 1
        if not _key(text[line_start : where[start]])[0]:
            out.append((start, end))
            continue
        cut = next((i for i in range(start + 1, end) if "\n" in text[where[i - 1] : where[i]]), end)
        out.extend(piece for piece in ((start, cut), (cut, end)) if piece[1] - piece[0] >= COPY_MIN)
    return out


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _blank(text: str, where: list[int], spans: list[tuple[int, int]]) -> str:
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


# --- invented continuations ---------------------------------------------------------------

_HEADING = re.compile(
    r"^[\s*#>【\[]*(?:"
    r"(?:题目|问题|试题|例题|习题|新题|下一题)\s*[0-9一二三四五六七八九十]*\s*[】\]]?\s*[:：]"
    r"|第\s*[0-9一二三四五六七八九十]+\s*[题问](?![目型])"
    r"|例\s*[0-9一二三四五六七八九十]+\s*[:：.、]"
    r"|(?i:question|q)\s*\d*\s*[:：.]"
    r")",
    re.MULTILINE,
)
_NUMBERED_QUESTION = re.compile(r"^[\s*#>]*\d{1,3}\s*[.、．)）]\s*(?P<stem>.*(?:[(（]\s*[)）]|[?？]).*)$", re.MULTILINE)
_ANSWER_HEADS = re.compile(
    r"最终答案|正确答案|参考答案|标准答案|答案|解析|分析|解答|答|(?i:final\s+answer|answer|solution)"
)
_RESIDUE_JUNK = re.compile(r"[\s\W_]+")


def _residue(text: str) -> str:
    """What is left of ``text`` without answer headings, punctuation and Markdown."""
    return _RESIDUE_JUNK.sub("", _ANSWER_HEADS.sub("", text))


def _option_lines(text: str, option_keys: Sequence[str]) -> list[tuple[int, int, bool]]:
    """Option lines of ``text`` as (line start, letter index, is about this question's option:
    its text holds the option's text, as a copy or a per-option analysis does)."""
    found = []
    for m in _OPTION_LINE.finditer(text):
        index = ord(m.group(1)) - ord("A")
        own = index < len(option_keys) and option_keys[index] in comparison_key(m.group("text"))
        found.append((m.start(), index, own))
    return found


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _heading_line(text: str, start: int) -> str:
    """The line at ``start`` with its heading; when the heading stands alone (``第2题``), the
    next non-empty line too (the question it opens)."""
    line = _line_at(text, start)
    if _key(_HEADING.sub("", line))[0]:
        return line
    rest = text[start + len(line) :].lstrip("\n")
    return line + " " + _line_at(rest, 0) if rest else line


def _line_at(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start : end if end >= 0 else len(text)]


_QUESTION_STEM = re.compile(r"(?:[(（]\s*[)）]|[?？]|_{2,})\s*$")


def _cut_points(text: str, option_keys: Sequence[str]) -> list[int]:
    """Offsets where another question may begin, in order."""
    points = {m.start() for m in _HEADING.finditer(text)}
    points.update(m.start() for m in _NUMBERED_QUESTION.finditer(text))
    lines = _option_lines(text, option_keys)
    for (start, index, own), nxt in pairwise(lines):
        # A new option list: an "A." and a "B." line that are not this question's options,
        # after a question stem ("……的是（ ）", "……？").
        if index == 0 and nxt[1] == 1 and not (own or nxt[2]) and start > 0:
            previous = _line_start(text, start - 1)
            if _QUESTION_STEM.search(text[previous:start].strip()):
                points.add(previous)
    return sorted(points)


_SIMILAR_N = 3
#: Shares of a line's character 3-grams found in the prompt above which the line restates
#: this question (after an answer: nearly word for word; at the start: a paraphrase).
_SAME_QUESTION = 0.8
_PARAPHRASE = 0.3


def gram_share(key: str, other_key: str) -> float:
    """The share of ``key``'s character 3-grams that occur in ``other_key`` (both keys)."""
    grams = [key[i : i + _SIMILAR_N] for i in range(len(key) - _SIMILAR_N + 1)]
    return sum(g in other_key for g in grams) / len(grams) if grams else 0.0


def _restates(line: str, prompt_key: str, share: float) -> bool:
    """Whether ``line`` restates the prompt: ``share`` of its character 3-grams occur in it."""
    key = _key(_HEADING.sub("", line))[0]
    key = _ANSWER_HEADS.sub("", key)
    grams = [key[i : i + _SIMILAR_N] for i in range(len(key) - _SIMILAR_N + 1)]
    if not grams:
        return True
    return sum(g in prompt_key for g in grams) >= share * len(grams)


_ANSWERED = re.compile(
    r"(?:最终答案|正确答案|参考答案|答案|答\s*[:：]|应选|故选|选择|选|(?i:answer))[^\n]{0,12}?[A-Za-z0-9\u4e00-\u9fff]|\\boxed"
)
_LETTER_FIRST = re.compile(r"^[^A-Za-z0-9\u4e00-\u9fff]*[A-H]\s*(?:[.．、:：)）]|$)")
#: A short first line of its own (``B``, ``B. 增值税``, ``8000元``) is an answer too.
_SHORT_ANSWER = 16


def _answered_before(
    text: str, point: int, where: list[int], spans: list[tuple[int, int]], option_keys: Sequence[str] = ()
) -> bool:
    """Whether the output has answered (a marker with something after it, or a first line of
    its own that is short, opens with an option letter or is one option) before ``point``:
    only then is what follows a continuation."""
    before = _blank(text[:point], where, [s for s in spans if where[s[1] - 1] < point])
    if not _residue(before):
        return False
    if _ANSWERED.search(before):
        return True
    lines = [line for line in before.split("\n") if _residue(line)]
    if not lines:
        return False
    first = _key(lines[0])[0]
    return len(first) <= _SHORT_ANSWER or bool(_LETTER_FIRST.match(lines[0])) or any(
        k and k in first and len(first) - len(k) < COPY_MIN for k in option_keys
    )


def _continuation(
    text: str, where: list[int], spans: list[tuple[int, int]], option_keys: Sequence[str],
    prompt_key: str, prompt_lines: Sequence[str],
) -> tuple[int | None, bool]:
    """Where the output moves on to another question, and whether it did so from the start."""
    cut: int | None = None
    first = False
    for point in _cut_points(text, option_keys):
        line = _heading_line(text, point)
        answered = _answered_before(text, point, where, spans, option_keys)
        if answered and not _restates(line, prompt_key, _SAME_QUESTION):
            cut = point
            break
        if not _residue(_blank(text[:point], where, [s for s in spans if where[s[1] - 1] < point])) and \
                not _restates(line, prompt_key, _PARAPHRASE) and _new_options_after(text, point, option_keys):
            cut, first = point, True  # opens with another question and its own options
            break
    asked = {k for k in prompt_lines if len(k) >= COPY_MIN}
    for start, _end in spans:
        line_start = _line_start(text, where[start])
        if cut is not None and line_start >= cut:
            break
        line_key = _key(_line_at(text, line_start))[0]
        repeated = any(line_key.startswith(k[: COPY_MIN * 2]) for k in asked if not _single_option(k, option_keys))
        if repeated and _answered_before(text, line_start, where, spans, option_keys):
            return line_start, False  # this prompt's instruction or question written again
    return cut, first


def _new_options_after(text: str, point: int, option_keys: Sequence[str]) -> bool:
    lines = [entry for entry in _option_lines(text, option_keys) if entry[0] > point]
    return len(lines) >= 2 and lines[0][1] == 0 and lines[1][1] == 1 and not (lines[0][2] or lines[1][2])


def own_answer(
    text: str,
    query: str,
    *,
    options: Sequence[str] = (),
    document: str | None = None,
    several: bool = False,
) -> OwnAnswer:
    """The model's own answer part of ``text`` (rules in the module docstring).

    ``text`` is the cleaned output with LaTeX made plain; ``query`` the prompt; ``options`` the
    question's option texts in order (the choices, or the texts the query lists under its
    letters); ``document`` the context of a task whose answers are spans of it; ``several``:
    the question takes several options (a multiple choice), so that writing back some of its
    options selects them and only writing back all of them is a copy.
    """
    if not text.strip() or not query.strip():
        return OwnAnswer(text)
    option_keys = _option_keys(options)
    prompt_key = _prompt_key(query, document)
    prompt_lines = [k for k in (_key(line)[0] for line in strip_latex(clean_prediction(query)).split("\n")) if k]
    key, where = _key(text)
    block = "".join(chr(ord("a") + i) + k for i, k in enumerate(option_keys))
    runs = _by_line(_copied_runs(key, prompt_key), text, where)
    spans = [
        (start, end)
        for n, (start, end) in enumerate(runs)
        if not _single_option(key[start:end], option_keys)
        and not (several and _selection(key, runs, n, block, option_keys))
    ]
    listed = (
        _option_list_spans(key, option_keys)
        + _restated_option_lines(text, where, prompt_key, option_keys)
        + _inline_enumerations(text, where, prompt_key)
    )
    if several:  # some options written back are a selection; all of them are a copy
        listed = [span for span in listed if span[2] >= len(option_keys)]
    listed_spans = [(start, end) for start, end, _count in listed]
    # The question's stem restated right before the option it answers with ("……最重要的并发症
    # 可能是：B. 肺部感染") is the model's answer sentence, not a copy.
    spans = [span for span in spans if not _answers_stem(key, span, option_keys, listed_spans)]
    spans = [_answer_kept(key, span, option_keys) for span in spans]
    spans = [span for span in spans if span[1] > span[0]]
    spans = _merge(spans + listed_spans)
    if option_keys and _invented_options(text, where, spans, prompt_key, option_keys):
        return OwnAnswer("", bool(spans), True, ANOTHER_QUESTION)
    cut_at, invented_first = _continuation(text, where, spans, option_keys, prompt_key, prompt_lines)
    body = text
    kept = spans
    if cut_at is not None:
        body = text[:cut_at]
        kept = [(s, _end_before(where, s, e, cut_at)) for s, e in spans if where[s] < cut_at]
    own = _blank(body, where, kept)
    if _residue(own):
        return OwnAnswer(own, bool(kept), cut_at is not None, None)
    if invented_first:
        failure: str | None = ANOTHER_QUESTION
    elif spans or _ANSWER_HEADS.search(text):
        failure = COPY_OF_PROMPT
    else:
        failure = None
    return OwnAnswer(own, bool(spans), cut_at is not None, failure)


def _end_before(where: list[int], start: int, end: int, limit: int) -> int:
    """The end (exclusive, key index) of the span ``start:end`` cut at text offset ``limit``."""
    stop = start + 1
    while stop < end and where[stop] < limit:
        stop += 1
    return stop

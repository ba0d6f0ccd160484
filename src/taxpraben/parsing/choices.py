"""Classification labels (TaxSCQ, TaxTopic, TaxCrime): which of the choices an output names.

:func:`read_choice` (profile ``taxpraben``; its value is the option's index) works
on the cleaned output with LaTeX made plain, the model's own answer only, and returns the index of
the chosen option or why there is none (the caller's label "missing"). The answer region is the one shared by every
reader (:mod:`taxpraben.parsing.region`):

1. **No correct option.** When the most authoritative statement (or, without one, the last
   line) says that no option is correct (``均不正确``, ``无正确答案``, ``都不对``), the output
   selects nothing: a format failure, not the first choice. Unless a choice itself says so
   (``以上均不正确`` as option D).
2. **JSON answer field.** When the output holds a JSON object with an answer-like key
   (:data:`CHOICE_ANSWER_KEYS`, e.g. ``答案``, ``answer``, ``类别``, ``罪名``), its value is
   read with rules 3 and 4. A value that names nothing falls through to the text.
3. **Final statements, latest first** (``\\boxed{B}``, ``答案：B``, ``应选C``, a
   self-correction ``不对，应为D``): in each, a letter right after the marker (lettered
   choices only: ``B``, ``(B)``, ``选项B``, ``b``), else the first choice named in it that is
   not negated, else a letter named as ``选项X``/``X项`` in it.
4. **A bare answer line**: a line that is nothing but an option letter or a choice
   (``B``, ``**C. 消费税**``, ``增值税``), the latest such line.
5. **Conclusions, latest first** (``综上``, ``因此``, ``所以`` and the task's
   ``answer_markers`` such as ``属于``, ``构成``, ``应认定为``, ``主要涉及``; not after a
   negation such as ``不属于``): read as in 3.
6. **The lead sentence** when it answers first: nothing but an option (``B. 区群/层次谬误。……``),
   an option letter it opens with (``C是正确答案``), or the one option it names right after an
   answer verb (``最重要的并发症可能是感染性心内膜炎``).
7. **The conclusion sentence** (the last): the option it names affirmed (the only one, or the
   first of two); for lettered choices its only standalone letter (not ``A company``, not a
   letter it rules out: ``注意不是B``, ``C项不正确``). A choice named only in negated form
   (``不构成逃税罪。``) is not asserted.

Before all of this, the output is reduced to the model's own answer
(:func:`~taxpraben.parsing.prompt_copy.own_answer`: copies of the prompt blanked, invented
continuations cut). Different options in final answer statements with no self-correction between
them are ambiguous; a statement giving two letters (``答案：C、D``) hedges; a boxed value that is
none of the options is no answer; runs of three or more option lines (the options restated or
analysed one by one) are not read after the final statements.

**Naming a choice** (:mod:`taxpraben.parsing.choice_names`). Every occurrence of every choice is found (case-insensitive for Latin,
thousands separators ignored so ``60,000元`` names ``60000元``), longest first: an
occurrence inside a longer accepted one is dropped, so ``企业所得税`` does not also count as
``所得税``. A charge may be named without its ``罪`` suffix (``骗取出口退税`` names
``骗取出口退税罪``) when that does not make it ambiguous. An occurrence right after a
negation (``不属于``, ``不是``, ``并非``, ``不涉及``, ``排除``, ``不构成``, ...) is negated.
Letters count only outside Latin words (``VAT``, ``Answer`` hold no options).

**Repeated option texts.** When two options have the same text, the letter decides; a text
that names a repeated option gives its first position.

:func:`extract_choice` returns ``choices[index]`` for callers that want the label.
TaxBen's rule (profile ``taxben``) lives in :mod:`taxpraben.parsing.taxben`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from taxpraben.parsing._jsonish import (
    OPTION_ANSWER_KEYS,
)
from taxpraben.parsing.choice_hedges import (
    NEGATED_LETTER,
    Hedge,
    hedged,
    letter_index,
    without_negated_letters,
)
from taxpraben.parsing.choice_names import named_choices, naming_form
from taxpraben.parsing.clean import fold_characters
from taxpraben.parsing.numbers import NumberMatch, find_numbers, numbers_equal, parse_number
from taxpraben.parsing.region import (
    SUPPOSITION,
    corrected_part,
)

__all__ = ["CHOICE_ANSWER_KEYS"]

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
_STATEMENT_LETTER = re.compile(
    r"^[\s:：*#>】\]]*(?:是|为|应为|应该是|应是|应选|选|选择)?[\s:：*]*(?:选项|option\s*)?\s*"
    + _OPEN
    + r"\s*([A-Za-z])(?![A-Za-z])"
)
_LEADING_LETTER = re.compile(r"^[\s*#>\]】]*" + _OPEN + r"\s*([A-Z])(?:[.)）\]】、:：。,，\s*]|$)")
_WEAK_LETTER = re.compile(r"选项\s*([A-Z])(?![A-Za-z])|(?<![A-Za-z])([A-Z])\s*项")
#: A letter said to be right ("C正确", "C项是正确的", "C对"), read where the negated ones are gone.
_AFFIRMED_LETTER = re.compile(r"(?<![A-Za-z0-9])([A-Z])\s*(?:项|选项)?\s*(?:是|为)?\s*(?:正确|对|当选|符合题意)")
# Not before a Chinese character either: "A股" (A-shares) is a word, not an option.
_STANDALONE_LETTER = re.compile(r"(?<![A-Za-z0-9])([A-Z])(?![A-Za-z0-9\u4e00-\u9fff])(?!\s+[a-z])")
_NONE_CORRECT = re.compile(
    r"(?:以上|四个|所有|各|全部)?(?:选项|答案)?(?:均|都|全)(?:不正确|错误|不对|不符合)|"
    r"无正确(?:答案|选项)|没有(?:一个)?正确(?:的)?(?:答案|选项)|都不是正确"
)
#: Room for Markdown, a letter and punctuation around a choice on a bare answer line.
_BARE_SLACK = 24
_LONE_LOWER = re.compile(r"^[\s*#>(（\[【\]】]*([a-z])[)）\]】.。]?\s*$")
#: A lower-case letter picked with 选 ("选 c", "选b。"): the option, where a word cannot be.
_PICKED_LOWER = re.compile(r"^[\s*#>]*(?:本题)?(?:应选|选择|选)\s*([a-h])(?![a-z])")
_BARE_LINE = re.compile(r"^[\s*#>_`\"'“”‘’【】\[\]()（）.。:：、,，!！]*$")


def _only_letter(pattern: re.Pattern[str], text: str, count: int) -> int | None:
    """The option named by ``pattern``'s letters in ``text`` when they all name the same one."""
    found = {
        index
        for m in pattern.finditer(text)
        if (index := letter_index(m.group(m.lastindex or 1), count)) is not None
    }
    return found.pop() if len(found) == 1 else None


#: How far into a statement the option it gives may be named when it names others too.
_LEAD_ROOM = 8


def _asserted_choice(named: Sequence[tuple[int, int, int, bool]], room: int = _LEAD_ROOM) -> int | None:
    """The option a piece of text asserts by naming it: the first one it names affirmed, when
    it is the only option named affirmed or it comes first (within ``room`` characters); a
    paragraph that discusses several options asserts none of them."""
    affirmed = [(start, index) for start, _end, index, negated in named if not negated]
    if not affirmed:
        return None
    distinct = len({index for _, index in affirmed})
    if distinct == 1 or (distinct <= _AT_MOST and affirmed[0][0] <= room):
        return affirmed[0][1]
    return None


#: A sentence that names more options than this (affirmed) goes through them: it asserts none.
_AT_MOST = 2


def _first_affirmed(text: str, needles: Sequence[tuple[str, int]]) -> int | None:
    return _asserted_choice(named_choices(text, needles))


@lru_cache(maxsize=256)
def _choice_amounts(choices: tuple[str, ...]) -> tuple[NumberMatch, ...] | None:
    """Each choice as one amount or rate, or None unless every choice is one."""
    values = tuple(v for c in choices if (v := parse_number(c)) is not None)
    return values if len(values) == len(choices) else None


def _numeric_choice(body: str, choices: Sequence[str]) -> int | None:
    """The one choice whose amount a number of ``body`` equals (``6万元`` = ``60000元``,
    ``0.05%`` = ``万分之五``), when every choice is an amount; None when none or several."""
    values = _choice_amounts(tuple(str(c) for c in choices))
    if values is None:
        return None
    hits = {
        i
        for number in find_numbers(body)[:20]
        for i, value in enumerate(values)
        if value is not None
        and value.is_percent == number.is_percent
        and numbers_equal(number, value, 6, False)
    }
    return hits.pop() if len(hits) == 1 else None


def _read_statement(
    body: str,
    count: int,
    lettered: bool,
    needles: Sequence[tuple[str, int]],
    choices: Sequence[str],
    *,
    correction: bool = False,
) -> int | None:
    """The option a statement gives: its leading letter, a choice it names, an amount equal
    to a choice, a 选项X. Raises _Hedge when it offers two."""
    if correction:
        corrected = corrected_part(body)
        if corrected is None:
            return None
        body = corrected
    named = named_choices(body, needles)
    if hedged(body, named, lettered):
        raise Hedge
    if lettered:
        m = _STATEMENT_LETTER.match(body)
        if m and (m.group(1).isupper() or not re.match(r"[a-z]{2}", body[m.start(1) :])):
            index = letter_index(m.group(1), count)
            if index is not None:
                return index
    asserted = _asserted_choice(named)
    if asserted is not None:
        return asserted
    numeric = _numeric_choice(body, choices)
    if numeric is not None:
        return numeric
    return _only_letter(_WEAK_LETTER, without_negated_letters(body), count) if lettered else None


def _bare_line(line: str, count: int, lettered: bool, needles: Sequence[tuple[str, int]]) -> int | None:
    """A line that is nothing but an option letter and/or a choice."""
    named = named_choices(line, needles)
    rest = naming_form(line)
    for start, end, _index, _negated in reversed(named):
        rest = rest[:start] + rest[end:]
    if lettered:
        m = _LEADING_LETTER.match(rest.upper()) or _LONE_LOWER.match(rest) or _PICKED_LOWER.match(rest)
        if m and _BARE_LINE.match(rest[m.end() :]):
            index = letter_index(m.group(1), count)
            if index is not None:
                return index
    if len(named) == 1 and not named[0][3] and _BARE_LINE.match(rest):
        return named[0][2]
    return None


def _says_none_correct(text: str, choices: Sequence[str]) -> bool:
    """The decisive statement says no option is correct (and names none itself): "以上均不正确",
    not "A、B都不对" (those two are wrong, the others not said to be)."""
    m = _NONE_CORRECT.search(text)
    if not m or m.start() > 12:
        return False
    if any(_NONE_CORRECT.search(fold_characters(str(c))) for c in choices):
        return False
    if re.match(r"以上|四个|所有|各|全部|选项|答案|无|没有|都不是", m.group()):  # says it of them all
        return True
    subject = re.split(r"[，,。；;！!？?\n]", text[: m.start()])[-1]
    letters = {c for c in re.findall(r"(?<![A-Za-z])[A-Z](?![A-Za-z])", subject)}
    return not letters or len(letters) >= len(choices)


#: A sentence that is nothing but option letters ("A, B, C, D", "C,D", "B D", "(A)、(C)").
_LETTERS_ONLY = re.compile(
    r"^[\s*#>\]】]*[(（【\[]?([A-Z])[)）】\]]?(?:\s*[,，、/;；\s]\s*[(（【\[]?[A-Z][)）】\]]?)+\s*[。.;；!！]?\s*$"
)


def _several_letters(sentence: str, count: int) -> bool:
    """The lead sentence gives several different option letters for a question of one
    answer ("A, B, C, D", "C,D"): several answers, not the first of them."""
    line = sentence.strip().split("\n", 1)[0]
    if not _LETTERS_ONLY.match(line):
        return False
    letters = {c for c in re.findall(r"[A-Z]", line)}
    return len(letters) >= 2 and all(letter_index(c, count) is not None for c in letters)


#: A lead sentence gives an option it names right after an answer verb ("可能是X", "为X").
_ANSWER_VERB = re.compile(r"(?:是|为|属于|涉及|即|选|应为|可能是|可能为)\s*[:：]?\s*(?:从)?\s*(?:[a-z]\s*[.．、:：)）]?)?\s*$")
_LETTER_FIRST = re.compile(
    r"^[\s*#>\]】]*(?:选项|应选|选择|选)?\s*[(（【\[]?\s*([A-Z])(?=\s*(?:是|为|项|选项|正确|对|[.．、:：)）\]】,，。!！(（【])|\s|$)"
)
_CLAUSE = re.compile(r"[，,；;。：:！!？?\n]")
_BRACKETED = re.compile(r"[（(【\[][^（）()【】\[\]]*[）)】\]]")


def _lead_answer(sentence: str, count: int, lettered: bool, needles: Sequence[tuple[str, int]]) -> int | None:
    """The option the lead sentence of an output gives, when it gives one: nothing but the
    option (``B. 区群/层次谬误``), an option letter it opens with (``C是正确答案``, ``选项A：……``),
    or the one option it names, right after an answer verb (``可能是感染性心内膜炎``). A story
    or an analysis that merely mentions an option asserts nothing."""
    if not sentence.strip():
        return None
    bare = _bare_line(sentence, count, lettered, needles)
    if bare is not None:
        return bare
    # The answer alone in the first clause, then why ("B（15%）。C项20%是……", "增值税，……"):
    # brackets after it are its gloss.
    clause = _CLAUSE.split(_BRACKETED.sub("", sentence), maxsplit=1)[0]
    if clause.strip() and clause != sentence:
        bare = _bare_line(clause, count, lettered, needles)
        if bare is not None:
            return bare
    named = named_choices(sentence, needles)
    if lettered:
        m = _LETTER_FIRST.match(sentence)
        ruled_out = m is not None and any(n.start() <= m.start(1) < n.end() for n in NEGATED_LETTER.finditer(sentence))
        if m is not None and not ruled_out and not re.match(r"\s+[a-z]", sentence[m.end() :]):
            index = letter_index(m.group(1), count)
            # a letter and a comma close its clause: what follows is about the others
            # ("选A，B项买卖合同适用万分之三")
            own = [] if re.match(r"\s*[，,]", sentence[m.end(1) :]) else named
            others = {i for _s, _e, i, negated in own if not negated}
            if index is not None and others <= {index}:
                return index
    affirmed = {i for _s, _e, i, negated in named if not negated}
    if len(affirmed) == 1:
        start = next(s for s, _e, _i, negated in named if not negated)
        if _ANSWER_VERB.search(naming_form(sentence)[:start]):
            return affirmed.pop()
    return None


_SEMICOLON = re.compile(r"[；;]")
_SENTENCE = re.compile(r"[。！!？?\n]")
#: A supposition before a conclusion word in its sentence ("若其后虚开使用，则可能构成……"):
#: what would follow in another case, not the answer.
_SUPPOSITION = re.compile(SUPPOSITION)


_NUMBERED = re.compile(r"^\s*(?:\d{1,2}|[一二三四五])\s*[.、)）:：]\s*(.+)$", re.MULTILINE)


def _answers_listed(text: str, count: int, lettered: bool, needles: Sequence[tuple[str, int]]) -> bool:
    """``text`` gives a numbered list of two or more different options as its answer ("罪名：
    \n1. 虚开增值税专用发票罪\n2. 骗取出口退税罪"): the list opens the text or follows a heading
    that ends with a colon, and every item is nothing but an option."""
    for m in _NUMBERED_BLOCK.finditer(text):
        before = text[: m.start()].rstrip()
        if before and not before.endswith((":", "：")):
            continue
        picks = [_bare_line(item.group(1), count, lettered, needles) for item in _NUMBERED.finditer(m.group(0))]
        if len(picks) > 1 and None not in picks and len(set(picks)) > 1:
            return True
    return False


_NUMBERED_BLOCK = re.compile(r"(?:^[ \t]*(?:\d{1,2}|[一二三四五])[ \t]*[.、)）:：][^\n]+(?:\n|$)){2,}", re.MULTILINE)


def _first_sentence(text: str) -> str:
    return _SENTENCE.split(text, maxsplit=1)[0]


def _supposed(text: str, at: int) -> bool:
    """The conclusion marker at ``at`` stands in a sentence that supposes another case."""
    ends = [m.end() for m in _SENTENCE.finditer(text, 0, at)]
    return bool(_SUPPOSITION.search(text, ends[-1] if ends else 0, at))
_BOLD = re.compile(r"\*\*([^*\n]{1,60})\*\*")


def _bold_answer(
    text: str, count: int, lettered: bool, needles: Sequence[tuple[str, int]]
) -> tuple[int, str] | None:
    """The last bold span that is nothing but an answer (``最大值是 **2**``, ``**C**``), and
    the span as written."""
    for m in reversed(list(_BOLD.finditer(text))):
        picked = _bare_line(m.group(1), count, lettered, needles)
        if picked is not None:
            return picked, m.group(0)
    return None


_LISTED_LINE = re.compile(r"^[\s*#>\-]*[(（【\[]?([A-H])[)）】\]]?\s*[.．、:：)）]", re.MULTILINE)


def _without_option_list(text: str) -> str:
    """``text`` without runs of three or more option lines of different letters (the options
    restated or analysed one by one, in any order: none of them is an answer)."""
    lines = [line for line in text.split("\n") if line.strip()]
    letters = [m.group(1) if (m := _LISTED_LINE.match(line)) else None for line in lines]
    drop = [False] * len(lines)
    i = 0
    while i < len(lines):
        j = i
        while letters[i] and j + 1 < len(lines) and letters[j + 1] and letters[j + 1] not in letters[i : j + 1]:
            j += 1
        if letters[i] and j - i + 1 >= 3:
            drop[i : j + 1] = [True] * (j - i + 1)
        i = j + 1
    return "\n".join(line for line, dropped in zip(lines, drop, strict=True) if not dropped)



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
3. **Final statements, latest first** (``\boxed{B}``, ``答案：B``, ``应选C``, a
   self-correction ``不对，应为D``): in each, a letter right after the marker (lettered
   choices only: ``B``, ``(B)``, ``选项B``, ``b``; where the question numbers its options
   ``1.`` … ``n.``, the option's number: ``<ANSWER>2</ANSWER>``), else the first choice named in it that is
   not negated, else a letter named as ``选项X``/``X项`` in it.
4. **A bare answer line**: a line that is nothing but an option letter (or number, where the
   question numbers its options) or a choice (``B``, ``**C. 消费税**``, ``增值税``), the latest such line.
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

**Repeated option texts.** When two options have the same text, the letter decides; a text naming one gives its first.

:func:`extract_choice` returns ``choices[index]``; TaxBen's rule is in :mod:`taxpraben.parsing.readers.taxben`.

**The rules.** Each step above is a rule declared here, beside its attempt over one
:class:`LabelView` of the output (the rules several kinds share are declared in
:mod:`taxpraben.parsing.readers.shared`, their label attempts here); the ``label`` chain
(:data:`LABEL_CHAIN`) runs them in order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property, wraps
from typing import Required, TypedDict, Unpack

from taxpraben.parsing.chain import Chain, chain_for
from taxpraben.parsing.choice_hedges import (
    NEGATED_LETTER,
    Hedge,
    hedged,
    letter_index,
    lists_options,
    offered_with_another,
    says_none_correct,
    without_negated_letters,
)
from taxpraben.parsing.choice_names import (
    choice_needles,
    named_choices,
    naming_form,
    numeric_choice,
    option_written_otherwise,
)
from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.closing import DECLINES_NUMBER
from taxpraben.parsing.jsonish import OPTION_ANSWER_KEYS, answer_text, answer_value, own_json_values
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.prompt_copy import COPY_OF_PROMPT, OwnAnswer, comparison_key, own_answer
from taxpraben.parsing.readers.letters import with_upper_letters
from taxpraben.parsing.readers.shared import (
    ANOTHER_QUESTION_RULE,
    ANSWER_STATEMENT_RULE,
    BOXED_RULE,
    CONCLUSION_RULE,
    COPY_OF_PROMPT_RULE,
    FINAL_RULES,
    HEDGE_RULE,
    JSON_ANSWER_RULE,
    NO_ANSWER_RULE,
    NONE_CORRECT_RULE,
    NOT_AN_OPTION_RULE,
    SELF_CORRECTION_RULE,
    SEVERAL_ANSWERS_RULE,
)
from taxpraben.parsing.region import (
    AMBIGUOUS,
    HEDGED,
    NO_ANSWER,
    NONE_CORRECT,
    NOT_AN_OPTION,
    NOT_ASSERTED,
    Reading,
    Statement,
    answer_statements,
    conclusion_sentence,
    corrected_part,
    lead_sentence,
    settle_final,
    supposed,
    veto_of,
)
from taxpraben.parsing.registry import Example, register_rule
from taxpraben.parsing.yes_no import claim_restated, says_only_yes_or_no, yes_no_options, yes_or_no

__all__ = ["CHOICE_ANSWER_KEYS", "LABEL_CHAIN", "ChoiceOptions", "LabelView", "extract_choice", "label_chain", "read_choice"]


#: JSON keys holding a classification answer, in priority order.
CHOICE_ANSWER_KEYS: tuple[str, ...] = (
    *OPTION_ANSWER_KEYS, "结论", "类别", "分类", "类型", "主题", "税种", "罪名", "label", "category", "choice", "结果", "result",
)

_OPEN = r"[(（\[【]?"
_STATEMENT_LETTER = re.compile(
    r"^[\s:：*#>】\]]*(?:是|为|应为|应该是|应是|应选|选|选择)?[\s:：*]*(?:选项|option\s*|(?i:(?:the|a|la|el|o)\s+)?(?i:letter|letra|lettre|opción|opção|alternativa)\s+)?\s*"
    + _OPEN
    + r"\s*([A-Za-z])(?![A-Za-z])"
)
#: An option's number right after an answer marker, where the question numbers its options
#: (``<ANSWER>2</ANSWER>``, ``The answer is 3.``, ``答案：(2)``, ``option 4``): not a value
#: (``2.5``, ``2%``, ``2,000``) nor the start of a sum (``2 + 3``).
_STATEMENT_NUMBER = re.compile(
    r"^[\s:：*#>】\]]*(?:是|为|应为|应选|选|选择)?[\s:：*]*(?:选项|第|(?i:(?:la|el|a|o)\s+)?(?i:(?:option|opción|opção|number|número|numero|no\.?|choice|alternativa)\s*){0,2})?\s*"
    + _OPEN
    + r"\s*(\d{1,2})(?![\d.,:：%/+*×x-]\d|\d|\s*[%+*/×÷=-]|\s*(?:元|万|个|岁|年))"
)
#: A line that is nothing but an option's number (``2``, ``(3)``, ``**4.**``, ``Option 1``).
_BARE_NUMBER = re.compile(
    r"^[\s*#>_`\"'“”‘’【\[(（:：]*(?:选项|第|(?i:option|number|choice)\s*)?\s*(\d{1,2})\s*(?:项|个)?[)）\]】.。:：]?"
    r"[\s*_`\"'“”‘’】\])）.。]*$"
)
_LEADING_LETTER = re.compile(r"^[\s*#>\]】:：]*" + _OPEN + r"\s*([A-Z])(?:[.)）\]】、:：。,，\s*]|$)")
_WEAK_LETTER = re.compile(r"选项\s*([A-Z])(?![A-Za-z])|(?<![A-Za-z])([A-Z])\s*项")
#: A letter said to be right ("C正确", "C项是正确的", "C对"), read where the negated ones are gone.
_AFFIRMED_LETTER = re.compile(r"(?<![A-Za-z0-9])([A-Z])\s*(?:项|选项)?\s*(?:是|为)?\s*(?:正确|对|当选|符合题意)")
# Not before a Chinese character either: "A股" (A-shares) is a word, not an option.
# Nor a letter that names a figure's part ("angle A", "point B", "∠C"): a name, not an option.
_STANDALONE_LETTER = re.compile(
    r"(?<![A-Za-z0-9∠△⊙])(?<!(?i:angle|point|plane) )(?<!(?i:vertex|circle) )(?<!(?i:side|line) )(?<!(?i:triangle) )"
    r"([A-Z])(?![A-Za-z0-9\u4e00-\u9fff])(?!\s+[a-z])"
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


def _read_statement(
    body: str,
    count: int,
    lettered: bool,
    needles: Sequence[tuple[str, int]],
    choices: Sequence[str],
    *,
    correction: bool = False,
    numbered: bool = False,
) -> int | None:
    """The option a statement gives: its leading letter (its number, where the question
    numbers its options), a choice it names, an amount equal to a choice, a 选项X. Raises
    _Hedge when it offers two."""
    if correction:
        corrected = corrected_part(body)
        if corrected is None:
            return None
        body = corrected
    named = named_choices(body, needles)
    if hedged(body, named, lettered, count):
        raise Hedge
    if lettered:
        m = _STATEMENT_LETTER.match(body)
        if m and (m.group(1).isupper() or not re.match(r"[a-z]{2}", body[m.start(1) :])):
            index = letter_index(m.group(1), count)
            if index is not None:
                return index
    if numbered and (n := _STATEMENT_NUMBER.match(body)) and 1 <= int(n.group(1)) <= count:
        return int(n.group(1)) - 1
    asserted = _asserted_choice(named)
    if asserted is not None:
        return asserted
    numeric = numeric_choice(body, choices)
    if numeric is not None:
        return numeric
    return _only_letter(_WEAK_LETTER, without_negated_letters(body), count) if lettered else None


#: An option's number opening a line: "(5) ", "5. ".
_LEADING_NUMBER = re.compile(r"^[\s*#>_`:：]*[(（]?(\d{1,2})[)）.、:：]\s*")
#: The least of an option's text (characters, in naming form) that says which option a label
#: followed by it names, when the length limit cut the rest.
_TEXT_START = 12


def _starts_its_text(after: str, index: int, needles: Sequence[tuple[str, int]]) -> bool:
    """What follows an option's label is the start of that option's own text, cut off
    ("⑤ Drugs with high dosages that" for "⑤ Drugs with high dosages that may result in …"):
    the label and the text agree."""
    start = after.strip(" .。:：*_`")
    return len(start) >= _TEXT_START and any(i == index and needle.startswith(start) for needle, i in needles)


def _bare_line(
    line: str, count: int, lettered: bool, needles: Sequence[tuple[str, int]], numbered: bool = False
) -> int | None:
    """A line that is nothing but an option letter (or its number, where the question numbers
    its options) and/or a choice."""
    named = named_choices(line, needles)
    rest = naming_form(line)
    for start, end, _index, _negated in reversed(named):
        rest = rest[:start] + rest[end:]
    if lettered:
        m = _LEADING_LETTER.match(rest.upper()) or _LONE_LOWER.match(rest) or _PICKED_LOWER.match(rest)
        if m:
            index = letter_index(m.group(1), count)
            if index is not None and (_BARE_LINE.match(rest[m.end() :]) or _starts_its_text(rest[m.end() :], index, needles)):
                return index
    if numbered and (n := _BARE_NUMBER.match(rest)) and 1 <= int(n.group(1)) <= count:
        return int(n.group(1)) - 1
    if numbered and (n := _LEADING_NUMBER.match(rest)) and 1 <= int(n.group(1)) <= count \
            and _starts_its_text(rest[n.end() :], int(n.group(1)) - 1, needles):
        return int(n.group(1)) - 1
    if len(named) == 1 and not named[0][3] and _BARE_LINE.match(rest):
        return named[0][2]
    return None


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
_ANSWER_VERB = re.compile(  # also "… is classified as NEUTRAL", "The FOMC's stance is DOVISH", "labelled 'positive'"
    r"(?:(?:是|为|属于|涉及|即|选|应为|可能是|可能为)\s*[:：]?\s*(?:从)?\s*(?:[a-z]\s*[.．、:：)）]?)?|(?<![a-z])(?:(?:is|are|was|were|be)\s+"
    r"(?:(?:most\s+)?(?:likely|probably|clearly)\s+)?(?:(?:classified|labell?ed|categori[sz]ed|rated|considered)\s+as\s+)?"
    r"|(?:classified|labell?ed|categori[sz]ed)\s+as\s+))[\s\"'“‘*]*$")
_LETTER_FIRST = re.compile(
    r"^[\s*#>\]】]*(?:选项|应选|选择|选)?\s*[(（【\[]?\s*([A-Z])(?=\s*(?:是|为|项|选项|正确|对|[.．、:：)）\]】,，。!！(（【])|\s|$)"
)
_CLAUSE = re.compile(r"[，,；;。：:！!？?\n]|\s[-–—]\s")  # "DOVISH - The sentence suggests …"
_BRACKETED = re.compile(r"[（(【\[][^（）()【】\[\]]*[）)】\]]")


def _lead_answer(
    sentence: str, count: int, lettered: bool, needles: Sequence[tuple[str, int]], numbered: bool = False
) -> int | None:
    """The option the lead sentence of an output gives, when it gives one: nothing but the
    option (``B. 区群/层次谬误``), an option letter it opens with (``C是正确答案``, ``选项A：……``),
    or the one option it names, right after an answer verb (``可能是感染性心内膜炎``). A story
    or an analysis that merely mentions an option asserts nothing."""
    if not sentence.strip() or lists_options(sentence, needles):  # "NEGATIVE, NEUTRAL, POSITIVE": no answer
        return None
    bare = _bare_line(sentence, count, lettered, needles, numbered)
    if bare is not None:
        return bare
    # The answer alone in the first clause, then why ("B（15%）。C项20%是……", "增值税，……"):
    # brackets after it are its gloss.
    clause = _CLAUSE.split(_BRACKETED.sub("", sentence), maxsplit=1)[0]
    if clause.strip() and clause != sentence:
        bare = _bare_line(clause, count, lettered, needles, numbered)
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


_BOLD = re.compile(r"\*\*([^*\n]{1,60})\*\*")


def _bold_answer(
    text: str, count: int, lettered: bool, needles: Sequence[tuple[str, int]], numbered: bool = False
) -> tuple[int, str] | None:
    """The last bold span that is nothing but an answer (``最大值是 **2**``, ``**C**``), and
    the span as written. Bold options that head their own analysis (``**A**: suggests …``,
    ``5. **室间隔缺损**：通常会……``), two different ones or more, are headings, not answers."""
    found = [(m, picked) for m in _BOLD.finditer(text)
             if (picked := _bare_line(m.group(1), count, lettered, needles, numbered)) is not None]
    headings = [(m, picked) for m, picked in found if _HEADS_ANALYSIS.match(text, m.end())]
    if len({picked for _m, picked in headings}) > 1:
        found = [pair for pair in found if pair not in headings]
    return (found[-1][1], found[-1][0].group(0)) if found else None


#: What follows a bold option that heads its own analysis: a colon and words on the same line.
_HEADS_ANALYSIS = re.compile(r"[ \t]*[:：][ \t]*\S")


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


# ---------------------------------------------------------------- the rules


_HEDGE = Reading(None, HEDGED, rule=HEDGE_RULE.name)
_NO_ANSWER = Reading(None, NO_ANSWER, rule=NO_ANSWER_RULE.name)


#: An option letter and its text on one line ("B. Oleh itu", "(C) 9%").
_LETTER_AND_TEXT = re.compile(r"^[ \t*]*[(（]?[A-J][)）.．、:：][ \t]*(\S[^\n]*?)[ \t*]*$", re.MULTILINE)


class LabelView:
    """One output as the label rules read it, built once: cleaned with LaTeX made plain,
    its own answer, and (on first use) its statements, lines, the options it names."""

    def __init__(
        self,
        text: str,
        choices: Sequence[str],
        lettered: bool,
        markers: Sequence[str],
        query: str,
        aliases: Mapping[str, Sequence[str]] | None,
        names: Sequence[str] | None,
        raw: str | None = None,
        numbered: bool = False,
    ) -> None:
        #: The raw output (TaxBen's rules read it) and the choices as the record has them.
        self.raw = text if raw is None else raw
        self.choices = choices
        self.count = len(choices)
        self.texts = list(names) if names is not None and len(names) == self.count else list(choices)
        self.lettered = lettered
        #: The question numbers its options (``1. …``): an option may be given by its number.
        self.numbered = numbered
        self.markers = markers
        self.query = query
        self.aliases = aliases
        # options labelled "a: …" are answered in lower case ("b"): their letters, as A, B, …
        full = strip_latex(clean_prediction(text))
        self.full = with_upper_letters(full, query) if lettered else full
        self.own: OwnAnswer = own_answer(self.full, query, options=self.texts)
        self.cleaned = self.own.text
        #: Nothing to read: no own answer, or no options.
        self.empty = not self.cleaned.strip() or not choices
        #: The options given by the final statements read so far (latest first).
        self.answered: list[int] = []

    @cached_property
    def needles(self) -> list[tuple[str, int]]:
        return _needles(tuple(self.texts), self.aliases)

    def read(self, body: str, correction: bool = False) -> int | None:
        """The option a statement gives (raises Hedge when it offers two)."""
        picked = _read_statement(body, self.count, self.lettered, self.needles, self.texts, correction=correction,
                                 numbered=self.numbered)
        if picked is not None and offered_with_another(
            _first_sentence(body), picked, self.count, self.lettered, self.needles
        ):
            raise Hedge  # "同时构成骗取出口退税罪和虚开增值税专用发票罪"
        return picked

    @cached_property
    def final(self) -> list[Statement]:
        return [st for st in answer_statements(self.cleaned, self.markers, self.query) if st.kind != "conclusion"]

    @cached_property
    def demonstrated(self) -> frozenset[str]:
        """The keys of the options the prompt lists for its demonstrations, none of this question's."""
        own = {comparison_key(text) for text in self.texts}
        return frozenset(k for m in _LETTER_AND_TEXT.finditer(self.query) if (k := comparison_key(m.group(1))) and k not in own)

    @cached_property
    def settled(self) -> Reading | None:
        """What the final statements give (region.settle_final), the hedge of one, or None."""

        def read_final(st: Statement) -> int | None:
            # Latest first: a hedge ("因此选AB") that a later statement has answered ("答案：A")
            # is superseded by it; the latest answer statement hedging leaves the answer hedged.
            named = _LETTER_AND_TEXT.match(st.text)
            if named and comparison_key(named.group(1)) in self.demonstrated:
                return None  # "Jawapan: B. Oleh itu", an option of a demonstration: it answers that one
            try:
                picked = self.read(st.text, st.kind == "correction")
            except Hedge:
                if self.answered:
                    return None
                raise
            if picked is not None:
                self.answered.append(picked)
            return picked

        try:
            settled = settle_final(self.final, read_final, FINAL_RULES)
        except Hedge:
            return _HEDGE
        return None if settled is None else settled[0]

    @cached_property
    def listless(self) -> str:
        """The own answer without runs of option lines (the options restated one by one)."""
        return _without_option_list(self.cleaned)

    @cached_property
    def lines(self) -> list[str]:
        return [line for line in self.listless.split("\n") if line.strip()]

    @cached_property
    def longest(self) -> int:
        return max(len(needle) for needle, _ in self.needles) if self.needles else 0

    def bare(self, line: str) -> int | None:
        return _bare_line(line, self.count, self.lettered, self.needles, self.numbered)

    @cached_property
    def lead_text(self) -> str:
        return lead_sentence(self.listless)

    @cached_property
    def last(self) -> str:  # a yes or no to options that are no yes/no pair names none (yes_no.py)
        return conclusion_sentence(self.listless, None if yes_no_options(self.texts) else says_only_yes_or_no)

    def offered(self, sentence: str, picked: int) -> bool:
        return offered_with_another(sentence, picked, self.count, self.lettered, self.needles)


#: The needles of each record's options, kept across outputs (a task's records repeat the same
#: options and aliases; the aliases are the spec's own mapping, kept with them to be sure).
_NEEDLES: dict[tuple[tuple[str, ...], int], tuple[Mapping[str, Sequence[str]] | None, list[tuple[str, int]]]] = {}
_MAX_NEEDLES = 4096


def _needles(texts: tuple[str, ...], aliases: Mapping[str, Sequence[str]] | None) -> list[tuple[str, int]]:
    key = (texts, id(aliases))
    kept = _NEEDLES.get(key)
    if kept is not None and kept[0] is aliases:
        return kept[1]
    needles = choice_needles(texts, aliases)
    if len(_NEEDLES) >= _MAX_NEEDLES:
        _NEEDLES.clear()
    _NEEDLES[key] = (aliases, needles)
    return needles


LabelAttempt = Callable[[LabelView], Reading | None]


def _on_text(attempt: LabelAttempt) -> LabelAttempt:
    """An attempt that reads the own answer: it does not apply when there is none, and a
    hedge met while reading is the veto ``veto.hedge``."""

    @wraps(attempt)
    def guarded(view: LabelView) -> Reading | None:
        if view.empty:
            return None
        try:
            return attempt(view)
        except Hedge:
            return _HEDGE

    return guarded


@COPY_OF_PROMPT_RULE.reads("label")
def _copy_of_prompt(view: LabelView) -> Reading | None:
    failure = view.own.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure == COPY_OF_PROMPT else None


@ANOTHER_QUESTION_RULE.reads("label")
def _another_question(view: LabelView) -> Reading | None:
    failure = view.own.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure else None


@JSON_ANSWER_RULE.reads("label")
@_on_text
def _json_answer(view: LabelView) -> Reading | None:
    found, value = answer_value(own_json_values(view.full, view.query), CHOICE_ANSWER_KEYS, view.query)
    if not found:
        return None
    value_text = strip_latex(clean_prediction(answer_text(value, " ", dict_values=True)))
    if not value_text:
        return None
    folded = naming_form(value_text.strip(" .。、:：*"))
    for index, choice in enumerate(view.texts):
        if naming_form(str(choice)) == folded:
            return Reading(index, rule=JSON_ANSWER_RULE.name, source=value_text)
    written = option_written_otherwise(value_text, view.texts)  # "(8x+7)(8x-7)" for "y=(8x+7)(8x-7)", "47.9" for "47.9°"
    if written is not None:
        return Reading(written, rule=JSON_ANSWER_RULE.name, source=value_text)
    picked = view.read(value_text)
    return None if picked is None else Reading(picked, rule=JSON_ANSWER_RULE.name, source=value_text)


@HEDGE_RULE.reads("label")
@_on_text
def _answers_hedged(view: LabelView) -> Reading | None:
    return _HEDGE if _answers_listed(view.cleaned, view.count, view.lettered, view.needles) else None


@NONE_CORRECT_RULE.reads("label")
@_on_text
def _none_correct(view: LabelView) -> Reading | None:
    if view.final:
        decisive = view.final[0].text
    else:
        lines = [line for line in view.cleaned.split("\n") if line.strip()]
        decisive = lines[-1] if lines else ""
    if says_none_correct(decisive, view.texts):
        return Reading(None, NONE_CORRECT, rule=NONE_CORRECT_RULE.name)
    return None


def _settled_by(*rules: str) -> LabelAttempt:
    """The attempt of a final-statement rule: what the final statements settle on, when
    settled by one of ``rules``."""

    @_on_text
    def attempt(view: LabelView) -> Reading | None:
        settled = view.settled
        return settled if settled is not None and settled.rule in rules else None

    return attempt


SELF_CORRECTION_RULE.reads("label")(_settled_by(SELF_CORRECTION_RULE.name))
ANSWER_STATEMENT_RULE.reads("label")(_settled_by(ANSWER_STATEMENT_RULE.name, HEDGE_RULE.name))
BOXED_RULE.reads("label")(_settled_by(BOXED_RULE.name))
SEVERAL_ANSWERS_RULE.reads("label")(_settled_by(SEVERAL_ANSWERS_RULE.name))

YES_OR_NO_RULE = register_rule(
    "choice.yes-or-no", kinds=("label",), tier=2, confidence="high",
    description="Options True/False (正确/错误) answered by yes or no: an answer statement, a box or the first "
                "sentence that opens with Yes/No (是/否, 对/错); else a last sentence that restates the question's claim "
                "(True) or denies it (False).",
    examples=(Example("label", "Both eigenvalues are positive, so A is positive definite.\nThe answer is Yes.", "True",
                      "true-false"),
              Example("label", "No, aliasing does not occur here because the sampling rate exceeds twice the "
                      "highest frequency.", "False", "true-false")),
    leaves_alone=(Example("label", "Not every such matrix is invertible, so the statement is False.", "False", "true-false"),),
)


@YES_OR_NO_RULE.reads("label")
@_on_text
def _yes_no(view: LabelView) -> Reading | None:
    options = yes_no_options(view.texts)
    if options is None:
        return None
    for statement in view.final:  # latest first
        picked = yes_or_no(statement.text, options)
        if picked is not None:
            return Reading(picked, rule=YES_OR_NO_RULE.name, source=statement.full_text)
    picked = yes_or_no(view.lead_text, options)
    if picked is not None:
        return Reading(picked, rule=YES_OR_NO_RULE.name, source=view.lead_text)
    picked = claim_restated(view.query, view.last, options)  # "Therefore, 7 is a quadratic residue modulo 19."
    return None if picked is None else Reading(picked, rule=YES_OR_NO_RULE.name, source=view.last)


@NOT_AN_OPTION_RULE.reads("label")
@_on_text
def _not_an_option(view: LabelView) -> Reading | None:
    if view.settled is None and any(st.kind == "boxed" and st.text.strip() for st in view.final):
        return Reading(None, NOT_AN_OPTION, rule=NOT_AN_OPTION_RULE.name)  # boxed, and none of the options
    return None


WALKED_RULE = register_rule(
    "veto.options-walked", kinds=("label",), tier=3, confidence="high",
    description="Options named in words, every one heading a line of its own ('HAWKISH: …', 'DOVISH: …', 'NEUTRAL: …'), "
                "and no conclusion after the last: each option argued in turn, none chosen.",
    examples=(Example("label", "True: both eigenvalues are positive.\nFalse: aliasing may occur.", None, "true-false"),),
    leaves_alone=(Example("label", "True: both eigenvalues are positive.\nFalse: no.\nSo the answer is True.", "True", "true-false"),),
)
#: A conclusion after the options walked: it may choose one of them.
_CONCLUDES = re.compile(r"(?<![A-Za-z])(?i:so|therefore|thus|hence|overall|in\s+conclusion|answer|classified|labell?ed)(?![A-Za-z])"
                        r"|所以|因此|故|综上|答案|选")
_OPENS_ON_LETTER = re.compile(r"[\s*#>]*[(（【\[]?[A-J](?![A-Za-z])")


@WALKED_RULE.reads("label")
@_on_text
def _walked(view: LabelView) -> Reading | None:
    if view.count < 2:
        return None
    # in words: options analysed one by one under their letters come to a conclusion the later rules read
    heads = [(n, picked) for n, line in enumerate(view.lines) if not _OPENS_ON_LETTER.match(line)
             and len(clause := _CLAUSE.split(line, maxsplit=1)[0]) <= view.longest + _BARE_SLACK
             and (picked := view.bare(clause)) is not None]
    if {picked for _n, picked in heads} != set(range(view.count)) or _CONCLUDES.search("\n".join(view.lines[heads[-1][0] + 1 :])):
        return None
    return Reading(None, NOT_ASSERTED, rule=WALKED_RULE.name)


BARE_ANSWER_RULE = register_rule(
    "choice.bare-answer", kinds=("label",), tier=3, confidence="high",
    description="A line that is nothing but one option (its letter, its text, or both), the latest such line.",
    examples=(Example("label", "C", "信息技术服务"), Example("label", "分析：6%适用于现代服务。\nC. 信息技术服务", "信息技术服务"),
              # a stray dialogue turn ends the answer: what the model writes for it is not read
              Example("label", "C\n### Human: 下一题\nA", "信息技术服务")),
    leaves_alone=(Example("label", "C\nB", None),),
)


#: The end of a line that heads what follows it: a colon, in or out of Markdown emphasis.
_HEADING_END = re.compile(r"[:：][*_`\s]*$")


@BARE_ANSWER_RULE.reads("label")
@_on_text
def _bare_answer(view: LabelView) -> Reading | None:
    lines = view.lines
    if len(lines) > 1 and len(view.listless) <= view.longest + _BARE_SLACK:  # one option over two lines
        picked = view.bare(" ".join(lines))
        if picked is not None:
            return Reading(picked, rule=BARE_ANSWER_RULE.name, source=view.listless)
    # an option heading its analysis ("A. **2-chlorobenzoic acid:**") is a heading, not an answer line
    bare = [view.bare(line) if len(line) <= view.longest + _BARE_SLACK and not _HEADING_END.search(line) else None
            for line in lines]
    if len({b for b in bare if b is not None}) > 1:
        # different options, each alone on its line ("增值税\n消费税", each label of a classification
        # with its reasons under it): several answers
        return Reading(None, AMBIGUOUS, rule=SEVERAL_ANSWERS_RULE.name)
    for line, picked in zip(reversed(lines), reversed(bare), strict=True):  # the latest bare answer line
        if picked is not None:
            return Reading(picked, rule=BARE_ANSWER_RULE.name, source=line)
    return None


BOLD_ANSWER_RULE = register_rule(
    "choice.bold-answer", kinds=("label",), tier=3, confidence="high",
    description="A bold span that is nothing but an option ('**C**').",
    examples=(Example("label", "信息技术服务适用的税率为6%，选项 **C** 符合题意，其余选项税率不同。", "信息技术服务"),),
)


@BOLD_ANSWER_RULE.reads("label")
@_on_text
def _bold(view: LabelView) -> Reading | None:
    bold = _bold_answer(view.listless, view.count, view.lettered, view.needles, view.numbered)
    return None if bold is None else Reading(bold[0], rule=BOLD_ANSWER_RULE.name, source=bold[1])


CONCLUDES_NO_ANSWER_RULE = register_rule(
    "veto.concludes-no-answer", kinds=("label",), tier=5, confidence="high",
    description="No answer statement, and the output's last conclusion says it cannot answer ('Therefore, I can't "
                "solve the problem as it is now'): no option is read from it, nor from the text before it.",
    examples=(Example("label", "The problem does not show the figure. Therefore, I can't solve the problem as it is now.",
                      None),),
    leaves_alone=(Example("label", "I can't see the figure, so I assume a typical layout. Therefore, the answer is (C).",
                          "信息技术服务"),),
)


@CONCLUDES_NO_ANSWER_RULE.reads("label")
@_on_text
def _concludes_no_answer(view: LabelView) -> Reading | None:
    # read on the whole text: the own answer blanks the prompt's words it repeats ("solve the problem")
    if not DECLINES_NUMBER.search(view.full):
        return None  # no sentence declines, so no conclusion does: the statements need not be built
    last = next((st for st in answer_statements(view.full, view.markers) if st.kind == "conclusion"), None)
    if last is not None and DECLINES_NUMBER.search(_SEMICOLON.split(last.text, maxsplit=1)[0]):
        return Reading(None, NOT_ASSERTED, rule=CONCLUDES_NO_ANSWER_RULE.name)
    return None


@CONCLUSION_RULE.reads("label")
@_on_text
def _conclusion(view: LabelView) -> Reading | None:
    for statement in answer_statements(view.listless, view.markers):
        if statement.kind == "conclusion" and not supposed(view.listless, statement.start):
            # a conclusion holds its answer before its first semicolon ("因此X；另外……")
            body = _SEMICOLON.split(statement.text, maxsplit=1)[0]
            picked = view.read(body)
            if picked is not None:
                return Reading(picked, rule=CONCLUSION_RULE.name, source=statement.marker + body)
    return None


SEVERAL_LETTERS_RULE = register_rule(
    "veto.several-letters", kinds=("label",), tier=5, confidence="high",
    description="Several different option letters and nothing else for a question of one answer ('A, B, C, D', "
                "'C,D', 'B,D' then an explanation): several answers, not the first.",
    examples=(Example("label", "A, B, C, D", None), Example("label", "C,D", None),
              Example("label", "B,D\n解析：B项不动产租赁适用9%", None)),
    leaves_alone=(Example("label", "C. 信息技术服务", "信息技术服务"), Example("label", "(C)", "信息技术服务")),
)


@SEVERAL_LETTERS_RULE.reads("label")
@_on_text
def _several_letters_first(view: LabelView) -> Reading | None:
    if view.lettered and _several_letters(view.lead_text, view.count):
        return Reading(None, AMBIGUOUS, rule=SEVERAL_LETTERS_RULE.name)
    return None


def _asserted(view: LabelView, picked: int | None, rule: str, sentence: str) -> Reading | None:
    """``picked`` read by ``rule`` from ``sentence``, unless it offers another option too."""
    if picked is None:
        return None
    if view.offered(sentence, picked):
        return _HEDGE
    return Reading(picked, rule=rule, source=sentence)


LEAD_SENTENCE_RULE = register_rule(
    "choice.lead-sentence", kinds=("label",), tier=5, confidence="high",
    description="The first sentence gives the option before its reasons ('C是正确答案。……').",
    examples=(Example("label", "C项正确。信息技术服务属于现代服务业，适用6%的税率；B项不动产租赁服务适用9%。", "信息技术服务"),),
)


@LEAD_SENTENCE_RULE.reads("label")
@_on_text
def _lead(view: LabelView) -> Reading | None:
    # Asserted without a marker: the lead sentence answers first ("B. 区群/层次谬误。……",
    # "C是正确答案。", "最重要的并发症可能是感染性心内膜炎。……")
    lead = _lead_answer(view.lead_text, view.count, view.lettered, view.needles, view.numbered)
    return _asserted(view, lead, LEAD_SENTENCE_RULE.name, view.lead_text)


NAMED_LAST_RULE = register_rule(
    "choice.named-in-last-sentence", kinds=("label",), tier=6, confidence="low",
    description="No statement: the option the last sentence affirms by its text.",
    examples=(Example("label", "根据现行规定，现代服务适用较低税率。符合题意的是信息技术服务", "信息技术服务"),),
)


@NAMED_LAST_RULE.reads("label")
@_on_text
def _named_last(view: LabelView) -> Reading | None:
    return _asserted(view, _first_affirmed(view.last, view.needles), NAMED_LAST_RULE.name, view.last)


VALUE_LAST_RULE = register_rule(
    "choice.value-in-last-sentence", kinds=("label",), tier=6, confidence="low",
    description="No statement: the last sentence gives the value of one option, written otherwise (numeric options).",
    examples=(Example("label", "征收率减按2.0%", "2%", "label-rates"),),
)


@VALUE_LAST_RULE.reads("label")
@_on_text
def _value_last(view: LabelView) -> Reading | None:
    return _asserted(view, numeric_choice(view.last, view.texts), VALUE_LAST_RULE.name, view.last)


LETTER_LAST_RULE = register_rule(
    "choice.letter-in-last-sentence", kinds=("label",), tier=6, confidence="low",
    description="No statement: the only letter the last sentence affirms.",
    examples=(Example("label", "有形动产租赁适用13%。不动产租赁适用9%。我倾向于C", "信息技术服务"),),
)


@LETTER_LAST_RULE.reads("label")
@_on_text
def _letter_last(view: LabelView) -> Reading | None:
    if not view.lettered:
        return None
    for pattern in (_WEAK_LETTER, _AFFIRMED_LETTER, _STANDALONE_LETTER):
        picked = _only_letter(pattern, without_negated_letters(view.last), view.count)
        if picked is not None:
            return _asserted(view, picked, LETTER_LAST_RULE.name, view.last)
    return None


NOT_ASSERTED_RULE = register_rule(
    "veto.not-asserted", kinds=("label",), tier=7, confidence="high",
    description="Options are discussed, but none is asserted as the answer.",
    examples=(Example("label", "本题考查增值税税率，信息技术服务和建筑服务的税率不同，不能确定", None),),
    decides=NOT_ASSERTED,
)


@NOT_ASSERTED_RULE.reads("label")
@_on_text
def _not_asserted(view: LabelView) -> Reading | None:
    if named_choices(view.listless, view.needles) or (view.lettered and _STANDALONE_LETTER.search(view.listless)):
        return Reading(None, NOT_ASSERTED, rule=NOT_ASSERTED_RULE.name)
    return None


@NO_ANSWER_RULE.reads("label")
def _no_answer(view: LabelView) -> Reading | None:
    return _NO_ANSWER


#: The order in which the label reader tries its rules (the default chain set, ``taxpraben``): its
#: rules' names, each a rule declared in this module or in :mod:`~taxpraben.parsing.readers.shared`.
LABEL_CHAIN: tuple[str, ...] = (
    "veto.copy-of-prompt",
    "veto.another-question",
    "json.answer-field",
    "veto.hedge",
    "veto.none-correct",
    "final.self-correction",
    "final.answer-statement",
    "final.boxed",
    "choice.yes-or-no",
    "veto.several-answers",
    "veto.not-an-option",
    "veto.options-walked",
    "choice.bare-answer",
    "choice.bold-answer",
    "veto.concludes-no-answer",
    "conclusion.statement",
    "veto.several-letters",
    "choice.lead-sentence",
    "choice.named-in-last-sentence",
    "choice.value-in-last-sentence",
    "choice.letter-in-last-sentence",
    "veto.not-asserted",
    "veto.no-answer",
)


def label_chain(names: tuple[str, ...] | None = None) -> Chain[LabelView]:
    """The label chain: ``names`` in order (default: the ``label`` chain of
    :data:`LABEL_CHAIN`), each rule's label attempt."""
    return chain_for("label", LABEL_CHAIN if names is None else names)


def read_choice(
    text: str,
    choices: Sequence[str],
    *,
    option_letters: bool,
    markers: Sequence[str],
    query: str = "",
    aliases: Mapping[str, Sequence[str]] | None = None,
    names: Sequence[str] | None = None,
    chain: tuple[str, ...] | None = None,
    raw: str | None = None,
    option_numbers: bool = False,
) -> Reading:
    """The index of the option an output selects (rules in the module docstring), or why no
    option is read (:class:`~taxpraben.parsing.region.Reading`).

    ``text`` is the raw model output (it is cleaned here); ``choices`` are the labels in
    option order; ``option_letters`` says whether the choices were shown as A, B, C, ...;
    ``markers`` are the task's conclusion phrases (``answer_markers``); ``query`` is the
    question (what the output copies of it is not read); ``aliases`` are other
    names of a choice (keyed by choice text); ``names`` are the texts an output may name
    the options by when they differ from ``choices`` (choices stored as letters, texts in
    the query). A hedge between two options ("B或D") selects none. The reading is the
    execution of the ``label`` chain (``chain``: other rule names, in order;
    :mod:`taxpraben.parsing.readers.label`). ``raw``: the output before any cleaning, when
    ``text`` is not it (TaxBen's rules read it). ``option_numbers``: the question lists its
    options by number (``1. …``, not lettered), so that a statement or a line may give an
    option by its number (``<ANSWER>2</ANSWER>``).
    """
    view = LabelView(text, choices, option_letters, markers, query, aliases, names, raw, option_numbers)
    return label_chain(chain).run(view, _NO_ANSWER)


class ChoiceOptions(TypedDict, total=False):
    """:func:`read_choice`'s keyword arguments that :func:`extract_choice` passes on."""

    option_letters: Required[bool]
    markers: Required[Sequence[str]]
    query: str
    aliases: Mapping[str, Sequence[str]] | None


def extract_choice(text: str, choices: Sequence[str], **options: Unpack[ChoiceOptions]) -> str | None:
    """The choice an output selects (``choices[read_choice(...).value]``), or None."""
    index = read_choice(text, choices, **options).value
    return choices[index] if isinstance(index, int) else None

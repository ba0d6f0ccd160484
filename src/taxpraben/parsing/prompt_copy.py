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
   Not copies either: a tagged answer (``<ANSWER>1</ANSWER>``, the prompt's own example of its
   answer format, filled in), an answer marker the prompt asks for with its copula ("The final
   answer is"), the short answer the prompt gives to one of its own demonstration questions
   ("A: Not in background."), and an output that is one short phrase as a whole ("Kansas City
   Royals") unless it is a whole line of the prompt. The prompt's data written again (its list
   items, ``* Richard is Gloria's parent.``) starts no new turn: only a line that asks or instructs
   does.
3. **Nothing of its own.** When nothing is left but punctuation, Markdown and answer
   headings (``答案：``, ``解析：``), the output is a *copy of the prompt*; when the output
   began with an invented question, it *answers another question*. Either is a format
   failure (:attr:`OwnAnswer.failure`).

The pieces live in :mod:`~taxpraben.parsing.overlap` (the comparison key, copied runs),
:mod:`~taxpraben.parsing.option_lists` (options written back) and
:mod:`~taxpraben.parsing.continuations` (invented questions); this module puts them together.
Pure and total.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from taxpraben.parsing.answer_fields import (
    FIELD_LINE,
    TEMPLATE_FIELD,
    demonstrated_fields,
    names_the_answer,
)
from taxpraben.parsing.continuations import (
    ANSWER_HEADS,
    continuation,
    residue,
    section_labels,
)
from taxpraben.parsing.option_lists import (
    answer_kept,
    answers_stem,
    inline_enumerations,
    invented_options,
    list_cut_off,
    option_keys_of,
    option_list_spans,
    restated_option_lines,
    selection,
)
from taxpraben.parsing.overlap import (
    COPY_MIN,
    blank_spans,
    comparison_key,
    copied_runs,
    end_before,
    gram_share,
    key_only,
    merge_spans,
    plain_prompt,
    prompt_key_of,
    single_option,
    split_at_markup,
    split_at_own_lines,
    text_key,
)
from taxpraben.parsing.region import ANSWER_MARKER, answer_tags

__all__ = [
    "ANOTHER_QUESTION",
    "COPY_MIN",
    "COPY_OF_PROMPT",
    "CopyParts",
    "OwnAnswer",
    "comparison_key",
    "copied_parts",
    "gram_share",
    "own_answer",
    "restates_document",
]


#: Format-failure reasons of :attr:`OwnAnswer.failure`.
COPY_OF_PROMPT = "copy of the prompt"


ANOTHER_QUESTION = "answers another question"


@dataclass(frozen=True)
class OwnAnswer:
    """The model's own answer part of an output.

    ``text``: the output cut before any invented continuation, copied stretches blanked
    (each replaced by one space, or by the line breaks it spanned, so lines and sentences keep
    their shape); ``copied``:
    whether anything was blanked; ``cut``: whether an invented continuation was cut off;
    ``failure``: :data:`COPY_OF_PROMPT` or :data:`ANOTHER_QUESTION` when nothing of the
    model's own is left, else None.
    """

    text: str
    copied: bool = False
    cut: bool = False
    failure: str | None = None


@lru_cache(maxsize=1024)
def _prompt_lines(query: str) -> tuple[str, ...]:
    """The keys of the prompt's non-empty lines that ask or instruct (cached, as
    :func:`prompt_key_of`). A list item of the prompt's data (``* Richard is Gloria's parent.``,
    ``1. 销售货物取得收入80万元``) that the output writes again is the model working through the
    data, not the prompt asked again: such a line starts no new turn. A list item that asks
    (``2. 下列说法正确的是（ ）``, ``3. Who is …?``) stays."""
    return tuple(k for line, k in _keyed_prompt_lines(query)
                 if not (_DATA_ITEM.match(line) and not _ASKS.search(line)) and not _ANSWER_TEMPLATE.match(line))


#: A line of the prompt that is the answer's template: an answer marker and a blank for the
#: answer ("The answer is: ...", "Answer: (A|B)", "答案：____"). The model that writes it with its
#: own answer answers; it does not ask the question again.
_ANSWER_TEMPLATE = re.compile(
    r"^[\s*#>\-]*(?:" + ANSWER_MARKER.pattern + r")\s*(?i:is|was|为|是)?\s*[:：]?\s*"
    r"(?:\.{2,}|…+|_+|\[[^\]\n]{0,30}\]|\([^)\n]{0,30}\)|<[^>\n]{0,30}>|\{[^}\n]{0,30}\}|X|\?)?[\s.。*]*$"
)


@lru_cache(maxsize=1024)
def _keyed_prompt_lines(query: str) -> tuple[tuple[str, str], ...]:
    """Each non-empty line of the prompt with its key (cached)."""
    return tuple((line, k) for line in plain_prompt(query).split("\n") if (k := key_only(line)))


#: A list item: a bullet or a number opens the line.
_DATA_ITEM = re.compile(
    # a table row too ("| 流動資産 | 2,180,790 |": the model writes the figure it works with)
    r"^\s*(?:[*\-•·|]|\d{1,3}[.)、．]|[(（]\d{1,3}[)）]"
    # a step of working, in the languages models work in ("Step 2:", "Шаг 2:", "Schritt 2:", "步骤2：")
    r"|(?i:step|шаг|schritt|paso|étape|etape|passo|langkah|hatua)\s*\d{1,3}\s*[:：.]|ステップ\s*\d{1,3}|步骤\s*\d{1,3}|第\s*\d{1,3}\s*步)\s*\S"
)
#: A line that asks: it ends on a question mark or on the blank of a choice question.
_ASKS = re.compile(r"(?:[?？]|[（(]\s*[）)])\s*[。.]?\s*$")


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
    if _short_phrase(text, query):
        return OwnAnswer(text)
    if options and list_cut_off(text, options):  # the option list copied until the generation stopped
        return OwnAnswer("", True, False, COPY_OF_PROMPT)
    where, spans, cut_at, invented_first, new_options = _copies(text, query, options, document, several)
    if new_options:
        return OwnAnswer("", bool(spans), True, ANOTHER_QUESTION)
    body = text
    kept = spans
    if cut_at is not None:
        body = text[:cut_at]
        kept = [(s, end_before(where, s, e, cut_at)) for s, e in spans if where[s] < cut_at]
    own = blank_spans(body, where, kept)
    if residue(own):
        return OwnAnswer(own, bool(kept), cut_at is not None, None)
    if invented_first:
        failure: str | None = ANOTHER_QUESTION
    elif spans or ANSWER_HEADS.search(text):
        failure = COPY_OF_PROMPT
    else:
        failure = None
    return OwnAnswer(own, bool(spans), cut_at is not None, failure)


#: The most words and characters of a short phrase written as a whole output.
_PHRASE_WORDS = 6
_PHRASE_CHARS = 60
_PHRASE_CJK = 16
_CLAUSE_MARK = re.compile(r"[，；、。！]|[,;.!](?=\s)")
_CJK_CHAR = re.compile(r"[\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]")


def _short_phrase(text: str, query: str) -> bool:
    """The whole output is one short phrase of its own ("Kansas City Royals", "Agriculture",
    "Not in background."): the model's answer, even where the prompt has the same words (in
    its question's alternatives, a passage, a demonstration's answer). A copy of the prompt
    writes a line of it back: a phrase that is a whole line of the prompt (its question, an
    instruction), a question, or an answer heading alone stays one."""
    line = text.strip()
    if "\n" in line or len(line) > _PHRASE_CHARS or len(line.split()) > _PHRASE_WORDS or line.endswith(("?", "？", ":", "：")):
        return False
    if not residue(line) or _CLAUSE_MARK.search(line.rstrip("。.!！")) or len(_CJK_CHAR.findall(line)) > _PHRASE_CJK:
        return False  # a list ("D：……，E：……") or a clause is no phrase
    own = key_only(line)
    return bool(own) and all(own != k for _line, k in _keyed_prompt_lines(query))




class _Copies(NamedTuple):
    """What :func:`own_answer` finds in a text: the key offsets of its characters (``where``),
    the copied stretches (key spans), where an invented continuation begins (a text offset,
    None: none), whether the output began with an invented question, and whether it writes
    a new option list (then it answers another question from the start: ``cut_at`` 0)."""

    where: list[int]
    spans: list[tuple[int, int]]
    cut_at: int | None
    invented_first: bool
    invented_options: bool


_KEY_CHAR = re.compile(r"[0-9A-Za-z\u4e00-\u9fff]")


#: Alternatives the prompt offers for the answer: "True/False", "Yes/No", "是/否", "A/B".
_ALTERNATIVES = re.compile(r"(?<![\w/])([A-Za-z]+|[\u4e00-\u9fff]{1,2})\s*/\s*([A-Za-z]+|[\u4e00-\u9fff]{1,2})(?![\w/])")


@lru_cache(maxsize=256)
def _offered(query: str) -> frozenset[str]:
    """The words the prompt offers as alternatives for the answer (case-folded)."""
    return frozenset(w.casefold() for m in _ALTERNATIVES.finditer(query) for w in m.groups())


_WORD_AT = re.compile(r"[A-Za-z]+|[\u4e00-\u9fff]{1,2}")


def _answering_markers(
    text: str, where: list[int], runs: list[tuple[int, int]], offered: frozenset[str] = frozenset(),
    fields: re.Pattern[str] | None = None, shown: frozenset[str] = frozenset(),
) -> list[tuple[int, int]]:
    """The answer markers of ``text`` that the model answers after: an answer of its own (not
    copied) follows on the marker's line. The prompt may ask for the marker word for word
    ("Therefore, the answer is ..."); the model that writes it and its answer states its answer,
    it does not copy the prompt (a marker with nothing after it, the end of a copied prompt,
    stays a copy). One of the alternatives the prompt offers ("…the answer is True/False") written
    alone after the marker ("the answer is True.") is the model's choice, copied or not. The
    fields of the prompt's answer template (``fields``: "First Error Step: [Insert …]") are
    markers too: "First Error Step: 9" answers in the template."""
    if not runs:
        return []
    statements = list(ANSWER_MARKER.finditer(text))
    filled = list(fields.finditer(text)) if fields else []
    markers = [*statements, *filled]
    if not markers:
        return []
    kept = []
    for m in markers:
        stop = text.find("\n", m.end())
        # the marker's copula is the marker's ("The final answer is 240": the answer is 240)
        copula = _MARKER_COPULA.match(text, m.end())
        after = copula.end() if copula else m.end()
        line_end = len(text) if stop < 0 else stop
        if m in statements and stop >= 0 and text[after:stop].strip(" \t*:：") == "" and any(c in text[m.start() : stop] for c in ":："):
            # "So the answer is:" closing its line announces the answer on the next one, as the
            # prompt's demonstrations give theirs
            following = text.find("\n", stop + 1)
            after, line_end = stop + 1, len(text) if following < 0 else following
        own = _KEY_CHAR.search(text, after, line_end)
        if own is None:
            continue
        copied = _copied_at(own.start(), where, runs)
        if copied and _own_value_after(text, own.start(), line_end, where, runs):
            # the template's own words, then the model's value: "The answer is: Step 3" for the
            # prompt's "The answer is: Step X"
            copied = False
        word = _WORD_AT.match(text, own.start()) if copied and offered else None
        chosen = word is not None and word.group(0).casefold() in offered and not text[word.end() :].lstrip().startswith("/")
        opens = not text[: text.rfind("\n", 0, m.start()) + 1].strip()  # on the output's first line
        rest = text[own.start() : line_end]
        short = len(rest.split()) <= _SHORT_ANSWER_WORDS and len(rest) <= _SHORT_ANSWER_CHARS and not ANSWER_MARKER.search(rest)
        # a field the demonstrations fill (``shown``) holds the model's value, the same as one of theirs or not
        demonstrated = short and m in filled and m.group(0).strip(" \t*#>-:：").lower() in shown
        if not copied or chosen or (opens and short) or demonstrated:
            # the first line a model writes, "Answer: garden", answers even where a few-shot
            # example of the prompt has the same line
            kept.append((m.start(), line_end) if demonstrated else m.span())
    return kept


def _answer_fields(text: str, query: str) -> re.Pattern[str] | None:
    """The labels of the prompt's answer template, and the fields of ``text`` that the prompt
    names as its answer ("**Sentiment Score:** 0.450" where it asks to "assign a sentiment score"),
    as they open a line of an output, or None: their words are the answer's label, no copy."""
    named = {m.group("label").strip() for m in FIELD_LINE.finditer(text) if names_the_answer(m.group("label"), query)} \
        if ":" in text else set()
    return _template_fields(query, frozenset(named))


@lru_cache(maxsize=256)
def _template_fields(query: str, named: frozenset[str] = frozenset()) -> re.Pattern[str] | None:
    """The labels of the prompt's answer template and ``named``, as they open a line of an output, or None."""
    labels = sorted({m.group("label").strip() for m in TEMPLATE_FIELD.finditer(query)} | named, key=len, reverse=True)
    if not labels:
        return None
    return re.compile(r"^[ \t*#>-]*(?i:" + "|".join(re.escape(label) for label in labels) + r")[ \t*]*[:：][ \t*]*", re.MULTILINE)


#: The most characters of the template's own words between an answer marker and the value.
_TEMPLATE_WORDS = 12


def _own_value_after(text: str, start: int, line_end: int, where: list[int], runs: list[tuple[int, int]]) -> bool:
    """After a few copied characters at ``start`` (the template's words, "Step"), the marker's
    line goes on with a value of the model's own: a digit or a letter that is not copied."""
    for m in _KEY_CHAR.finditer(text, start, min(line_end, start + _TEMPLATE_WORDS + 8)):
        if not _copied_at(m.start(), where, runs):
            return m.start() - start <= _TEMPLATE_WORDS and m.group(0).isdigit()
    return False


#: The copula after an answer marker ("final answer is", "答案为"): part of the marker.
_MARKER_COPULA = re.compile(r"(?:\s*(?i:is|was|will\s+be|would\s+be|should\s+be|是|为)(?![A-Za-z]))?")
#: The most words and characters of a short answer on a marker's line.
_SHORT_ANSWER_WORDS = 4
_SHORT_ANSWER_CHARS = 40


def _copied_at(offset: int, where: list[int], runs: list[tuple[int, int]]) -> bool:
    """Whether the character at text ``offset`` lies in one of the copied ``runs`` (key spans).
    ``where`` rises strictly (a key character per text character at most), so the key index
    of ``offset`` is found by bisection: the runs' characters are not visited one by one."""
    i = bisect_left(where, offset)
    return i < len(where) and where[i] == offset and any(start <= i < end for start, end in runs)


_SENTENCE_STOP = re.compile(r"[.。!?！？\n]")


def _in_own_sentence(text: str, where: list[int], span: tuple[int, int]) -> bool:
    """The copied key ``span`` lies inside one sentence of ``text`` that has words of its own
    besides it (answer headings, a leading label and punctuation aside), and is not the whole
    of that sentence (at most :data:`_RESTATED_SHARE` of them are the copy)."""
    first, last = where[span[0]], where[span[1] - 1] + 1
    if _SENTENCE_STOP.search(text, first, last):
        return False  # it runs across sentences: a copy of the prompt's text
    begin = max((m.end() for m in _SENTENCE_STOP.finditer(text, 0, first)), default=0)
    stop = _SENTENCE_STOP.search(text, last)
    end = stop.start() if stop else len(text)
    own = residue(_LEAD_LABEL.sub("", text[begin:first]) + " " + text[last:end])
    return len(own) >= _OWN_WORDS_MIN and span[1] - span[0] <= _RESTATED_SHARE * len(key_only(text[begin:end]))


#: A label a sentence opens with ("Question:", "问题："): no words of the model's own.
_LEAD_LABEL = re.compile(r"^\W*[A-Za-z\u4e00-\u9fff]{1,12}\s*[:：]")
#: The least of its own (key characters) a sentence needs for the question's words in it to be
#: its own restatement, and the most of the sentence those words may be.
_OWN_WORDS_MIN = 3
_RESTATED_SHARE = 0.8


#: A demonstration's answer in the prompt: the rest of a line that opens with an answer head
#: ("A: Not in background.", "Answer: 1981", "答：增值税").
_DEMO_ANSWER = re.compile(r"^[ \t]*(A|Answer|ANSWER|Ａ|答案|答)[ \t]*[:：][ \t]*(\S[^\n]*)$", re.MULTILINE)
_QUESTION_HEAD = re.compile(r"^[ \t]*(?:Q|Ｑ)[ \t]*[:：]", re.MULTILINE)
#: The longest demonstration answer (key characters) that is an answer's words, not a worked solution.
_DEMO_ANSWER_MAX = 60


@lru_cache(maxsize=1024)
def _demonstration_answers(query: str) -> tuple[str, ...]:
    """The keys of the short answers the prompt gives to its own demonstration questions. An
    output that gives one of them for this question answers it (right or wrong: "Not in
    background.", the prompt's phrase for a question the passage does not answer), as an output
    that names an option does: the words of an answer are no copy of the prompt."""
    # "A:" heads an answer only in a prompt of "Q:"/"A:" pairs; elsewhere it is option A
    pairs = _QUESTION_HEAD.search(query) is not None
    keys = (comparison_key(m.group(2)) for m in _DEMO_ANSWER.finditer(query) if pairs or m.group(1) not in ("A", "Ａ"))
    return tuple(k for k in keys if 0 < len(k) <= _DEMO_ANSWER_MAX)


def _within_one(run_key: str, answers: Sequence[str]) -> bool:
    return any(run_key in answer for answer in answers)


def _copies(text: str, query: str, options: Sequence[str], document: str | None, several: bool) -> _Copies:
    """The copies and the continuation of ``text`` (rules 1 and 2 of the module docstring)."""
    option_keys = option_keys_of(tuple(options))
    prompt_key = prompt_key_of(query, document)
    prompt_lines = _prompt_lines(query)
    key, where = text_key(text)
    block = "".join(chr(ord("a") + i) + k for i, k in enumerate(option_keys))
    runs = split_at_own_lines(copied_runs(key, prompt_key), text, where)
    demos = _demonstration_answers(query)
    copies = [run for run in runs if not single_option(key[run[0] : run[1]], option_keys)
              and not _within_one(key[run[0] : run[1]], demos)]
    runs = split_at_markup(runs, text, where, _answering_markers(text, where, copies, _offered(query), _answer_fields(text, query),
                                                            demonstrated_fields(query))
                           + answer_tags(text, query))
    spans = [
        (start, end)
        for n, (start, end) in enumerate(runs)
        if not single_option(key[start:end], option_keys)
        and not _within_one(key[start:end], demos)
        and not (several and selection(key, runs, n, block, option_keys))
    ]
    listed = (
        option_list_spans(key, option_keys)
        + restated_option_lines(text, where, prompt_key, option_keys)
        + inline_enumerations(text, where, prompt_key)
    )
    if several:  # some options written back are a selection; all of them are a copy
        listed = [span for span in listed if span[2] >= len(option_keys)]
    listed_spans = [(start, end) for start, end, _count in listed]
    # The question's stem restated right before the option it answers with ("……最重要的并发症
    # 可能是：B. 肺部感染") is the model's answer sentence, not a copy.
    spans = [span for span in spans if not answers_stem(key, span, option_keys, listed_spans)]
    spans = [_list_kept(text, where, key, answer_kept(key, span, option_keys)) for span in spans]
    # The question's words restated inside a sentence that adds the model's own ("Fred gave the
    # apple to Bill." for "Who gave the apple?"): the answer sentence, not a copy. (With options,
    # a sentence names the options it copies: the option rules above decide what it selects.)
    # With options, a sentence names the options it copies (the option rules above decide what it
    # selects); the prompt's other words in the model's own sentence ("Therefore, I can't solve the
    # problem as it is now") are its own sentence all the same.
    spans = [span for span in spans if not (_in_own_sentence(text, where, span)
                                            and not any(k and (k in key[span[0]:span[1]] or key[span[0]:span[1]] in k)
                                                        for k in option_keys))]
    spans = [span for span in spans if span[1] > span[0]]
    spans = merge_spans(spans + listed_spans)
    if option_keys and invented_options(text, where, spans, prompt_key, option_keys):
        return _Copies(where, spans, 0, False, True)
    cut_at, invented_first = continuation(text, where, spans, option_keys, prompt_key, prompt_lines,
                                          section_labels(plain_prompt(query)))
    return _Copies(where, spans, cut_at, invented_first, False)


#: What follows the first option letter of a list of them: "A, C, and D", "A、C", "A and C".
_MORE_LETTERS = re.compile(r"\s*(?:,|、|，|;|and|和|及|与)\s*(?:and\s+)?[(（]?[A-Ja-j](?![A-Za-z])")


def _list_kept(text: str, where: list[int], key: str, span: tuple[int, int]) -> tuple[int, int]:
    """A copy of the question's words that ends on the first option letter of a list the output
    gives ("The correct statement(s) is (are): A, C, and D" for a prompt whose "… is (are)" runs on
    to "(A)"): the letter is the answer's, not the copy's."""
    start, end = span
    if end - start < 2 or not key[end - 1].isalpha():
        return span
    at = where[end - 1]
    if (at > 0 and text[at - 1].isalpha()) or not _MORE_LETTERS.match(text, at + 1):
        return span
    return (start, end - 1)


@dataclass(frozen=True)
class CopyParts:
    """Where an output repeats its prompt, in offsets of the text given: the copied stretches
    (``[start, end)``, each as :func:`own_answer` blanks it) and the offset where it moves on
    to another question (None: it does not). What lies in neither is the model's own."""

    copies: tuple[tuple[int, int], ...] = ()
    cut: int | None = None

    def holds(self, start: int, end: int) -> str | None:
        """Whether ``[start, end)`` lies in the output's own part: None; else why not, the
        span being wholly inside copies (:data:`COPY_OF_PROMPT`) or past the cut
        (:data:`ANOTHER_QUESTION`)."""
        if self.cut is not None and start >= self.cut:
            return ANOTHER_QUESTION
        own = end - start - sum(max(0, min(end, e) - max(start, s)) for s, e in self.copies)
        return COPY_OF_PROMPT if own <= 0 else None


def copied_parts(
    text: str,
    query: str,
    *,
    options: Sequence[str] = (),
    document: str | None = None,
    several: bool = False,
) -> CopyParts:
    """Where ``text`` copies its prompt and where it moves on to another question (arguments
    as for :func:`own_answer`): the parts :func:`own_answer` blanks and cuts, as offsets
    into ``text``, for a reader that must say where an answer lies (the judge's quote)."""
    if not text.strip() or not query.strip():
        return CopyParts()
    where, spans, cut_at, _, _ = _copies(text, query, options, document, several)
    return CopyParts(tuple((where[s], where[e - 1] + 1) for s, e in spans), cut_at)


#: A document restated whole: at least this share of its key, in two or more of its clauses.
RESTATED_SHARE = 0.8
_DOC_CLAUSE = re.compile(r"[^。；;！!？?\n，,]+")
#: Headings an output may put before the material it writes back (not words of its own).
_RESTATE_HEADS = re.compile(r"答案|回答|材料|原文|解析|根据材料|依据")


def restates_document(cleaned: str, query: str, document: str) -> bool:
    """Whether an output restates the reading task's ``document`` whole and says nothing of
    its own: two or more of its clauses, covering at least :data:`RESTATED_SHARE` of it, in
    the ``cleaned`` output; between the first and the last of them nothing but the document,
    the rest of the prompt (``query``) and headings, and around them nothing but the rest of
    the prompt and headings. A quoted clause is how a span is answered, and an answer given
    before the material as its support is an answer; the material written back alone is not
    (its first sentence would otherwise be read as the answer)."""
    if not document or not cleaned.strip():
        return False
    whole = comparison_key(cleaned)
    clauses = [k for k in _clause_keys(document) if len(k) >= COPY_MIN]
    found = [k for k in clauses if k in whole]
    if len(found) < 2 or sum(map(len, found)) < RESTATED_SHARE * sum(map(len, clauses)):
        return False
    placed = found + [k for k in _clause_keys(document) if k and k in whole]
    start = min(whole.find(k) for k in placed)  # short clauses ("经查，") too
    end = max(whole.rfind(k) + len(k) for k in placed)
    rest = _grams(comparison_key(query.replace(document, " ")))
    inside = rest | _grams(comparison_key(document))
    covered = [False] * len(whole)
    for i in range(len(whole) - 3):
        if whole[i : i + 4] in (inside if start <= i and i + 4 <= end else rest):
            covered[i : i + 4] = [True] * 4
    for m in _RESTATE_HEADS.finditer(whole):
        covered[m.start() : m.end()] = [True] * (m.end() - m.start())
    return all(covered)


#: What makes the cleaning of a document other than the cleaning of each of its clauses:
#: tags, fences and LaTeX (``<`` ````` ``~`` ``\\`` ``$`` ``{``), line breaks the cleaner
#: folds to ``\n``, and the characters it folds into one of these or into a clause's end
#: (``｡`` ``＜`` ``﹖`` ...; tests/test_parsing_fast_paths.py checks every character).
_NOT_CLAUSEWISE = re.compile(
    "[<`~\\\\${\r\u2028\u2029\u037e\u1fef\u203c\u2047-\u2049\ufe10\ufe12\ufe14-\ufe16\ufe37"
    "\ufe50\ufe54\ufe56\ufe57\ufe5b\ufe64\ufe68\ufe69\uff04\uff1c\uff3c\uff40\uff5b\uff5e\uff61"
    "\U0001f101-\U0001f10a]"
)


@lru_cache(maxsize=256)
def _clause_keys(document: str) -> tuple[str, ...]:
    """The comparison key of each clause of ``document`` but the empty ones (cached: every
    run's output is compared with the same document). Where nothing in it reaches across a
    clause's end (:data:`_NOT_CLAUSEWISE`), each clause cleaned is that clause of the
    document cleaned (cleaned once, for the prompt's key too) and its key is that stretch of
    the document's key."""
    if _NOT_CLAUSEWISE.search(document) is None:
        text = plain_prompt(document)
        key, where = text_key(text)  # the key is made character by character: cut it
        keys = [key[bisect_left(where, m.start()) : bisect_left(where, m.end())] for m in _DOC_CLAUSE.finditer(text)]
    else:
        keys = list(map(comparison_key, _DOC_CLAUSE.findall(document)))
    return tuple(k for k in keys if k)


def _grams(key: str) -> set[str]:
    return {key[i : i + 4] for i in range(len(key) - 3)}

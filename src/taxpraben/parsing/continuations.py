"""Where an output moves on to another question (invented continuations).

A base model answers and then writes a new question (``题目：…``, ``问题2：``, ``第2题``,
``Question:``, a numbered question, a stem with a new option list) and answers it too, or writes
its own prompt again: a line that opens with one of the prompt's own section labels
(``Context:``, ``<context>``, ``</example>``, ``材料：`` — a label that opens a line of the
prompt) starts the prompt's next section, not the answer. :func:`continuation` finds the first such point after the output has
answered (:func:`answered_before`); a line that restates this question (:func:`restates`) is no
new question. Used by :mod:`taxpraben.parsing.prompt_copy`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

from taxpraben.parsing.answer_fields import TEMPLATE_FIELD, demonstrated_fields, demonstrated_labels
from taxpraben.parsing.overlap import (
    COPY_MIN,
    SIMILAR_N,
    blank_spans,
    comparison_key,
    key_only,
    single_option,
)
from taxpraben.parsing.region import ANSWER_WORDS, PROMPT_LABEL, ending_label

__all__ = [
    "ANSWER_HEADS",
    "continuation",
    "own_before",
    "residue",
    "restates",
    "section_labels",
]


_OPTION_LINE = re.compile(r"^[\s*#>\-]*[(（【\[]?([A-H])[)）】\]]?\s*[.．、:：)）]\s*(?P<text>\S.*?)\s*$", re.MULTILINE)


def own_before(text: str, point: int, where: list[int], spans: list[tuple[int, int]]) -> bool:
    """Whether the output says something of its own before ``point``."""
    return bool(residue(blank_spans(text[:point], where, [s for s in spans if where[s[1] - 1] < point])))


_HEADING = re.compile(
    r"^[\s*#>【\[]*(?:"
    r"(?:题目|问题|试题|例题|习题|新题|下一题|題目|問題|試題|例題|習題|新題|下一題)\s*[0-9一二三四五六七八九十]*\s*[】\]]?\s*[:：]"
    r"|第\s*[0-9一二三四五六七八九十]+\s*[题問问題](?![目型])"
    r"|例\s*[0-9一二三四五六七八九十]+\s*[:：.、]"
    r"|(?i:question|q|problem|exercise)\s*\d*\s*[:：.]"
    r")",
    re.MULTILINE,
)


_NUMBERED_QUESTION = re.compile(r"^[\s*#>]*\d{1,3}\s*[.、．)）]\s*(?P<stem>.*(?:[(（]\s*[)）]|[?？]).*)$", re.MULTILINE)


ANSWER_HEADS = re.compile(
    r"最终答案|正确答案|参考答案|标准答案|答案|解析|分析|解答|答|(?i:final\s+answer|answer|solution)|" + ANSWER_WORDS
)


_RESIDUE_JUNK = re.compile(r"[\s\W_]+")


def residue(text: str) -> str:
    """What is left of ``text`` without answer headings, punctuation and Markdown."""
    return _RESIDUE_JUNK.sub("", ANSWER_HEADS.sub("", text))


def _option_lines(text: str, option_keys: Sequence[str]) -> list[tuple[int, int, bool]]:
    """Option lines of ``text`` as (line start, letter index, is about this question's option:
    its text holds the option's text, as a copy or a per-option analysis does)."""
    found = []
    for m in _OPTION_LINE.finditer(text):
        index = ord(m.group(1)) - ord("A")
        own = index < len(option_keys) and bool(option_keys[index]) and option_keys[index] in comparison_key(m.group("text"))
        found.append((m.start(), index, own))
    return found


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _heading_line(text: str, start: int) -> str:
    """The line at ``start`` with its heading; when the heading stands alone (``第2题``), the
    next non-empty line too (the question it opens)."""
    line = _line_at(text, start)
    if key_only(_HEADING.sub("", line)):
        return line
    rest = text[start + len(line) :].lstrip("\n")
    return line + " " + _line_at(rest, 0) if rest else line


def _line_at(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start : end if end >= 0 else len(text)]


#: A line of this many key characters before a new option list is its question's stem.
_STEM_MIN = 6
_QUESTION_STEM = re.compile(r"(?:[(（]\s*[)）]|[?？]|_{2,})\s*$")


#: A Markdown heading of a numbered part ("### 问题2：", "## Problem 3:").
_NUMBERED_PART = re.compile(r"[ \t*]*(?P<marks>#{0,6})[ \t]*(?P<word>问题|題目|题目|問題|(?i:question|problem|part|step|q))[ \t]*(?P<n>\d{1,2})")


def _own_part(text: str, start: int) -> bool:
    """A numbered heading whose numbering the output started itself ("### 问题1：" … "### 问题2：",
    the subquestions "Q1." … "Q3." it poses to work a problem out): the parts of its own
    solution, not another question. Without Markdown, the numbering must have started in the
    output, at 1."""
    m = _NUMBERED_PART.match(text, start)
    if m is None:
        return False
    if m.group("n") == "1":
        return bool(m.group("marks")) or _NUMBERED_PART.search(text, m.end()) is not None
    marks = r"#{1,6}" if m.group("marks") else r"[*]*"
    first = re.compile(r"^[ \t]*" + marks + r"[ \t]*" + re.escape(m.group("word")) + r"[ \t]*1(?!\d)", re.MULTILINE | re.IGNORECASE)
    return first.search(text, 0, start) is not None


#: Words that name a question's options ("our options", "each choice", "各选项", "選択肢").
_NAMES_OPTIONS = re.compile(r"(?i:\b(?:options?|choices?|alternatives?)\b)|选项|選項|選択肢|보기|선택지")


def _cut_points(text: str, option_keys: Sequence[str]) -> list[int]:
    """Offsets where another question may begin, in order."""
    points = {m.start() for m in _HEADING.finditer(text) if not _own_part(text, m.start())}
    points.update(m.start() for m in _NUMBERED_QUESTION.finditer(text))
    lines = _option_lines(text, option_keys)
    for (start, index, own), nxt in pairwise(lines):
        # A new option list: an "A." and a "B." line that are not this question's options,
        # after a question stem ("……的是（ ）", "……？", "下列……正确的是", "Which …"): the stem line
        # and its list are another question (only once the output has answered: continuation).
        if index == 0 and nxt[1] == 1 and not (own or nxt[2]) and start > 0 and _listed_together(text, start, nxt[0]):
            previous = _line_start(text, start - 1)
            stem = text[previous:start].strip()
            # a line that heads the answer ("الإجابة النهائية هي:") announces a verdict on each option,
            # one that names the options ("Looking at our options:", "逐项分析各选项：") their analysis
            heads_answer = stem.endswith((":", "：")) and (ANSWER_HEADS.search(stem) or _NAMES_OPTIONS.search(stem))
            if not heads_answer and (_QUESTION_STEM.search(stem) or (len(key_only(stem)) >= _STEM_MIN and not _OPTION_LINE.match(stem))):
                points.add(previous)
    return sorted(points)


#: Shares of a line's character 3-grams found in the prompt above which the line restates
#: this question (after an answer: nearly word for word; at the start: a paraphrase).
_SAME_QUESTION = 0.8


_PARAPHRASE = 0.3


def restates(line: str, prompt_key: str, share: float) -> bool:
    """Whether ``line`` restates the prompt: ``share`` of its character 3-grams occur in it."""
    key = key_only(_HEADING.sub("", line))
    key = ANSWER_HEADS.sub("", key)
    grams = [key[i : i + SIMILAR_N] for i in range(len(key) - SIMILAR_N + 1)]
    if not grams:
        return True
    return sum(g in prompt_key for g in grams) >= share * len(grams)


_ANSWERED = re.compile(
    r"(?:最终答案|正确答案|参考答案|答案|答\s*[:：]|应选|故选|(?i:answer))[^\n]{0,12}?[A-Za-z0-9\u4e00-\u9fff]|\\boxed"
    # 选 answers only before an option letter ("选C"), not as a verb of the working ("选取k个")
    r"|(?:选择|选)(?=\s*[:：]?\s*(?:选项)?\s*[(（【\[]?[A-H](?![A-Za-z]))"
)


_LETTER_FIRST = re.compile(r"^[^A-Za-z0-9\u4e00-\u9fff]*[A-H]\s*(?:[.．、:：)）]|$)")


_CODE_LINE = re.compile(
    r"^\s*(?:(?:def|class|import|from|return|print|for|while|elif|else|try|except|with|lambda)\b"
    r"|[A-Za-z_][\w.]*\s*(?:\[[^\]]*\])?\s*[-+*/]?=(?!=)|[A-Za-z_][\w.]*\(.*\)\s*$)"
)


_MD_HEADING = re.compile(r"^\s*#{1,6}\s+(?![-+]?[$¥€£]?\d)")


#: A short first line of its own (``B``, ``B. 增值税``, ``8000元``) is an answer too.
_SHORT_ANSWER = 16


def _answered_before(
    text: str, point: int, where: list[int], spans: list[tuple[int, int]], option_keys: Sequence[str] = ()
) -> bool:
    """Whether the output has answered (a marker with something after it, or a first line of
    its own that is short, opens with an option letter or is one option) before ``point``:
    only then is what follows a continuation."""
    before = blank_spans(text[:point], where, [s for s in spans if where[s[1] - 1] < point])
    if not residue(before):
        return False
    if _ANSWERED.search(before):
        return True
    # A line of program code ("def tax():", "x = 5") answers nothing: a tool-using model
    # writes the question into its program's docstring before it has answered.
    # Nor does a Markdown heading ("## 问题分解", "### Step 1") or a line that announces what
    # follows ("可以分解为以下几个小问题："): a structured solution heads its own parts before it answers.
    lines = [
        line for line in before.split("\n")
        if residue(line) and not _CODE_LINE.match(line) and not _MD_HEADING.match(line) and not line.rstrip().endswith((":", "："))
    ]
    if not lines:
        return False
    first = key_only(lines[0])
    return len(first) <= _SHORT_ANSWER or bool(_LETTER_FIRST.match(lines[0])) or any(
        k and k in first and len(first) - len(k) < COPY_MIN for k in option_keys
    )


#: A label at the start of a line: a tag (``<context>``, ``</example>``) or a few words and a
#: colon (``Context:``, ``Passage:``, ``材料：``).
_SECTION_LABEL = re.compile(
    r"^[ \t#*>]*(?:<(?P<tag>/?[A-Za-z][\w-]{0,20})>|(?P<label>[A-Za-z][A-Za-z ]{0,24}?"
    r"|(?:材料|文章|背景|上下文|原文|案例|资料|示例|例子|选项|參考|参考|說明|说明)[\u4e00-\u9fff]{0,2})\s*[:：])",
    re.MULTILINE,
)


@lru_cache(maxsize=1024)
def section_labels(prompt: str) -> frozenset[str]:
    """The keys of the section labels the prompt's lines open with (``Context:``, ``<context>``,
    ``材料一：``, ``Passage 1:``). The label the prompt ends on, left for the model to fill
    (``Judgement:``, ``A:``), is the slot of its answer, not a section: the model that writes it
    again answers after it."""
    labels = {key for m in PROMPT_LABEL.finditer(prompt) if (key := key_only(m.group("tag") or m.group("label") or ""))}
    # the label of the demonstrations' answers ("jawapan: C" after each example question) is the
    # slot of the model's answer too, though the prompt does not end on it
    labels -= {key_only(label) for label in demonstrated_labels(prompt)}
    # the fields of the answer's own template, each with a slot to fill ("Final Judgement: [Insert
    # only correct or wrong here]"): the model that writes them answers in them
    labels -= {key_only(m.group("label")) for m in TEMPLATE_FIELD.finditer(prompt)}
    labels -= {key_only(label) for label in demonstrated_fields(prompt)}  # the same template shown by example
    # the tags the prompt asks the answer to be written in, each written empty ("Include your search
    # process in <reasoning></reasoning> tags"): the model that opens them answers in them
    labels -= {key_only(tag) for tag in _ASKED_TAG.findall(prompt)}  # "</reasoning>" keys as "reasoning" too
    slot = ending_label(prompt)
    if slot is not None:
        labels.discard(key_only(slot))
    return frozenset(labels)


#: A tag written as an empty pair, the form an instruction names a tag in: ``<reasoning></reasoning>``.
_ASKED_TAG = re.compile(r"<([A-Za-z][\w-]{0,20})>\s*</\1>")


def _is_prompt_label(label: str, labels: frozenset[str]) -> bool:
    """The output's label is one of the prompt's, whole: ``Context`` for ``Context:`` or
    ``Context 2:``; not ``Given`` for the prompt's sentence "Given the following variables:"."""
    return label in labels or any(p.startswith(label) and p[len(label):].isdigit() for p in labels)


def _section_points(text: str, labels: frozenset[str]) -> list[int]:
    """Lines of ``text`` that open with a section label of the prompt, answer headings aside."""
    points = []
    for m in _SECTION_LABEL.finditer(text):
        label = key_only(m.group("tag") or m.group("label") or "")
        if len(label) < 2 or ANSWER_HEADS.fullmatch(label) or _ANSWER_WORDS.fullmatch(label):
            continue
        if _is_prompt_label(label, labels):
            points.append(m.start())
    return points


#: Labels that head an answer, not a section of the prompt.
_ANSWER_WORDS = re.compile(r"(?:final|the|your|correct)?(?:answer|answers|response|output|label|result|解|解答|回答|答)(?:is|was)?")


def continuation(
    text: str, where: list[int], spans: list[tuple[int, int]], option_keys: Sequence[str],
    prompt_key: str, prompt_lines: Sequence[str], labels: frozenset[str],
) -> tuple[int | None, bool]:
    """Where the output moves on to another question, and whether it did so from the start."""
    cut: int | None = None
    first = False
    for point in _cut_points(text, option_keys):
        line = _heading_line(text, point)
        answered = _answered_before(text, point, where, spans, option_keys)
        if answered and (not restates(line, prompt_key, _SAME_QUESTION) or _other_values(line, prompt_lines)):
            cut = point
            break
        if not residue(blank_spans(text[:point], where, [s for s in spans if where[s[1] - 1] < point])) and \
                not restates(line, prompt_key, _PARAPHRASE) and _new_options_after(text, point, option_keys):
            cut, first = point, True  # opens with another question and its own options
            break
    for point in _section_points(text, labels):
        if any(where[a] <= point <= where[b - 1] for a, b in spans):
            continue  # the label inside a copy of the prompt: the copy, not a new section
        own_before_it = residue(blank_spans(text[:point], where, [s for s in spans if where[s[1] - 1] < point]))
        # the prompt's next section, after the output's own words: the answer ended before it;
        # not after words that announce what follows ("Here's my analysis of the sentence:"), which
        # open a structured answer that writes the input's fields back before its own
        announces = text[:point].rstrip(" \t\n*#>").endswith((":", "："))
        if (cut is None or point < cut) and own_before_it and not announces:
            cut, first = point, False
            break
        label = _SECTION_LABEL.match(text, point)
        if cut is None and not own_before_it and not ANSWER_HEADS.search(text, label.end() if label else point):
            # the output opens with a section of the prompt ("Context: …", "<context>") and
            # never goes on to an answer: it writes the prompt, it answers nothing
            cut, first = 0, True
            break
    turn = _turn_after_own(text, where, spans)
    if turn is not None and (cut is None or turn < cut):
        cut, first = turn, False
    asked = {k for k in prompt_lines if len(k) >= COPY_MIN}
    for start, _end in spans:
        line_start = _line_start(text, where[start])
        if cut is not None and line_start >= cut:
            break
        # a question label before it ("問題：以下說法……", "Question: …") writes the question again too
        line = _line_at(text, line_start)
        label = _HEADING.match(line)
        line_keys = {key_only(line), key_only(line[label.end() :] if label else line)}
        # the line writes the prompt's line again, most of it: a line that opens with the question's
        # first words and goes on in its own ("The Pauli exclusion principle is a fundamental
        # concept …" for "The Pauli exclusion principle states that") is the model's own sentence
        repeated = any(line_key.startswith(k[: max(COPY_MIN * 2, len(k) * 4 // 5)])
                       for k in asked if not single_option(k, option_keys) for line_key in line_keys)
        if repeated and _answered_before(text, line_start, where, spans, option_keys):
            return line_start, False  # this prompt's instruction or question written again
    return cut, first


def _other_values(line: str, prompt_lines: Sequence[str]) -> bool:
    """``line`` opens as the prompt's questions do and is not its last one written again: a
    demonstration's question, or the template filled with other values ("Question: Find the
    position of the target value 10 …" for the prompt's "… value 6 …"): another question."""
    key = key_only(line)
    alike = [k for k in prompt_lines if len(key) >= 20 and k[:20] == key[:20]]
    return bool(alike) and not (alike[-1].startswith(key[: len(key) * 4 // 5]) or key.startswith(alike[-1][: len(alike[-1]) * 4 // 5]))


#: A stray dialogue turn ("Assistant:", "### Human:", "User："): the answer ended before it.
_TURN = re.compile(
    r"^[ \t]*(?:#{1,4}[ \t]*|\d{1,2}[.、)][ \t]*)?(?:Human|Assistant|User|USER|HUMAN|ASSISTANT|用户|助手|<\|im_start\|>\w*)[ \t]*[:：\n]"
    # a chat template's role name alone on its line, left when decoding dropped the turn token
    # before it ("<|im_start|>answer" -> "answer", "<start_of_turn>model" -> "model")
    r"|^[ \t]*(?:user|assistant|system|human|model|question|answer)[ \t]*$"
    # a role between bars, the turn format some prompts write ("|user| …", "###|assistant|")
    r"|^[ \t#]*\|(?i:user|assistant|system|human)\|"
    # a system prompt of the model's own, the next dialogue's ("You are an AI assistant that helps …")
    r"|^[ \t]*(?:You\s+are\s+an?\s+(?:(?:helpful|harmless|honest|friendly|knowledgeable|smart)\s+)*"
    r"(?:AI\b|assistant\b|language\s+model\b|chatbot\b)|你是一(?:个|名)[^\n]{0,12}?(?:助手|AI))",
    re.MULTILINE,
)


def _turn_after_own(text: str, where: list[int], spans: list[tuple[int, int]]) -> int | None:
    """Where a stray dialogue turn starts, once something of the output's own (not a copy
    of the prompt) precedes it: an echoed question then "ASSISTANT:" is no answer yet."""
    for m in _TURN.finditer(text):
        point = m.start()
        if residue(blank_spans(text[:point], where, [s for s in spans if where[s[1] - 1] < point])):
            return point
    return None


def _new_options_after(text: str, point: int, option_keys: Sequence[str]) -> bool:
    lines = [entry for entry in _option_lines(text, option_keys) if entry[0] > point]
    return len(lines) >= 2 and lines[0][1] == 0 and lines[1][1] == 1 and not (lines[0][2] or lines[1][2]) \
        and _listed_together(text, lines[0][0], lines[1][0])


#: The most non-empty lines between an option list's "A." and "B." lines (an option's text
#: wrapped onto a second line).
_WRAPPED_LINES = 1


def _listed_together(text: str, first: int, second: int) -> bool:
    """The option lines at ``first`` and ``second`` belong to one list: at most
    :data:`_WRAPPED_LINES` non-empty lines lie between them. Option headings each followed by
    a paragraph that discusses it ("**A. x = 3 is a minimum**", its analysis, "**B. …**")
    go through this question's options, in the output's own words; they ask nothing new."""
    between = text[text.find("\n", first) + 1 : second] if text.find("\n", first, second) >= 0 else ""
    return sum(1 for line in between.split("\n") if line.strip()) <= _WRAPPED_LINES

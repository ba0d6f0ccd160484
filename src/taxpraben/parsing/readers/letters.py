"""Option-letter sets (TaxMCQ): ``"A、B和D"``, ``"ABD"``, ``"A,B,D"``, ``"选项A与D"`` -> {A, B, D}.

:func:`extract_letter_set` (profile ``taxpraben``) reads only the letters the answer
*asserts*, on the cleaned output with LaTeX made plain, the model's own answer only
(:func:`~taxpraben.parsing.prompt_copy.own_answer`: copies blanked, invented continuations cut;
options written back on their own select them, all of them are a copy):

- **Letter tokens.** A maximal run of Latin letters is an option token only when every letter
  in it is an (upper-case) option letter: ``ABD`` and ``A`` are tokens; ``VAT``, ``CEO``,
  ``Answer`` and ``bad`` are not, so English words never contribute letters. Lower-case
  letters count only right after a final-answer marker (``答案：abd``, ``answer: a, c``).
- **Groups.** Consecutive tokens joined only by separators (spaces, ``、 , ， / ; ； + &``,
  ``和 与 及 以及 或 and or``, the same words in French, German, Spanish and Malay ``et ou und oder y dan atau``,
  ``.``, brackets, quotes, Markdown ``*``, and the words ``选项``/``项``) form one answer group:
  ``A、B和D``, ``A, C and E``, ``(b) et (d)``, ``(A)(C)``,
  ``A项和C项``. A bracketed aside with Chinese text ends nothing and adds nothing:
  ``BD（A错误，因为…）`` is {B, D}; ``A（增值税）和C（消费税）`` is {A, C}.
- **Rejections.** A group followed by a negative verdict (``不正确``, ``错误``, ``不选``,
  ``排除``, ``❌``) is a rejected list and never the answer (``B、C、E不正确``).
- **Which group.** In order: a JSON answer field (a list ``["A", "C"]`` or a string
  ``"AC"``); the final statements of :func:`~taxpraben.parsing.region.answer_statements`
  (boxed, answer markers including ``正确的是``/``正确选项为``, self-corrections; latest
  first): the first group within 12 characters of the marker that is not rejected (in a
  self-correction, the group after ``应为``/``应是``/``改为``/``选``); ``全选``, ``以上都对``,
  ``以上全部正确`` in such a statement give every option the question lists; then a short answer
  that is all the options (``以上都对``, ``全选``) or all but some (``除E以外都是``, ``C项错误，
  其余均正确``); then
  **per-option verdicts** (``A正确，B错误``, ``A项：……，说法正确``, ``A ✅``,
  ``A、C项说法正确``; or by the question's own predicate, ``A. 工资、薪金所得——属于``,
  ``B、D属于行政处罚``, read against whether it asks which belong or which do not, and only
  where what is said to belong is what the question names): the options judged correct,
  when any is; then the conclusion
  statements; then the last line that holds a group; with no letter anywhere, the options
  named by their texts alone (an answer statement or a line that is nothing but option texts:
  ``工资、薪金所得、稿酬所得``). Options written back with their texts, a line each or on one
  line (``A. 13%；B. 9%``), select them. Duplicate letters collapse. None when no letter is
  asserted.

TaxBen's rule (profile ``taxben``) lives in :mod:`taxpraben.parsing.readers.taxben`.

**The rules.** Each step above is a rule declared here, beside its attempt over one
:class:`LettersView` of the output (the rules several kinds share are declared in
:mod:`taxpraben.parsing.readers.shared`, their letters attempts here); the ``letters`` chain
(:data:`LETTERS_CHAIN`) runs them in order.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property, lru_cache, wraps

from taxpraben.parsing.chain import Chain, chain_for
from taxpraben.parsing.choice_hedges import NO_OPTION_CORRECT
from taxpraben.parsing.clean import clean_prediction, fold_characters
from taxpraben.parsing.closing import cut_by_limit
from taxpraben.parsing.jsonish import OPTION_ANSWER_KEYS, answer_text, answer_value, own_json_values
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.option_lists import list_cut_off, numbers_as_letters, whole_option_text
from taxpraben.parsing.prompt_copy import (
    COPY_OF_PROMPT,
    OwnAnswer,
    comparison_key,
    gram_share,
    own_answer,
)
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
    CORRECTED_VALUE,
    HEDGED,
    NO_ANSWER,
    NONE_CORRECT,
    NOT_AN_OPTION,
    Reading,
    Statement,
    answer_statements,
    lead_sentence,
    lines_last_first,
    settle_final,
    veto_of,
)
from taxpraben.parsing.registry import Example, register_rule

__all__ = [
    "LETTERS_CHAIN",
    "LETTER_ANSWER_KEYS",
    "LettersView",
    "extract_letter_set",
    "letters_chain",
    "listed_option_letters",
    "listed_option_texts",
    "options_lower_lettered",
    "options_numbered",
    "read_letter_set",
    "read_letters",
    "with_upper_labels",
    "with_upper_letters",
]


#: JSON keys holding a multiple-choice answer, in priority order.
LETTER_ANSWER_KEYS: tuple[str, ...] = (
    *OPTION_ANSWER_KEYS,
    "answers",
    "choices",
    "result",
    "结果",
)

#: A run of Latin letters, whole; a letter elided before an apostrophe ("C'est", "l'ester", "D'après")
#: is a French or Italian word, no option (an English possessive, "B's", still names one).
_RUN = re.compile(r"(?<![A-Za-z])[A-Za-z]+(?![A-Za-z])(?!['’][A-Za-z]{2})")
_SEPARATORS = re.compile(
    r"(?:[\s、,，/;；&+和与及或と.·()（）【】\[\]\"'“”‘’*و]|以及|选项|项|और|(?i:and|or)(?![A-Za-z])|(?<![A-Za-z])(?i:et|ou|und|oder|y|dan|atau)(?![A-Za-z]))*"
)
_ASIDE = re.compile(r"[(（][^()（）\n]*[\u4e00-\u9fff][^()（）\n]*[)）]")
#: "and"/"or" between letters, in English and the languages beside it ("(b) et (d)", "B und D", "A y C"):
#: not the one-letter "e"/"o" of Italian and Portuguese, which may be option E and a letter.
_AND = re.compile(r"(?<=[A-Za-z\s,，])\s*(?:(?i:and|or)\s+(?=[A-Za-z])|(?<![A-Za-z])(?i:et|ou|und|oder|y|dan|atau)\s+(?=[A-Za-z(（]))")
_MARKER_GAP = 12
_NEGATIVE = re.compile(
    r"\s*(?:项|选项)?\s*(?:的)?(?:说法|表述|描述|观点|选项)?\s*(?:均|都|是|为)?\s*"
    r"(?:不正确|错误|不对|有误|不符合|不选|不应选|应排除|排除|错|❌|✗|✘|×|不当|غير\s+صحيح|गलत)"
)
#: The verdict that the option just named is wrong, in the languages beside Chinese: after "is"
#: ("C is incorrect", "(d) est faux"), or standing alone before punctuation ("(a) Faux, …", "B: False.").
_FALSE_WORD = r"(?:incorrect[oa]?|false|wrong|faux|fausse|falsch|fals[oa]|incorret[oa]|errad[oa]|sai|salah)"
_NEGATIVE_WORD = re.compile(
    r"[)）\]】]?\s*(?:[:：\-–—]\s*)?(?i:(?:(?:is|are|est|ist|es|é)\s+(?:not\s+(?:correct|true|right)|" + _FALSE_WORD
    + r")(?![A-Za-zÀ-ÿ])|" + _FALSE_WORD + r"\s*(?=[,.;:!)—–\-]|$)))"
)
_POSITIVE = re.compile(
    r"\s*[)）\]】]?\s*(?:项|选项)?\s*(?:的)?(?:说法|表述|描述|观点|选项)?\s*(?:均|都|是|为)?\s*"
    r"(?:正确|对的|对|符合|当选|应选|✅|✔|√|☑"
    # the same verdict in English: "(B), (C), and (D) are correct"
    r"|(?i:(?:is|are)\s+(?:all\s+|both\s+)?(?:[a-z]+ly\s+)?(?:correct|true|right)(?![a-z]))"
    # and in Arabic and Hindi: "العبارات (A), (C), و (D) صحيحة", "(A) और (C) सही हैं"
    r"|صحيح|सही)"
)
_EXCLUDED_BEFORE = re.compile(r"(?:排除|不选|除了?|去掉|错误的是|不正确的是|错误选项为?)\s*(?:选项)?\s*$")
_ALL_OPTIONS = re.compile(r"全选|以上(?:选项)?(?:都|均|全部|全都)(?:对|正确|是正确的|符合)|(?:全部|都)正确|都对")
# In a correction, a bare 选 also introduces the corrected letters ("不对，选AB").
_CORRECTION_PICK = re.compile(CORRECTED_VALUE.pattern + r"|选")
_VERDICT_LINE = re.compile(
    r"^[\s*#>\-|]*(?:选项)?\s*[(（【]?(?P<letter>[A-Z])[)）】]?\s*(?:项|选项)?(?![A-Za-z])"
)
_LINE_POSITIVE = re.compile(r"正确|对的|当选|✅|✔|✓|√|☑|符合(?:规定|题意)")
_LINE_NEGATIVE = re.compile(r"不正确|错误|不对|有误|不当选|不符合|不选|❌|✗|✘|×")
#: An option letter as a question lists it: ``A.``, ``(B)``, ``C、``, or a bare letter and a
#: space before Chinese text (``A 子女赡养父母``).
_LETTER_MARK = r"([A-H])(?:\s*[.．、:：)）]|[ \t]+(?=[\u4e00-\u9fff]))"
_LISTED = re.compile(r"(?:^|[\s(（])" + _LETTER_MARK, re.MULTILINE)


def listed_option_letters(query: str, letters: str = "ABCDE") -> str:
    """The option letters a question lists (``A. …`` / ``(B) …``), in order; ``letters``
    when it lists fewer than two."""
    found = sorted({m.group(1) for m in _LISTED.finditer(query or "") if m.group(1) in letters})
    return "".join(found) if len(found) >= 2 else letters


#: An option as a question numbers it, at the start of a line: ``1. …``, ``(2) …``, ``3) …``, ``4、…``.
_NUMBER_MARK = re.compile(r"^[ \t*>-]*[(（]?(\d{1,2})[.．、:：)）][ \t]*(\S.*?)[ \t]*$", re.MULTILINE)


@lru_cache(maxsize=1024)
def options_numbered(query: str, choices: tuple[str, ...]) -> bool:
    """Whether the question lists its options by number instead of by letter: every choice, in
    order, on a line of its own after its number ``1.`` … ``n.``, ``(1)``, ``①`` (``1. Amber is
    Hannah's aunt``).
    Choices that are numbers themselves are numbered too ("1: 0.05", "3: 10"): a bare number that
    is an option's value names that option, and one that is no option's value its number."""
    if len(choices) < 2:
        return False
    listed: dict[int, list[str]] = {}
    # read as the output is read: folded, so that circled numbers ("① fluoxetine") are numbers
    for m in _NUMBER_MARK.finditer(fold_characters(query or "")):
        listed.setdefault(int(m.group(1)), []).append(m.group(2).casefold())
    firsts = [fold_characters(str(choice).strip().split("\n", 1)[0]).casefold() for choice in choices]
    return all(any(text.startswith(first) for text in listed.get(i + 1, ())) for i, first in enumerate(firsts))


#: An option the question labels with a lower-case letter at the start of a line: "a: 硝酸薬投与".
_LOWER_LABEL = re.compile(
    # "a: …", "(b) …", or a letter and a space before Chinese or Japanese text ("a　保健師")
    r"^([ \t\u3000]*[(（]?)([a-j])(?=[ \t]*[:：.．、)）][ \t]*\S|[ \t\u3000]+[\u3040-\u30ff\u4e00-\u9fff])", re.MULTILINE
)
#: An option the question labels with an upper-case letter at the start of a line: "B. …", "(C) …".
_UPPER_LABEL = re.compile(r"^[ \t]*[(（]?([A-J])[ \t]*[:：.．、)）]", re.MULTILINE)
#: A lower-case letter standing alone (not inside a word).
_LONE_LOWER_LETTER = re.compile(r"(?<![A-Za-z])[a-j](?![A-Za-z])")


@lru_cache(maxsize=1024)
def options_lower_lettered(query: str) -> bool:
    """Whether the question labels its options with lower-case letters only ("a: …", "(b) …"):
    then its answer is written in them too ("c,d", "b, e"), and they are its options' letters."""
    labels = {m.group(2) for m in _LOWER_LABEL.finditer(query or "")}
    # "(a) 20%", "(b) 28%" with "A: To answer …" (a Q/A head, not an option) is lower-case labelled
    return {"a", "b"} <= labels and not {"A", "B"} <= {m.group(1) for m in _UPPER_LABEL.finditer(query or "")}


def with_upper_letters(text: str, query: str) -> str:
    """``text`` with its lone lower-case letters written in upper case, where the question labels
    its options in lower case (length kept: offsets stay valid); else ``text`` as it is."""
    return _LONE_LOWER_LETTER.sub(lambda m: m.group(0).upper(), text) if options_lower_lettered(query) else text


def with_upper_labels(query: str) -> str:
    """The question with its lower-case option labels in upper case ("a: …" -> "A: …"), where it
    labels its options in lower case only."""
    if not options_lower_lettered(query):
        return query
    return _LOWER_LABEL.sub(lambda m: m.group(1) + m.group(2).upper(), query)


_OPTION_TEXT = re.compile(
    r"(?:^|(?<=[\s(（]))" + _LETTER_MARK + r"\s*(.+?)(?=\s+[(（]?[A-H](?:\s*[.．、:：)）]|[ \t]+[\u4e00-\u9fff])|\n|$)",
    re.MULTILINE,
)


def listed_option_texts(query: str) -> dict[str, str]:
    """The options a question lists, letter -> text (``A. 13%`` -> ``{"A": "13%"}``); the
    first listing of a letter wins (an instruction such as "输出字母（A、B、C或D）" comes
    after the options)."""
    found: dict[str, str] = {}
    matches = list(_OPTION_TEXT.finditer(query or ""))
    bracketed = [m for m in matches if query[m.start(1) - 1 : m.start(1)] in ("(", "（")]
    if len({m.group(1) for m in bracketed}) >= 2:
        matches = bracketed  # "(A) … (B) …": a bare "B." in the stem ("… material B. Which …") is no label
    for m in matches:
        text = m.group(2).strip().rstrip("；;。")
        if text and m.group(1) not in found:
            found[m.group(1)] = text
    return found


#: Punctuation that ends a clause: letters after it may open the next one ("ABCD，E不属于……").
_CLAUSE_GAP = re.compile(r"[，,;；。.\n]")
#: Blanks, emphasis, quotes, closing brackets (a LaTeX group's and display maths' too: "\boxed{A, D}$")
#: after letters: no text of a clause.
_MARKUP = " \t*_`'\"”’)）】]}$"


def _groups(text: str, letters: str) -> list[tuple[int, int, frozenset[str]]]:
    """Answer groups (see :func:`_joined_groups`), split at the first end of a clause when
    the letters after it are what the next clause is about ("答案：ABCE，D属于计算错误" is
    ABCE, then D; "答案：AC, B, D and E are not included" is AC, then BDE): the group's last
    letters are followed by words, and not by a verdict that they are right ("A，B，D项正确")."""
    out: list[tuple[int, int, frozenset[str]]] = []
    for _start, _end, parts in _joined_groups(text, letters):
        tail = text[parts[-1][1] :].lstrip(_MARKUP)
        own_clause = not tail or _CLAUSE_GAP.match(tail) or _POSITIVE.match(text, parts[-1][1])
        split = next((k for k in range(1, len(parts)) if not own_clause
                      and _CLAUSE_GAP.search(text, parts[k - 1][1], parts[k][0])), None)  # fmt: skip
        for chunk in ((parts,) if split is None else (parts[:split], parts[split:])):
            out.append((chunk[0][0], chunk[-1][1], frozenset().union(*(p for _s, _e, p in chunk))))
    return out


def _joined_groups(text: str, letters: str) -> list[tuple[int, int, list[tuple[int, int, set[str]]]]]:
    """Answer groups as (start, end, parts), in order, each part the letters of a run of
    letters joined without clause punctuation; rejected groups are kept (the caller decides)."""
    groups: list[tuple[int, int, list[tuple[int, int, set[str]]]]] = []
    parts: list[tuple[int, int, set[str]]] = []

    def close() -> None:
        if parts:
            groups.append((parts[0][0], parts[-1][1], parts))

    for m in _RUN.finditer(text):
        run = m.group(0)
        if run.lower() in ("and", "or") and parts:
            continue  # a connective inside a group: "A, C and E"
        if not all(c in letters for c in run):
            close()
            parts = []
            continue
        previous_end = parts[-1][1] if parts else -1
        if parts and _SEPARATORS.fullmatch(text, previous_end, m.start()):
            if _CLAUSE_GAP.search(text, previous_end, m.start()):
                parts.append((m.start(), m.end(), set(run)))
            else:
                start, _end, letters_so_far = parts[-1]
                parts[-1] = (start, m.end(), letters_so_far | set(run))
        else:
            close()
            parts = [(m.start(), m.end(), set(run))]
    close()
    return groups


def _rejected(text: str, start: int, end: int) -> bool:
    return bool(_NEGATIVE.match(text, end)) or bool(_EXCLUDED_BEFORE.search(text[max(0, start - 8) : start]))


_RANGE = re.compile(r"(?<![A-Za-z])[A-Z]\s*(?:[–—~～]|-|到|至)\s*[A-Z](?![A-Za-z])")


def _prepare(text: str) -> str:
    """Asides and ranges ("A–E" describes the options, it answers nothing) removed."""
    return _AND.sub("和", _RANGE.sub(" ", _ASIDE.sub(" ", text)))


#: A statement that announces what its next lines give: its marker closes on a colon.
_ANNOUNCES = re.compile(r"[:：][ \t*]*\n")
#: An option's label in a statement, where its text may follow: ``(C)``, ``C.``, ``C)``.
_STATED_LABEL = re.compile(r"[(（]([A-H])[)）]|(?<![A-Za-z])([A-H])[.．、:：)）]")
#: What ends an option's text written in a statement: the line or the sentence.
_STATED_TEXT_END = re.compile(r"[。\n]")
#: Connectives and punctuation between one option's text and the next label.
_STATED_JOIN = re.compile(r"(?:[\s、,，;；]|和|与|及|以及|(?i:and)(?![A-Za-z]))*$")


def _without_option_texts(body: str, options: dict[str, str]) -> str:
    """``body`` with each option's own text taken out where it is written after the option's
    label ("最终答案：(C) 容器底部的切向应力随u₀增加 和 (D) 板上的切向应力与粘度线性变化" reads as
    "(C) 和 (D)"): the text names the option the label names, and the labels then stand
    together as one answer instead of the first label alone."""
    if not options:
        return body
    labels = list(_STATED_LABEL.finditer(body))
    pieces: list[str] = []
    kept = 0
    for k, label in enumerate(labels):
        if label.start() < kept:
            continue  # a letter inside the option text just taken out ("(A) … greater than B.")
        letter = label.group(1) or label.group(2)
        own = comparison_key(options.get(letter, ""))
        whole = whole_option_text(body, label.end(), options.get(letter, ""), own)
        if whole:
            pieces.append(body[kept : label.end()])
            kept = whole
            continue
        stop = labels[k + 1].start() if k + 1 < len(labels) else len(body)
        end_of_line = _STATED_TEXT_END.search(body, label.end(), stop)
        stop = end_of_line.start() if end_of_line else stop
        written = body[label.end() : stop]
        joins = _STATED_JOIN.search(written)
        written = written[: joins.start()] if joins else written
        key = comparison_key(written)
        if own and key and (key == own or (own in key and len(key) < len(own) + 4) or gram_share(key, own) >= _RESTATED):
            pieces.append(body[kept : label.end()])
            kept = label.end() + len(written)
    pieces.append(body[kept:])
    return _without_texts_before_labels(" ".join(pieces), options)


#: Where the text of an option written before its bracketed label may begin: a clause mark, a
#: connective, the end of the label before it.
_TEXT_BEFORE_START = re.compile(r"[、，,。:：;；\n]|[)）]|和|与|及|と|(?i:\band\b)")
#: An option's label in brackets: "（a）", "(C)".
_BRACKETED_LABEL = re.compile(r"[(（]([A-H])[)）]")


def _without_texts_before_labels(body: str, options: dict[str, str]) -> str:
    """``body`` with each option's text taken out where it is written before its label in
    brackets ("胸腺腫（a）と心膜嚢胞（c）が適切" reads as "（a）と（c）が適切")."""
    out = body
    for label in reversed(list(_BRACKETED_LABEL.finditer(body))):
        own = comparison_key(options.get(label.group(1), ""))
        starts = [m.end() for m in _TEXT_BEFORE_START.finditer(body, 0, label.start())]
        begin = starts[-1] if starts else 0
        key = comparison_key(body[begin : label.start()])
        if own and key and (key == own or gram_share(key, own) >= _RESTATED):
            out = out[:begin] + " " + out[label.start() :]
    return out


#: One option's verdict in a statement that judges every option: "A) False", "(C) True", "B：正确".
_STATED_VERDICT = re.compile(
    r"(?<![A-Za-z])[(（]?([A-H])[)）.．:：]?[ \t]*[:：-]?[ \t]*"
    r"(?:(?i:(true|correct|right)|(false|incorrect|wrong))(?![A-Za-z])|(正确|对|صحيحة?|सही)|(不正确|错误|错|خاطئة?|غير\s+صحيحة?|गलत))"
)
_VERDICT_JOIN = re.compile(r"[\s,，;；、.。]*")


def _stated_verdicts(body: str, letters: str) -> frozenset[str] | None:
    """The options a statement calls right when it gives a verdict on each in turn ("Final
    Answer: A) False, B) False, C) True, D) False" is C), at least two verdicts, one after
    the other from the statement's head."""
    chosen: set[str] = set()
    at, judged = 0, 0
    for m in _STATED_VERDICT.finditer(body):
        gap = body[at : m.start()]
        if not (_VERDICT_JOIN.fullmatch(gap) or (judged == 0 and len(gap) <= _MARKER_GAP)):
            break
        if m.group(1) not in letters:
            return None
        judged += 1
        if m.group(2) or m.group(4):
            chosen.add(m.group(1))
        at = m.end()
    return frozenset(chosen) if judged >= 2 and chosen else None


def _read_statement(statement: Statement, view: LettersView) -> frozenset[str] | None:
    """The letters ``statement`` gives: a verdict on each option, which may run over the lines
    after its marker ("最终答案：\n(A) 错误\n(B) 正确"), or the letters its text names."""
    rest = statement.text if statement.kind == "boxed" or statement.body_end is not None else (
        statement.source[statement.body_start :])
    return _stated_verdicts(rest, view.allowed) or _letter_items(rest, view.allowed) or _statement_letters(
        statement.text, view.allowed, view.listed, statement.kind, view.options)


#: A marker that closes its line ("The correct answer is:"), and the list of option letters, an
#: item a line, that it announces ("- A\n- B\n- D").
_ANNOUNCED_ITEMS = re.compile(r"[ \t*]*[:：][ \t*]*\n\s*((?:[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]*\**[(（\[]?[A-J][)）\]]?\**[.．]?[ \t]*(?:\n|$)\s*){2,})")
_LETTER_ITEM = re.compile(r"[A-J]")


def _letter_items(rest: str, allowed: str) -> frozenset[str] | None:
    """The letters of the list a statement announces, an item a line ("is:\n\n- A\n- B"), or None."""
    announced = _ANNOUNCED_ITEMS.match(rest)
    if announced is None:
        return None
    found = frozenset(_LETTER_ITEM.findall(announced.group(1)))
    return found if found <= set(allowed) else None


def _statement_letters(
    body: str, letters: str, listed: str, kind: str, options: dict[str, str] | None = None
) -> frozenset[str] | None:
    body = _prepare(_without_option_texts(body, options or {}))
    if kind == "correction":
        picks = list(_CORRECTION_PICK.finditer(body))
        if not picks:
            return None
        body = body[picks[-1].end() :]
    head = body[:_MARKER_GAP + 8]
    if _ALL_OPTIONS.search(head) and not re.search(r"不|错", head):
        return frozenset(listed)
    for start, end, group in _groups(body, letters):
        gap = body[:start]
        if len(gap) > _MARKER_GAP or "。" in gap:
            break
        if not _rejected(body, start, end):
            return group
    # lower case right after the marker: "答案：abd", "answer: a, c"
    lower = re.match(r"^[\s:：是为*]*([a-z](?:[\s、,，和与及/]*[a-z])*)(?![A-Za-z])", body)
    if lower:
        found = frozenset(c.upper() for c in lower.group(1) if c.isalpha())
        if found <= set(letters):
            return found
    return None


#: The predicate a question asks its options to satisfy ("下列各项中，属于综合所得的有"), and
#: whether it asks for the ones that do not ("不属于……的有").
_ASKS_BELONG = re.compile(r"(不)?属于([^的？?（(，,。\s]{2,16})")
_FIRST_OPTION = re.compile(r"\n\s*[(（]?A\s*[.．、:：)）]")
#: The predicate said of an option or a group of them ("——属于", "A、C属于……", "都不属于……").
_SAYS_BELONGS = re.compile(r"(不)?属于([^，,。；;！!？?\n]{0,8})")
_GROUP_BELONGS = re.compile(r"\s*(?:项|选项)?\s*(?:的说法)?\s*(?:均|都|也)?\s*(?=(?:不)?属于)")


def _asked_belonging(query: str) -> tuple[bool, str] | None:
    """(True, what) when the question asks which options belong to ``what`` (``属于综合所得的有``),
    (False, what) when it asks which do not (``不属于……的有``); None when it asks neither."""
    m = _ASKS_BELONG.search(_FIRST_OPTION.split(query, maxsplit=1)[0])  # in the stem
    return None if m is None else (m.group(1) is None, m.group(2))


def _belonging_verdict(text: str, at: int, asked: tuple[bool, str] | None) -> bool | None:
    """The verdict of the question's own predicate said at ``text[at:]`` (the first
    ``属于``/``不属于`` there): whether the option is one the question asks for; None when the
    predicate is not said there or is said of something else (``D属于紧急避险``)."""
    if asked is None:
        return None
    m = _SAYS_BELONGS.search(text, at)
    if m is None:
        return None
    said = m.group(2).strip(" *")
    if said and not any(said[i : i + 2] in asked[1] for i in range(len(said) - 1)):
        return None  # it says the option belongs to another thing
    return (m.group(1) is None) == asked[0]


def _verdicts(text: str, letters: str, query: str = "") -> frozenset[str] | None:
    """The options judged correct, per option line or inline (``A、C项说法正确``), or by the
    question's own predicate (``A. 工资、薪金所得——属于``, for a question asking which belong)."""
    positive: set[str] = set()
    negative: set[str] = set()
    prepared = _prepare(text)
    asked = _asked_belonging(query)
    for start, end, group in _groups(prepared, letters):
        if _rejected(prepared, start, end):
            negative |= group
        elif _POSITIVE.match(prepared, end):
            positive |= group
        elif (said := _GROUP_BELONGS.match(prepared, end)) and (verdict := _belonging_verdict(prepared, said.end(), asked)) is not None:
            (positive if verdict else negative).update(group)
    judged = positive | negative
    # A line about one option ("A项：……，说法正确"): its last verdict word judges it.
    for line in text.split("\n"):
        m = _VERDICT_LINE.match(line)
        if m and m.group("letter") in letters and m.group("letter") not in judged:
            rest = line[m.end() :]
            last_pos = max((x.end() for x in _LINE_POSITIVE.finditer(rest)), default=-1)
            last_neg = max((x.end() for x in _LINE_NEGATIVE.finditer(rest)), default=-1)
            if last_pos > last_neg:
                positive.add(m.group("letter"))
            elif last_neg >= 0:
                negative.add(m.group("letter"))
            else:
                verdict = _belonging_verdict(rest, 0, asked)
                if verdict is not None:
                    (positive if verdict else negative).add(m.group("letter"))
    chosen = positive - negative
    return frozenset(chosen) if chosen else None


#: Two sets of letters offered as alternatives: no one answer.
_SET_HEDGE = re.compile(
    r"(?<![A-Za-z])([A-H]{1,8})(?![A-Za-z])\s*[，,]?\s*(?:也可能是|也可能为|或者是|或者|或是|还是)\s*([A-H]{1,8})(?![A-Za-z])"
)
_ANSWER_LEAD = re.compile(r"^(?:正确)?(?:答案|选项|答)(?:是|为|应为)?\s*[:：]\s*")
#: Where an option written back ends on a line that writes several ("A. 13%；B. 9%").
_ITEM_END = re.compile(r"\n|[；;](?=\s*[(（]?[A-H]\s*[.．、:：)）])")
#: Share of an option line's 3-grams in its option's text for it to write that option back.
_RESTATED = 0.6


def _option_line_letters(text: str, query: str, allowed: str, start: int = 0) -> frozenset[str] | None:
    """Two or more lines from offset ``start`` on, one after the other, that are options of
    the question written back (``A. 犯罪人死亡``): the options they select. The first such block
    counts; an option written back as the heading of its own analysis (a line of reasons after
    each) is no answer. A question that labels its options in lower case (``a: …``) is read
    with them in upper case, as the output is."""
    listed = listed_option_texts(with_upper_labels(query))
    chosen: set[str] = set()
    for line in _ITEM_END.split(text[text.rfind("\n", 0, start) + 1 :]):
        m = _OPTION_TEXT.match(_ANSWER_LEAD.sub("", line.strip().lstrip("*#>-] ")).lstrip("(（"))
        own = comparison_key(listed.get(m.group(1), "")) if m else ""
        if m and m.group(1) in allowed and own:
            line_key = comparison_key(m.group(2))
            # the option's text, not the option and its reasons on one line
            if (own in line_key and len(line_key) <= 2 * len(own) + 8) or gram_share(line_key, own) >= _RESTATED:
                chosen.add(m.group(1))
                continue
        if line.strip():
            if len(chosen) >= 2:
                break
            chosen = set()
    return frozenset(chosen) if len(chosen) >= 2 else None


_LETTER_LIST = r"([A-H](?:\s*(?:项|选项)?\s*[、,，和与及]?\s*[A-H])*)"
_ALL_BUT = re.compile(
    r"除(?:了)?\s*(?:选项)?\s*" + _LETTER_LIST + r"\s*(?:项|选项)?\s*(?:以外|之外|外)[，,]?\s*"
    r"(?:其余|其他|其它|余下)?(?:选项|各项)?\s*(?:都|均|全)"
    r"|(?:" + _LETTER_LIST + r"\s*(?:项|选项)?\s*(?:的)?(?:说法|表述)?\s*(?:是)?\s*(?:错误|不正确|不对|不属于|不是)[的]?"
    r"|(?:错误|不正确|不对)的(?:是|为|有)\s*(?:选项)?\s*" + _LETTER_LIST + r"\s*(?:项|选项)?)"
    r"[，,。；;]\s*(?:其余|其他|其它|余下)(?:的)?(?:选项|各项|说法)?\s*(?:都|均|全)?\s*(?:正确|对|属于|是|符合)"
)
_ALL_SAID = re.compile(
    r"^[\s*#>]*(?:答案\s*[:：]\s*)?(?:全选|以上(?:选项)?(?:都|均|全部|全都)?(?:对|正确|是正确的|符合|属于)|以上(?:选项)?(?:都|均|全都)(?:是)?|"
    r"(?:所有|全部)(?:选项)?(?:都|均)?(?:正确|对|属于)|以上全部|[二三四五六七八两]项(?:都|均)(?:正确|属于|对))[。.!！\s*]*$"
)


def _all_or_all_but(text: str, listed: str) -> frozenset[str] | None:
    """Every option the question lists (``以上都对``, ``全选``, ``所有选项都正确``), or every one but
    those named (``除E以外都是``, ``C项说法错误，其余说法均正确``), when that is the whole answer."""
    body = text.strip()
    if len(body) > 40:
        return None
    if _ALL_SAID.match(body):
        return frozenset(listed)
    m = _ALL_BUT.search(body)
    if m is None:
        return None
    excluded = set(re.findall(r"[A-H]", next((g for g in m.groups() if g), "")))
    rest = frozenset(c for c in listed if c not in excluded)
    return rest if rest and excluded else None


#: What may stand between option texts that answer on their own: connectives (the
#: punctuation is gone from a comparison key).
_TEXT_JOINS = re.compile(r"(?:和|与|及|以及|还有)*")


def _written_options(body: str, options: dict[str, str], allowed: str) -> frozenset[str] | None:
    """The options ``body`` is nothing but the texts of (after an answer lead such as
    ``答案：``), joined by punctuation or connectives; None when it holds anything else."""
    rest = comparison_key(_ANSWER_LEAD.sub("", body.strip().lstrip("*#>-] :：")))
    keys = sorted(((comparison_key(t), x) for x, t in options.items() if x in allowed), key=lambda kx: -len(kx[0]))
    found: set[str] = set()
    for key, letter in keys:
        if key and key in rest:
            found.add(letter)
            rest = rest.replace(key, " ")
    return frozenset(found) if found and all(_TEXT_JOINS.fullmatch(p) for p in rest.split(" ")) else None


def _lead_letters(sentence: str, allowed: str, query: str = "") -> frozenset[str] | None:
    """The letters the lead sentence opens with (``A、C选项属于……``, ``A B C 都是……``), when
    they are not rejected: an answer given first and explained after. A verdict that they are
    false ("(a) Faux, …") rejects them too, unless the question asks for the false one."""
    prepared = _prepare(sentence)
    for start, end, group in _groups(prepared, allowed):
        if start > 4 or _rejected(prepared, start, end):
            return None
        if _NEGATIVE_WORD.match(prepared, end) and not _ASKS_FALSE.search(query):
            return None
        return group
    return None


#: A question that asks for the false or incorrect statement ("Laquelle est fausse ?", "Which is NOT
#: correct?", "下列说法错误的是").
_ASKS_FALSE = re.compile(
    r"(?i:(?<![A-Za-zÀ-ÿ])(?:false|incorrect|wrong|not\s+(?:correct|true)|except|faux|fausses?|inexactes?|falsch\w*"
    r"|incorrect[oa]s?|fals[oa]s?)(?![A-Za-zÀ-ÿ]))|错误|不正确|不属于|不符合"
)


def conclusion_tail(text: str) -> str:
    """The last line of ``text`` (where ``以上都对`` after per-option verdicts stands)."""
    lines = [line for line in text.split("\n") if line.strip()]
    return lines[-1] if lines else ""


# ---------------------------------------------------------------- the rules


_NO_ANSWER = Reading(None, NO_ANSWER, rule=NO_ANSWER_RULE.name)


class LettersView:
    """One output as the letters rules read it, built once: cleaned with LaTeX made plain,
    its own answer, the options the question lists, and (on first use) its statements."""

    def __init__(self, text: str, letters: str, query: str, raw: str | None = None) -> None:
        #: The raw output (TaxBen's rules read it).
        self.raw = text if raw is None else raw
        self.query = query
        self.allowed = "".join(sorted(set(letters.upper())))
        labelled = with_upper_labels(query)  # "a: …" options are A, B, … (the answer "c,d" is CD)
        self.listed = listed_option_letters(labelled, self.allowed)
        self.options = listed_option_texts(labelled)
        self.full = numbers_as_letters(with_upper_letters(strip_latex(clean_prediction(text)), query), query)
        self.own: OwnAnswer = own_answer(
            self.full, query,
            options=[self.options[x] for x in sorted(self.options) if x in self.allowed], several=True,
        )
        self.cleaned = self.own.text
        self.empty = not self.cleaned.strip() or not self.allowed

    @cached_property
    def statements(self) -> list[Statement]:
        return answer_statements(self.cleaned, query=self.query)

    @cached_property
    def final(self) -> list[Statement]:
        return [st for st in self.statements if st.kind != "conclusion"]

    @cached_property
    def settled(self) -> tuple[Reading, str] | None:
        """What the final statements give and the rule of the statement that gave it (the
        reading itself is the options restated on the lines after ``答案：B. …`` when those
        are more)."""
        settled = settle_final(
            self.final, lambda st: _read_statement(st, self) or None, FINAL_RULES
        )
        if settled is None:
            return None
        reading, given_by = settled
        rule = reading.rule or ""
        if given_by is not None and isinstance(reading.value, frozenset):
            # "答案：B. …" and the options C and D on the next lines: the answer is all of them
            restated = _option_line_letters(self.cleaned, self.query, self.allowed, given_by.start)
            if restated and reading.value < restated:
                return Reading(restated, rule=RESTATED_RULE.name,
                               source=self.cleaned[given_by.start :]), rule
        return reading, rule

    @cached_property
    def verdicts(self) -> frozenset[str] | None:
        return _verdicts(self.cleaned, self.allowed, self.query)


LettersAttempt = Callable[[LettersView], Reading | None]


def _on_text(attempt: LettersAttempt) -> LettersAttempt:
    """An attempt that reads the own answer: it does not apply when there is none."""

    @wraps(attempt)
    def guarded(view: LettersView) -> Reading | None:
        return None if view.empty else attempt(view)

    return guarded


@COPY_OF_PROMPT_RULE.reads("letters")
def _copy_of_prompt(view: LettersView) -> Reading | None:
    failure = view.own.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure == COPY_OF_PROMPT else None


@ANOTHER_QUESTION_RULE.reads("letters")
def _another_question(view: LettersView) -> Reading | None:
    failure = view.own.failure
    return Reading(None, failure, rule=veto_of(failure)) if failure else None


CUT_OFF_RULE = register_rule(
    "veto.cut-off-in-options", kinds=("letters",), tier=0, confidence="high",
    description="The output goes through the options in order, a line each, and stops inside the next one's line: "
                "it was cut off before it chose.",
    examples=(Example("letters", "A. 交通运输服务适用9%税率。\nB. 不动产租", None),),
    leaves_alone=(Example("letters", "A. 交通运输服务\nB. 不动产租赁服务\nD. 建筑服务", "ABD"),
                  Example("letters", "A. 正确\nB. 正确\nC. 错误，适用13%", "AB")),
)


@CUT_OFF_RULE.reads("letters")
def _cut_off(view: LettersView) -> Reading | None:
    options = [view.options[x] for x in sorted(view.options) if x in view.allowed]
    return Reading(None, NO_ANSWER, rule=CUT_OFF_RULE.name) if list_cut_off(view.full, options, walked=True) else None


@HEDGE_RULE.reads("letters")
@_on_text
def _hedge(view: LettersView) -> Reading | None:
    hedge = _SET_HEDGE.search(view.cleaned)
    if hedge and set(hedge.group(1)) != set(hedge.group(2)):  # "我认为是ABC，也可能是ABCD"
        return Reading(None, HEDGED, rule=HEDGE_RULE.name)
    return None


@JSON_ANSWER_RULE.reads("letters")
@_on_text
def _json_answer(view: LettersView) -> Reading | None:
    found, value = answer_value(own_json_values(view.full, view.query), LETTER_ANSWER_KEYS, view.query)
    if not found:
        return None
    value_text = clean_prediction(answer_text(value))
    from_json = _groups(value_text, view.allowed)
    if not from_json:
        return None
    return Reading(frozenset().union(*(g for _, _, g in from_json)), rule=JSON_ANSWER_RULE.name, source=value_text)


def _settled_by(rule: str) -> LettersAttempt:
    """The attempt of a final-statement rule: what the final statements settle on, when
    settled by ``rule``."""

    @_on_text
    def attempt(view: LettersView) -> Reading | None:
        settled = view.settled
        return settled[0] if settled is not None and settled[1] == rule else None

    return attempt


SELF_CORRECTION_RULE.reads("letters")(_settled_by(SELF_CORRECTION_RULE.name))
ANSWER_STATEMENT_RULE.reads("letters")(_settled_by(ANSWER_STATEMENT_RULE.name))
BOXED_RULE.reads("letters")(_settled_by(BOXED_RULE.name))
SEVERAL_ANSWERS_RULE.reads("letters")(_settled_by(SEVERAL_ANSWERS_RULE.name))


@NOT_AN_OPTION_RULE.reads("letters")
@_on_text
def _not_an_option(view: LettersView) -> Reading | None:
    # The latest box holds no option ("\\boxed{无直接适用选项}"): the model's answer names none of them.
    boxes = [st for st in view.final if st.kind == "boxed"]
    if view.settled is None and boxes and boxes[0].text.strip():
        return Reading(None, NOT_AN_OPTION, rule=NOT_AN_OPTION_RULE.name)
    return None

ALL_OR_ALL_BUT_RULE = register_rule(
    "letters.all-or-all-but", kinds=("letters",), tier=3, confidence="high",
    description="All the options, or all but some ('以上都对', '全选', '除E以外都是').",
    examples=(Example("letters", "除E以外都是", "ABCD"),),
)


@ALL_OR_ALL_BUT_RULE.reads("letters")
@_on_text
def _all_or_all_but_attempt(view: LettersView) -> Reading | None:
    # All of them, or all but some ("以上都对", "全选", "除E以外都是", "C项错误，其余均正确").
    whole = _all_or_all_but(view.cleaned, view.listed)
    return Reading(whole, rule=ALL_OR_ALL_BUT_RULE.name, source=view.cleaned) if whole else None


ALL_CONCLUDED_RULE = register_rule(
    "letters.all-options-concluded", kinds=("letters",), tier=3, confidence="high",
    description="Verdicts on the options closed by a conclusion that all are right ('以上选项均正确').",
    examples=(Example("letters", "A正确。B正确。C正确。D正确。E正确。\n综上，以上选项均正确。", "ABCDE"),),
)


@ALL_CONCLUDED_RULE.reads("letters")
@_on_text
def _all_concluded(view: LettersView) -> Reading | None:
    if view.verdicts and _ALL_OPTIONS.search(conclusion_tail(view.cleaned)):
        return Reading(frozenset(view.listed), rule=ALL_CONCLUDED_RULE.name, source=conclusion_tail(view.cleaned))
    return None


OPTION_VERDICTS_RULE = register_rule(
    "letters.option-verdicts", kinds=("letters",), tier=3, confidence="high",
    description="A verdict on each option ('A正确；B正确；C错误；…'): the ones judged right.",
    examples=(Example("letters", "A. 正确\nB. 正确\nC. 错误，适用13%\nD. 正确\nE. 错误，适用6%", "ABD"),),
)


@OPTION_VERDICTS_RULE.reads("letters")
@_on_text
def _option_verdicts(view: LettersView) -> Reading | None:
    if cut_by_limit(view.cleaned):
        return None  # the verdicts so far of an output cut off before it judged every option
    verdicts = view.verdicts
    return Reading(verdicts, rule=OPTION_VERDICTS_RULE.name, source=view.cleaned) if verdicts else None


@NONE_CORRECT_RULE.reads("letters")
@_on_text
def _none_correct(view: LettersView) -> Reading | None:
    # the output's last line, or its final statement, says no option is right and names none
    lines = [line for line in view.cleaned.split("\n") if line.strip()]
    decisive = view.final[0].text if view.final else (lines[-1] if lines else "")
    if NO_OPTION_CORRECT.search(decisive) and not _groups(_prepare(decisive), view.allowed):
        return Reading(None, NONE_CORRECT, rule=NONE_CORRECT_RULE.name)
    return None


@CONCLUSION_RULE.reads("letters")
@_on_text
def _conclusion(view: LettersView) -> Reading | None:
    for statement in view.statements:
        if statement.kind == "conclusion":
            picked = _read_statement(statement, view)
            if picked:
                # "正确的陈述是：" and the options it announces written back on the lines after it
                restated = _option_line_letters(view.cleaned, view.query, view.allowed, statement.start)
                line_end = view.cleaned.find("\n", statement.start)
                announces = line_end > 0 and _ANNOUNCES.search(view.cleaned, statement.start, line_end + 1)
                if restated and picked < restated and announces:
                    return Reading(restated, rule=CONCLUSION_RULE.name, source=view.cleaned[statement.start :])
                return Reading(picked, rule=CONCLUSION_RULE.name, source=statement.full_text)
    return None


RESTATED_RULE = register_rule(
    "letters.restated-option-lines", kinds=("letters",), tier=3, confidence="high",
    description="The options written back on lines of their own, as the answer (at least two, by letter and text).",
    examples=(Example("letters", "A. 交通运输服务\nB. 不动产租赁服务\nD. 建筑服务", "ABD"),),
)


@RESTATED_RULE.reads("letters")
@_on_text
def _restated(view: LettersView) -> Reading | None:
    restated = _option_line_letters(view.cleaned, view.query, view.allowed)
    return Reading(restated, rule=RESTATED_RULE.name, source=view.cleaned) if restated else None


LEAD_LETTERS_RULE = register_rule(
    "letters.lead-sentence", kinds=("letters",), tier=5, confidence="high",
    description="The first sentence gives the letters before the reasons ('ABD。交通运输……').",
    examples=(Example("letters", "ABD。交通运输服务、不动产租赁服务和建筑服务适用9%税率，有形动产租赁适用13%。", "ABD"),),
)


@LEAD_LETTERS_RULE.reads("letters")
@_on_text
def _lead(view: LettersView) -> Reading | None:
    lead_text = lead_sentence(view.cleaned)
    lead = _lead_letters(lead_text, view.allowed, view.query)
    return Reading(lead, rule=LEAD_LETTERS_RULE.name, source=lead_text) if lead else None


LAST_GROUP_RULE = register_rule(
    "letters.last-group", kinds=("letters",), tier=6, confidence="low",
    description="No statement: the latest group of option letters on a line, not ruled out.",
    examples=(Example("letters", "交通运输服务、不动产租赁服务、建筑服务适用9%，对应 A、B、D", "ABD"),),
)


@LAST_GROUP_RULE.reads("letters")
@_on_text
def _last_group(view: LettersView) -> Reading | None:
    for line in lines_last_first(view.cleaned):
        prepared = _prepare(line)
        kept = [g for s, e, g in _groups(prepared, view.allowed) if not _rejected(prepared, s, e)]
        if kept:
            value = kept[-1] if len(kept) == 1 else frozenset().union(*kept)
            return Reading(value, rule=LAST_GROUP_RULE.name, source=line)
    return None


NAMED_BY_TEXT_RULE = register_rule(
    "letters.named-by-text", kinds=("letters",), tier=6, confidence="low",
    description="No letter at all: the options named by their texts alone.",
    examples=(Example("letters", "交通运输服务、不动产租赁服务、建筑服务", "ABD"),),
)


@NAMED_BY_TEXT_RULE.reads("letters")
@_on_text
def _named_by_text(view: LettersView) -> Reading | None:
    # No letter anywhere: the options named by their texts alone ("工资、薪金所得、稿酬所得"),
    # in an answer statement or on a line of their own.
    for body in [st.text for st in view.final] + list(lines_last_first(view.cleaned)):
        named = _written_options(body, view.options, view.allowed)
        if named:
            return Reading(named, rule=NAMED_BY_TEXT_RULE.name, source=body)
    return None


@NO_ANSWER_RULE.reads("letters")
def _no_answer(view: LettersView) -> Reading | None:
    return _NO_ANSWER


#: The order in which the letters reader tries its rules (the default chain set, ``taxpraben``): its
#: rules' names, each a rule declared in this module or in :mod:`~taxpraben.parsing.readers.shared`.
LETTERS_CHAIN: tuple[str, ...] = (
    "veto.copy-of-prompt",
    "veto.another-question",
    "veto.cut-off-in-options",
    "veto.hedge",
    "json.answer-field",
    "final.self-correction",
    "final.answer-statement",
    "final.boxed",
    "veto.several-answers",
    "veto.not-an-option",
    "letters.all-or-all-but",
    "letters.all-options-concluded",
    "letters.option-verdicts",
    "veto.none-correct",
    "conclusion.statement",
    "letters.restated-option-lines",
    "letters.lead-sentence",
    "letters.last-group",
    "letters.named-by-text",
    "veto.no-answer",
)


def letters_chain(names: tuple[str, ...] | None = None) -> Chain[LettersView]:
    """The letters chain: ``names`` in order (default: the ``letters`` chain of
    :data:`LETTERS_CHAIN`), each rule's letters attempt."""
    return chain_for("letters", LETTERS_CHAIN if names is None else names)


def read_letters(text: str, letters: str, query: str, chain: tuple[str, ...] | None = None,
                 raw: str | None = None) -> Reading:
    """The option letters an output answers, read by the letters chain (``raw``: the output
    before cleaning, when ``text`` is not it)."""
    return letters_chain(chain).run(LettersView(text, letters, query, raw), _NO_ANSWER)


def extract_letter_set(
    text: str, letters: str = "ABCDE", *, query: str = ""
) -> frozenset[str] | None:
    """The set of option letters an output answers, or None (rules in the module docstring).

    ``text`` is the raw output (cleaned here); ``letters`` the allowed option letters, upper
    case; ``query`` the question (what the output copies of it is not read; ``全选`` means
    the options it lists).
    """
    value = read_letter_set(text, letters, query=query).value
    return value if isinstance(value, frozenset) else None


def read_letter_set(
    text: str, letters: str = "ABCDE", *, query: str = "", chain: tuple[str, ...] | None = None,
    raw: str | None = None,
) -> Reading:
    """:func:`extract_letter_set` with the reason when no letter is read: the execution of
    the ``letters`` chain (``chain``: other rule names, in order;
    :mod:`taxpraben.parsing.readers.letters`)."""
    return read_letters(text, letters, query, chain, raw)

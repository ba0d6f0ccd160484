"""Where a derivation closes: whether the output reaches an answer at its end.

A model that never states its answer leaves only its derivation, and the fallback of the
number reader is the number the derivation closes on (``number.last-number``). A careful
grader takes that number only when the output does close on it:

- the number stands in the **closing sentence**: the last sentence of the output (split as
  :func:`~taxpraben.parsing.region.sentences` splits), trailing markup aside (``$$``, ``\\]``,
  a code fence, ``**``, ``</s>``). A closing sentence with no number (a remark, "This
  completes the proof.", "we cannot determine the exact period.", a list number ``4.``) says
  the derivation closed on something that is not a number;
- the closing sentence is **finished**: it does not end on an operator, an equals sign, an
  open bracket or a colon (``... = (2.9``, ``Adjusted bond value =``), on an operation it never
  evaluates (``18.0 + 1.2``), on an empty list item (``4.``) or inside a formula it opened
  (``$4``): an output cut off mid-derivation (the length limit reached) never reached its answer;
- the closing sentence does not **announce** the work still to do ("Now, let's proceed with the
  calculations.", "We need to calculate …"): the derivation stopped before its result;
- a long output (:data:`LONG` characters) that stops mid-sentence on a word was stopped by the
  length limit (:func:`cut_by_limit`): the derivation's last number is no answer there;
- an output that **loops** (the same sentence again and again to its end, the last copy cut
  short) closes where its first copy ends.

Pure functions on text; no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

from taxpraben.parsing.numbers import find_numbers
from taxpraben.parsing.region import LOOP_MIN, sentences, without_loop

__all__ = [
    "DECLINES_NUMBER", "LONG_DERIVATION", "LOOP_MIN", "NOTHING_DUE", "closes_on_number", "closing_sentence_start", "cut_in_a_number",
    "cut_off", "gives_no_last_number", "loops_in_steps", "stops_mid_sentence", "unfinished", "without_loop",
]

#: Markup that may close an output after its last sentence: display-math and code fences,
#: emphasis, end-of-sequence tokens, a LaTeX environment's end, an empty ``####``.
_TRAILING_MARKUP = re.compile(
    r"(?:\s|\$\$?|\\\]|\\\)|```|\*\*|__|</?s>?|<\|[^|>]*\|>|\\end\{[^}]*\}|\\\\|#{2,})+$"
)
#: What an unfinished sentence ends on: an operator, an equals sign, an open bracket, a colon,
#: a comma.
_OPEN_END = re.compile(r"(?:[=+\-−×÷*/^(\[{（【,，:：]|\\(?:times|cdot|div|frac|left|sqrt))\s*$")


#: A list item's label: "9. ", "(3) ", "- ".
_ITEM_LABEL = re.compile(r"^\s*(?:\(?\d{1,3}[.)、]|[-*•])\s*")


def loops_in_steps(text: str) -> bool:
    """The output ends in a list of steps that loops: its last :data:`LOOP_MIN` or more list items
    say the same thing under new numbers ("8. Jack spends 3 times longer than Jack.\n9. Jack
    spends 3 times longer than Jack."). The model degenerated before it reached a result; the
    looping step is no conclusion (a finished sentence said again without a label is
    :func:`without_loop`'s, which closes on its first copy)."""
    lines = [line for line in text.rstrip().split("\n") if line.strip()]
    if len(lines) < LOOP_MIN or not _ITEM_LABEL.match(lines[-1]):
        return False
    last = _ITEM_LABEL.sub("", lines[-1]).strip()
    repeats = 0
    for line in reversed(lines[:-1]):
        if not _ITEM_LABEL.match(line):
            break
        body = _ITEM_LABEL.sub("", line).strip()
        if not (body == last or body.startswith(last)) or not last:
            break
        last, repeats = body, repeats + 1
    return repeats + 1 >= LOOP_MIN


@lru_cache(maxsize=64)
def _closed_text(text: str) -> str:
    return _TRAILING_MARKUP.sub("", without_loop(text))


#: How much of an output's end its closing sentences are looked for in (from a line start).
_TAIL = 2000


def _tail_start(closed: str) -> int:
    """Where the last lines of ``closed`` begin: sentences end at line breaks, so the closing
    ones lie after the first line break of its last :data:`_TAIL` characters (the whole text
    when it is shorter or has no line break there)."""
    if len(closed) <= _TAIL:
        return 0
    cut = closed.find("\n", len(closed) - _TAIL)
    return 0 if cut < 0 else cut + 1


def _last_sentences(closed: str, n: int = 2) -> list[str]:
    return [s for s in sentences(closed[_tail_start(closed):]) if s.strip()][-n:]


#: An operation between numbers left unevaluated at the end ("… = 18.0 + 1.2", "80 + 80"): a sum,
#: a product or a difference (spaced, not a range "2023-2024"); a fraction "1/3" is a value.
_UNEVALUATED = re.compile(r"(?:^|[=:：]|\s)\s*[$¥]?\d[\d,]*(?:\.\d+)?(?:\s*(?:[+×*·]|\s[-−]\s|\sx\s)\s*[$¥]?\d[\d,]*(?:\.\d+)?)+\s*$")
#: A formula in $…$ (an equals sign, a power or a command inside).
_FORMULA = re.compile(r"\$[^$\n]*[=^\\][^$\n]*\$")
#: A list item opened and left empty at the end ("\n\n4."): the next step never written.
_EMPTY_ITEM = re.compile(r"\n[ \t]*(?:(?:\d{1,2}|[a-z])[.)、]|[*•])[ \t]*$")


#: A whole number the output was still writing when the length limit cut it ("9999…", "1000…0"):
#: 30 digits or more at its end, not the decimals of a repeating fraction ("5.3333…").
_DIGITS_TO_THE_LIMIT = re.compile(r"(?<![\d.])\d{30,}$")


def cut_in_a_number(text: str) -> bool:
    """The output ends inside a whole number of 30 digits or more: the model wrote digits until
    the length limit cut it, and no number was completed."""
    return _DIGITS_TO_THE_LIMIT.search(_closed_text(text)) is not None


def unfinished(text: str) -> bool:
    """The output stops mid-derivation: its closing sentence ends on an operator, an equals
    sign, an open bracket, a comma or a colon, on an operation between numbers it never
    evaluates ("18.0 + 1.2") or on an empty list item ("4."), or its last line leaves a bracket,
    a calculator note (``<<36-3=``) or an inline formula (``$``) open."""
    closed = _closed_text(text)
    last_line = closed[closed.rfind("\n") + 1 :]
    opened = last_line.count("(") + last_line.count("（") - last_line.count(")") - last_line.count("）") \
        + last_line.count("<<") - last_line.count(">>")  # a calculator note "<<66+42=108>>" left open
    # a formula opened on the last line of an output that writes its formulas in $…$ ("$4"); a
    # lone "$" elsewhere is a currency sign
    open_maths = (last_line.count("$") == 1 and last_line.lstrip().startswith("$") and _FORMULA.search(closed) is not None) \
        or last_line.count("\\(") > last_line.count("\\)")
    return _OPEN_END.search(closed) is not None or opened > 0 or open_maths \
        or _UNEVALUATED.search(last_line) is not None or _EMPTY_ITEM.search(closed) is not None


def closing_sentence_start(text: str) -> int:
    """The offset in ``text`` where its closing sentence starts (trailing markup aside)."""
    closed = _closed_text(text)
    start = _tail_start(closed)
    parts = [s for s in sentences(closed[start:]) if s.strip()]
    if not parts:
        return 0
    last = parts[-1]
    at = closed.rfind(last)
    return at if at >= 0 else 0


#: A list or step label at the start of a sentence ("Step 5:", "3.", "(2)"): no number of the derivation.
_LABEL = re.compile(r"^\s*(?:(?i:step)\s*\d+\s*[:：.]|\(?\d{1,2}[.)、]|第\s*\d+\s*步[:：]?)")
#: Where a finished sentence may end: sentence punctuation, a closing bracket or quote.
_FINISHED = re.compile(r"[.。!?！？;；…)）\]】」』\"”'’`*_|>]\s*$")
#: A closing sentence that declines a number: it cannot be determined, it is undefined, there
#: is no closed form or no real solution, a proof is complete.
DECLINES_NUMBER = re.compile(
    r"(?i:can(?:no|['’])t\s+(?:be\s+)?(?:determine|calculate|compute|find|solve|say)"
    r"|(?:is|are)\s+(?:undefined|indeterminate|not\s+defined|infinity|infinite)|(?:approaches|goes\s+to)\s+infinity"
    r"|(?:no|not\s+have\s+an?)\s+(?:simple\s+)?(?:closed[- ]form|real\s+solution|solution|numerical\s+(?:answer|value))"
    r"|not\s+possible\s+to\s+(?:determine|calculate|compute)|not\s+a\s+perfect|does\s+not\s+(?:exist|converge)"
    r"|(?:completes|concludes)\s+the\s+proof|insufficient\s+information|not\s+enough\s+information"
    # the material or the model lacks the figure: "the text doesn't provide …", "I don't have
    # (real-time) access to …", "I can't provide the answer", "is not provided in the context"
    r"|(?:does\s*n[o'’]t|do\s*n[o'’]t|did\s*n[o'’]t)\s+(?:provide|contain|include|mention|give|specify)"
    r"|(?:do\s*n[o'’]t|does\s*n[o'’]t)\s+have\s+(?:real-time\s+|direct\s+|the\s+)?access"
    r"|(?:can(?:no|['’])t|unable\s+to)\s+(?:provide|access|give|answer)"
    r"|(?:is|are)\s+not\s+(?:provided|included|available|given|mentioned)\s+in\s+the)"
)


def cut_off(text: str) -> bool:
    """The output stops mid-sentence: it ends on a word, not on sentence punctuation, and its
    closing sentence holds no number and does not say that nothing is due (a derivation cut by
    the length limit)."""
    closed = _closed_text(text)
    if not closed or _FINISHED.search(closed):
        return False
    closing = _LABEL.sub("", closed[closing_sentence_start(text):])
    return not find_numbers(closing) and not NOTHING_DUE.search(closing)


#: A conclusion: the sentence gives the result.
_CONCLUDES = re.compile(
    r"(?i:(?<![a-z])(?:therefore|thus|hence|so|in\s+conclusion|(?:the\s+)?(?:final\s+)?answer\s+is)(?![a-z]))"
    r"|因此|所以|故|综上|答案|最终|结论"
)
#: "Nothing is due": a closing sentence that says so closes on zero ("税额为零", "无需缴纳",
#: "免征").
NOTHING_DUE = re.compile(
    r"(?:税额|税款|应纳税额|应缴税额|应交税额|应补税额|金额|结果)?\s*(?:为|是)?\s*(?:零|〇)(?![一二三四五六七八九十百千万点])"
    r"|(?:无需|无须|不需要?|不用|不必)(?:再)?(?:缴纳|缴税|纳税|交税|补缴|补税|申报缴纳)|免(?:征|予征收|缴)"
)
#: A conclusion that points back at a result already written: "见表中最后一行", "see the table above".
_REFERS_BACK = re.compile(r"见.{0,6}表|如上|上表|表中|上述|(?i:see\s+(?:the\s+)?(?:table|above)|as\s+(?:shown|computed|calculated)\s+above)")


#: An output at least this long that stops mid-sentence was stopped by the length limit.
LONG = 600
#: How long a derivation is before a number drawn in it, with no statement of the answer, is one of
#: many it drew on the way (characters; :mod:`taxpraben.parsing.doubt`, ``veto.unfinished``).
LONG_DERIVATION = 1500


def cut_by_limit(text: str) -> bool:
    """A long output that stops mid-sentence, on a word rather than on a result
    ("... we can use the CRT to solve this system", "... = £337" aside): the length limit cut
    the derivation before it reached its answer. Its last number is no answer."""
    closed = _closed_text(text)
    return len(closed) >= LONG and not _FINISHED.search(closed) and not re.search(r"[\d%]\s*$", closed) \
        and not _RESULT_LINE_END.search(closed)


#: A last line that gives its result and its unit, with no full stop ("FY2018 DPO for Walmart: 72.8 days").
_RESULT_LINE_END = re.compile(r"(?:[:：=＝]|\b(?:is|are|was|were)\b)\s*[$¥€£]?\s*-?\d[\d,]*(?:\.\d+)?\s*%?\s*[A-Za-z\u4e00-\u9fff]{1,12}\s*$")


#: A closing sentence that announces work still to do ("Now, let's proceed with the calculations.",
#: "We need to calculate the standard deviation …", "We'll substitute 3P", "接下来我们计算税额"): the
#: derivation stopped before its result.
_ANNOUNCES = re.compile(
    r"^\W*(?:(?i:now|next|then|first|finally)\s*,?\s*)?"
    r"(?i:let['’]s|let\s+us|we\s+(?:need|have)\s+to|we\s+will|we['’]ll|i['’]ll|i\s+(?:need|will))(?![A-Za-z])"
    r"|^\W*(?:接下来|下面|现在)?(?:让我们|我们(?:需要|将|来|要)|(?:接下来|下面)(?:需要|将|来|要)?(?:计算|求))"
)


@lru_cache(maxsize=256)
def closes_on_number(text: str) -> bool:
    """The output closes on a number (module docstring): it is neither unfinished nor cut off,
    and a closing sentence without a number neither declines one nor concludes with something
    else (a closing remark, or a conclusion that points back at a table, leaves the
    derivation's number standing)."""
    if unfinished(text) or cut_off(text) or cut_in_a_number(text):
        return False
    closed = _closed_text(text)
    closing = closed[closing_sentence_start(text):]
    last = _last_sentences(closed)
    # a sentence that declines a number, unless a later one gives it ("… has no solution. There
    # are 0 integers that satisfy it.")
    if any(DECLINES_NUMBER.search(one) and not find_numbers(one) and not any(find_numbers(later) for later in last[i + 1 :])
           for i, one in enumerate(last)):
        return False
    if _ANNOUNCES.search(closing) and not re.search(r"[=＝]", closing):
        return False  # it announces the step that would give the result
    if find_numbers(closing) or NOTHING_DUE.search(closing):
        return True
    return not (_CONCLUDES.search(closing) and not _REFERS_BACK.search(closing))


#: A question quoted at the end: the output restates what is asked before it answers.
_QUOTED_QUESTION_END = re.compile(r"[\"“][^\"“”]*[?？][\"”]\s*$")
#: The end of a finished sentence inside a text (not a decimal point).
_SENTENCE_DONE = re.compile(r"[。！？!?]|\.(?!\d)")


def stops_mid_sentence(text: str) -> bool:
    """``text`` finishes no sentence and stops before its first is said: it is unfinished
    (:func:`unfinished`: on a colon, a comma, an open bracket, an empty list item) or ends on
    the question it quotes ("Based on the context, the answer to the question "What is west of
    the kitchen?""): a preamble the length limit cut before any answer; or it is cut inside its
    own list of steps before any answer is said ("Let's break it down:\n1. Fred grabbed the
    football.\n2. Fred dropped")."""
    closed = _closed_text(text).rstrip()
    quoted = _QUOTED_QUESTION_END.search(closed)
    if closed and _cut_in_its_own_steps(closed):
        return True
    if not closed or _SENTENCE_DONE.search(closed[: quoted.start()] if quoted else closed):
        return False  # a finished sentence may hold the answer ("The garden. Based on the context, the")
    head = re.split(r"[(（:：\"“\n]", closed, maxsplit=1)[0].strip()
    cjk = re.search(r"[\u3400-\u9fff]", head) is not None
    if not re.search(r"[,，]", head) and len(head) <= (_BARE_CJK_CHARS if cjk else _BARE_CHARS) \
            and (cjk or len(head.split()) <= _BARE_WORDS):
        return False  # a bare answer and the start of its note: 'Bill (Document[129]):"Bill (Doc'
    return quoted is not None or unfinished(closed)


#: A list item of the output's own working ("1. Jeff journeyed to the office", "- Step 2").
_STEP = re.compile(r"^\s*(?:\d{1,2}[.)、]|[-*•])\s+\S")
#: A finished line that says nothing yet: an announcement ("Let's break it down:") or a short
#: exclamation ("A fun little scenario!").
_SAYS_NOTHING_YET = re.compile(r"^[^\n]*[:：]\s*$|^\W*(?:\w+\W+){0,5}\w*\s*[!！]\s*$")


def _cut_in_its_own_steps(closed: str) -> bool:
    """The output is cut off inside its own list of steps before any answer is said: it ends
    on an unfinished list item ("2. Fred dropped"), and every line before it is an
    announcement, an exclamation or a finished step ("1. Fred grabbed the football.")."""
    lines = [line for line in closed.split("\n") if line.strip()]
    if len(lines) < 2 or not _STEP.match(lines[-1]) or _SENTENCE_DONE.search(lines[-1][-1:]):
        return False
    return all(_STEP.match(line) or _SAYS_NOTHING_YET.match(line) for line in lines[:-1])


#: A bare answer before a note: at most this many words and characters.
_BARE_WORDS = 3
_BARE_CHARS = 24
_BARE_CJK_CHARS = 8


def gives_no_last_number(text: str) -> bool:
    """Whether the last number of ``text``, an output with no statement of its answer, is no
    answer: the derivation does not close on a number, the length limit cut it, it loops over
    its steps, or it runs :data:`LONG_DERIVATION` characters or more (read once where it loops)
    and its last number is one of many drawn on the way."""
    return not closes_on_number(text) or cut_by_limit(text) or loops_in_steps(text) \
        or len(without_loop(text)) >= LONG_DERIVATION

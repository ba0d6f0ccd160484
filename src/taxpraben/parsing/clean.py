"""Cleaning shared by every scorer: what a model wrote, minus what is not its answer.

``clean_prediction`` applies, in this order:

1. **Reasoning blocks.** Every closed ``<think>...</think>`` block is removed (any number, tag
   names ``think`` / ``thinking``, case-insensitive, attributes allowed). Then:

   - a stray closing tag without its opening (chat templates that pre-fill ``<think>`` in the
     prompt, e.g. DeepSeek-R1): everything up to and including the *last* stray ``</think>``
     is reasoning and is dropped;
   - a reasoning model's sections opened by turn tokens (``<|im_start|>think`` … then
     ``<|im_start|>answer``) are a ``<think>`` block and the answer after it, and so are the
     same sections logged without their tokens (a first line ``think`` alone, a later line
     ``answer`` alone);
   - an opening tag that is never closed (the model was cut off, or forgot the tag): the text
     before the tag is kept; the text after it is reasoning and is dropped, **unless** it
     contains a line that starts with an explicit final-answer heading (``最终答案``,
     ``答案``, ``答：``, ``结论``, ``综上``, ``Final answer``, ``Answer:``, optionally wrapped
     in Markdown ``#``/``**``/``【】``): then the text from the last such line on is kept.
     So a truncated reasoning trace yields an empty (format-failure) answer instead of letting
     a number or label from the middle of the reasoning be scored.

2. **Code fences.** Markdown fences (```` ```json ... ``` ````, ``~~~``) are unwrapped: the
   fence lines go, the inside and the text around it stay. An unclosed fence (truncated output)
   loses its opening line only; a stray fence in the middle of a line becomes a space.

3. **The answer region.** The answer ends at the first end-of-answer or chat-turn token that
   follows some content (``</s>``, ``<eoa>``, ``<eos>``, ``<|im_end|>``, ``<|endoftext|>``,
   ``<|eot_id|>``, any ``<|...|>`` token, ``<end_of_turn>``): what follows (a base model's next
   invented turn, another question and its answer) is cut off. Tokens before any content are
   dropped (with the role ``<|im_start|>assistant`` opens), noise tokens (``<s>``, ``<unk>``,
   ``<pad>``, and ``<eoe>``, which closes an explanation the answer follows) wherever they
   stand: a token is never read as content.

4. **HTML** (done right after the folding). An answer a chat front end logged as HTML (``<div><p>…</p></div>``) is the text it
   shows: block tags become line breaks, inline tags go, character references (``&lt;``) become
   their characters. Text without block tags or references is left as it is.

5. **Character folding** (done first, so full-width look-alikes of tags and fences count). Unicode NFKC (full-width digits and letters, ``：`` -> ``:``,
   ``（）`` -> ``()``, ``％`` -> ``%``, ideographic space -> space, ...) with three deliberate
   exceptions, so that later parsers keep the meaning of Chinese text:

   - ``，`` (full-width comma) is **kept**: in Chinese it separates clauses, so
     ``3000，500元`` must not become ``3000,500`` (= 3000500); only between full-width digits
     followed by exactly three of them (``４４，０００``) is it a thousands separator;
   - superscript exponents after a digit become ``^n`` (``10⁴`` -> ``10^4``) instead of being
     flattened into the mantissa (NFKC would give ``104``);
   - circled numbers become parenthesised list markers (``①`` -> ``(1)``), not bare digits.

   ``。``, ``、``, ``《》``, ``“”`` and ``【】`` have no NFKC mapping and stay as they are. The
   minus sign ``−`` (U+2212) becomes ``-``; zero-width characters and the BOM are removed.

6. **Whitespace.** Line breaks are kept (the field and final-answer parsers need lines): each
   line is stripped, runs of horizontal whitespace become one space, runs of blank lines
   collapse to a single line break; the result is stripped.

The function is total (any ``str`` in, a ``str`` out, never an exception) and idempotent.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache

__all__ = [
    "answer_region",
    "clean_prediction",
    "fold_characters",
    "html_as_text",
    "normalize_text",
    "strip_reasoning",
    "unwrap_code_fences",
]

# Bounded attribute part: an unbounded [^>]* makes many "<think" without ">" quadratic.
_THINK_BLOCK = re.compile(r"<(think|thinking)\b[^>]{0,200}>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<(?:think|thinking)\b[^>]{0,200}>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking)\s*>", re.IGNORECASE)
# A line that opens a final answer inside an unclosed reasoning block.
_ANSWER_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__|【)?[ \t]*"
    r"(?:最终答案|正确答案|答案|答[:：]|结论|综上|final[ \t]+answer|answer[ \t]*[:：])",
    re.IGNORECASE | re.MULTILINE,
)

# A language tag only counts when the fence line ends after it (```json\n); inline fences
# (```B```) keep all of their content.
_FENCE = re.compile(r"(```|~~~)[ \t]*(?:[A-Za-z][\w+#.\-]*[ \t]*(?=\n))?\n?(.*?)\1", re.DOTALL)
_FENCE_OPEN = re.compile(r"^[ \t]*(?:```|~~~)[^\n`]*$", re.MULTILINE)
_FENCE_STRAY = re.compile(r"```|~~~")

_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_SUPERSCRIPT_TABLE = str.maketrans({**{c: str(i) for i, c in enumerate(_SUPERSCRIPTS)}, "⁻": "-"})
#: A superscript after a digit (10⁴) or a unit (m², dm³) is a power: written ^n, so that a
#: unit's exponent is never read as a number of its own.
_SUPERSCRIPT_RUN = re.compile(r"(?<=[0-9０-９A-Za-z])[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_SUPERSCRIPT_DIGIT = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹]")
_FULLWIDTH_DIGIT = re.compile("[０-９]")
#: Circled and parenthesised numbers of every Unicode block models write them in: ①–⑳, ⑴–⒇,
#: the dingbats ❶–❿, ➀–➉, ➊–➓, and the double-circled ⓵–⓾.
_CIRCLED = {chr(first + i): f"({i + 1})" for first, count in ((0x2460, 20), (0x2474, 20), (0x2776, 10), (0x2780, 10),
                                                               (0x278A, 10), (0x24F5, 10)) for i in range(count)}
#: The circled numbers written out (found by a regex search, C-speed, rather than a Python
#: loop over every character: 9x faster on the corpus).
_CIRCLED_TABLE = str.maketrans(_CIRCLED)
_CIRCLED_RUN = re.compile("[\u2460-\u2487\u2776-\u2793\u24f5-\u24fe]")
_PROTECTED = "，"
_FULLWIDTH_THOUSANDS = re.compile(r"(?<=[０-９])，(?=[０-９]{3}(?![０-９]))")
_DROP = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"), None)
#: A translate with a table walks every character in Python's slow path; most texts have none
#: of these, and a regex search says so at C speed (10x faster on the corpus).
_DROPPED = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_H_SPACE = re.compile(r"[^\S\n]+")
#: Where ``_H_SPACE`` changes something: a run of two or more, or other whitespace than a space.
_H_SPACE_UNTIDY = re.compile(r"[^\S\n ]|  ")
#: After ``_H_SPACE``: the one space that may be left at either side of a line break.
_SPACE_AT_BREAK = re.compile(r" ?\n ?")
#: The full-width forms of ASCII (but the protected comma) and the ideographic space, and
#: what NFKC maps each to.
_FULL_WIDTH = re.compile("[\uff01-\uff0b\uff0d-\uff5e\u3000]+")
_HALF_WIDTH = str.maketrans({0x3000: " ", **{cp: chr(cp - 0xFEE0) for cp in range(0xFF01, 0xFF5F) if cp != 0xFF0C}})
#: Where a model's answer ends: end-of-sequence, end-of-answer and chat-turn tokens (``</s>``,
#: ``<eoa>``/``<eoh>``/``<eos>``..., any ``<|...|>`` token such as ``<|im_end|>``, a reserved token (``<unused95>``),
#: ``<|endoftext|>``, ``<|eot_id|>``, ``<|end▁of▁sentence|>``, ``<|user|>``, Gemma's turn tokens).
_END_TOKEN = re.compile(r"</s>|<(?i:eo(?!e>)[a-z]{1,3})>|<\|[^<>|\s]{1,40}\|>|<(?:end|start)_of_turn>|<unused\d{1,3}>")
#: Tokens that carry nothing wherever they stand: begin-of-sequence, padding, unknown, masks,
#: and the end of an explanation (``<eoe>``: GAOKAO-style prompts ask for "【解析】 … <eoe>
#: 【答案】 … <eoa>", so the answer comes after it; it ends the reasoning, not the answer).
_NOISE_TOKEN = re.compile(r"<(?:s|unk|pad|bos|mask|sep|cls|eoe|extra_id_\d{1,3})>")
#: The role a turn token opens (``<|im_start|>assistant``), dropped with it before any content.
_OPENS_TURN = re.compile(r"<\|(?:im_start|start_header_id)\|>|<start_of_turn>")
_ROLE = re.compile(r"[ \t]*(?i:assistant|user|system|model|bot|human)\b[ \t]*\n?")
_BLANK_LINES = re.compile(r"\n{2,}")
#: What the reasoning, special-token and fence rules need (``<``, backquote, ``~``) and the
#: characters folded into one of them (tests/test_parsing_clean.py checks every character):
#: a text without any is clean after one pass.
_MARKUP = re.compile("[<`~\u1fef\ufe64\uff1c\uff40\uff5e]")
#: Text that every rule leaves as it is: CJK ideographs, ASCII but whitespace and the
#: characters that open tags and fences (``<``, backquote, ``~``), and Chinese punctuation
#: with no NFKC mapping (the protected comma among them); not ``&``, which may open a character
#: reference. None of these composes under
#: NFKC, so a text of them is its own cleaning (tests/test_parsing_clean.py checks each one).
_PLAIN = re.compile("[\u4e00-\u9fff!-%'-;=?-_a-}，。、《》“”‘’【】]+")


#: A reasoning model's sections opened by turn tokens (s1's budget forcing writes
#: ``<|im_start|>think`` … ``<|im_start|>answer``): the think section is reasoning, as a
#: ``<think>`` block, and the answer section what the model answers.
_THINK_SECTION = re.compile(r"<\|im_start\|>[ \t]*(?:think|thinking|reasoning)(?![a-z])", re.IGNORECASE)
_ANSWER_SECTION = re.compile(r"<\|im_start\|>[ \t]*answer(?!ing)", re.IGNORECASE)
#: The same sections where the log kept the role names and dropped the turn tokens: an output
#: whose first line is "think" alone, its answer section after a later line "answer" alone.
_BARE_THINK = re.compile(r"\A[ \t\n]*(?:think|thinking)[ \t]*\n", re.IGNORECASE)
_BARE_ANSWER = re.compile(r"\n[ \t]*answer[ \t]*(?=\n)", re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """Remove ``<think>`` reasoning as described in the module docstring (rule 1)."""
    if "<|im_start|>" in text and _THINK_SECTION.search(text):
        text = _ANSWER_SECTION.sub("</think>\n", _THINK_SECTION.sub("<think>", text))
    elif (bare := _BARE_THINK.match(text)) is not None:
        answers = list(_BARE_ANSWER.finditer(text, bare.end() - 1))
        text = "<think>" + (text[bare.end() - 1 : answers[-1].start()] + "</think>" + text[answers[-1].end() :]
                            if answers else text[bare.end() - 1 :])
    # Only the part up to the last closing tag can hold closed blocks; searching beyond it
    # would rescan the tail once per opening tag (quadratic on hostile input).
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        cut = closes[-1].end()
        text = _THINK_BLOCK.sub("\n", text[:cut]) + text[cut:]
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened is None:
        return text
    head, tail = text[: opened.start()], text[opened.end() :]
    headings = list(_ANSWER_HEADING.finditer(tail))
    kept = tail[headings[-1].start() :] if headings else ""
    # Any further (nested or repeated) opening tags in what is kept are noise.
    return head + "\n" + _THINK_OPEN.sub("\n", kept)


def answer_region(text: str) -> str:
    """The model's answer region (rule 3 of the module docstring): the text up to the first
    end-of-answer or turn token that follows some content; what comes after it (an invented
    next turn, another question and its answer) is not the answer. A token before any content
    (``<|im_start|>assistant``, ``<s>``) is dropped with the role it opens, and noise tokens
    (``<unk>``, ``<pad>``) wherever they are: no letter, number or option is read from a token."""
    if "<" not in text:
        return text
    if _NOISE_TOKEN.search(text):
        text = _NOISE_TOKEN.sub("", text)
    while (m := _END_TOKEN.search(text)) is not None:
        if text[: m.start()].strip():
            return text[: m.start()]
        rest = text[m.end() :]
        role = _ROLE.match(rest) if _OPENS_TURN.fullmatch(m.group()) else None
        text = rest[role.end() :] if role else rest
    return text


def unwrap_code_fences(text: str) -> str:
    """Replace each Markdown code fence by its content; drop the line of an unclosed fence."""
    if "```" not in text and "~~~" not in text:  # every pattern holds one of them
        return text
    text = _FENCE.sub(lambda m: "\n" + m.group(2) + "\n", text)
    text = _FENCE_OPEN.sub("", text)
    return _FENCE_STRAY.sub(" ", text)


def fold_characters(text: str) -> str:
    """NFKC with the exceptions of the module docstring (rule 3); keeps line breaks."""
    if _DROPPED.search(text):
        text = text.translate(_DROP)
    # Each pattern whose match starts with a lookbehind runs only where a plain search finds
    # its characters (a lookbehind at every position costs as much as the NFKC it saves).
    if _SUPERSCRIPT_DIGIT.search(text):
        text = _SUPERSCRIPT_RUN.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPT_TABLE), text)
    if _CIRCLED_RUN.search(text):
        text = text.translate(_CIRCLED_TABLE)
    # A full-width comma between full-width digit groups is a thousands separator (４４，０００).
    if _PROTECTED in text and _FULLWIDTH_DIGIT.search(text):
        text = _FULLWIDTH_THOUSANDS.sub(",", text)
    # The full-width forms first (NFKC's own mapping of each, one regex pass), then NFKC only
    # where something is left for it to do: NFKC of a whole prompt was half of its cleaning,
    # and after the full-width forms nearly every text is normalized already (a check at C
    # speed). The same result: NFKC decomposes a full-width form into the very character it
    # is mapped to here. A line break stands for the protected comma in the check: it
    # composes with nothing, so the text passes when every piece between the commas does.
    if _FULL_WIDTH.search(text):
        text = _FULL_WIDTH.sub(_half_width, text)
    if not unicodedata.is_normalized("NFKC", text.replace(_PROTECTED, "\n")):
        text = _PROTECTED.join(unicodedata.normalize("NFKC", p) for p in text.split(_PROTECTED))
    # NFKC leaves U+2212 MINUS SIGN alone; NFKC may also produce \r from exotic breaks.
    return text.replace("\u2212", "-").replace("\r\n", "\n").replace("\r", "\n")


def _half_width(match: re.Match[str]) -> str:
    return match.group().translate(_HALF_WIDTH)


def _collapse_whitespace(text: str) -> str:
    """Each line stripped, runs of horizontal whitespace as one space, blank lines as one
    line break, the whole stripped: regexes over the whole text (a Python step per line was
    a tenth of the cleaning of a prompt)."""
    # Each regex runs only where it has something to change (most lines are tidy already).
    if _H_SPACE_UNTIDY.search(text):
        text = _H_SPACE.sub(" ", text)
    if " \n" in text or "\n " in text:
        text = _SPACE_AT_BREAK.sub("\n", text)
    if "\n\n" in text:
        text = _BLANK_LINES.sub("\n", text)
    return text.strip()


class CleanText(str):
    """A prediction :func:`clean_prediction` has cleaned: cleaning it again gives it back as it
    is, so that the readers a kind calls on an item's text (each cleans what it is given, for
    callers that pass raw output) do not clean it a second time."""

    __slots__ = ()


#: Passes of cleaning at most: a fence inside a fence, a reasoning block inside a fence.
_MAX_PASSES = 4


def clean_prediction(text: str) -> str:
    """Return the answer part of a model output, folded and with tidy whitespace.

    Rules (reasoning blocks, code fences, character folding, whitespace) are listed in the
    module docstring; they are applied until nothing changes (a fence inside a fence is
    unwrapped too), so the result is clean: it is a :class:`CleanText`, which this function
    returns as it is. ``None`` is treated as the empty string; the result may be empty
    (nothing but reasoning), which callers score as a format failure.
    """
    if isinstance(text, CleanText):
        return text
    if not text:
        return CleanText("")
    return _cleaned(text)


@lru_cache(maxsize=1024)
def _cleaned(text: str) -> CleanText:
    """:func:`clean_prediction` of a non-empty text (cached: a reading cleans the same output,
    its lines and the prompt's options several times, each rule and each reader the text it
    is given)."""
    for _ in range(_MAX_PASSES):
        if _PLAIN.fullmatch(text):  # nothing any rule changes (the clauses, many lines)
            break
        cleaned = _clean_once(text)
        # Without tags, tokens and fences nothing was taken out but whitespace: what the
        # folding and the whitespace rules leave, they leave as it is (no second pass).
        if cleaned == text or not _MARKUP.search(text):
            text = cleaned
            break
        text = cleaned
    return CleanText(text)


def _clean_once(text: str) -> str:
    # Line breaks are folded first so that every later regex sees only "\n".
    text = (
        text.replace("\r\n", "\n")
        .replace("\r", "\n")
        .replace("\u2028", "\n")
        .replace("\u2029", "\n")
    )
    # Folding comes first so that full-width look-alikes of tags and fences are handled too.
    text = strip_reasoning(html_as_text(fold_characters(text)))
    text = answer_region(text)
    text = unwrap_code_fences(text)
    return _collapse_whitespace(text)


#: HTML that a chat front end wrapped the answer in: block tags (a line break each), inline tags
#: (nothing), and character references ("&lt;&lt;16.5*2=33.25&gt;&gt;"; not "&amp;", whose
#: unescaping would make a new reference of "&amp;lt;").
_HTML_BLOCK = re.compile(r"</?(?:p|div|br|li|ul|ol|h[1-6]|tr|table|tbody|thead|blockquote|pre)\b[^<>]{0,200}?/?>", re.IGNORECASE)
_HTML_INLINE = re.compile(r"</?(?:span|b|i|em|strong|code|u|sup|sub|td|th|a)\b[^<>]{0,200}?>", re.IGNORECASE)
_HTML_REFERENCE = re.compile(r"&(?:lt|gt|quot|apos|nbsp|#\d{1,6}|#x[0-9A-Fa-f]{1,6});")


def html_as_text(text: str) -> str:
    """Markup is never content: an answer written as HTML (``<div><p>…</p></div>``, as chat
    front ends log it) is read as the text it shows: its character references as their
    characters (by :func:`html.unescape`), then its block tags as line breaks and its inline
    tags as nothing. Text without block tags or references is returned as it is (a lone ``<b>``
    in prose stays)."""
    if "&" not in text and "<" not in text:
        return text
    text = _HTML_REFERENCE.sub(lambda m: html.unescape(m.group(0)), text)
    if _HTML_BLOCK.search(text) is None:
        return text
    return _HTML_INLINE.sub("", _HTML_BLOCK.sub("\n", text))


def normalize_text(text: str) -> str:
    """A comparison key: cleaned, case-folded, every whitespace run turned into one space."""
    return " ".join(clean_prediction(text).casefold().split())

"""A judge that must quote: its reply names the answer and the passage of the output that
states it, and a reading counts only when that passage is the output's own evidence.

The judge answers one JSON object, ``{"answer": ..., "quote": "..."}`` (:func:`parse_reply`;
for a field task both are objects keyed by the asked fields). A reading is *grounded* when
its quote

1. occurs in the output: compared after the character folding every reader applies
   (:func:`~taxpraben.parsing.clean.fold_characters`: full-width forms, NFKC), whitespace
   and Latin case aside, not as a piece of a longer number or word, and found in what the
   readers read (a quote from a reasoning block the cleaning drops is not in the output);
   its place is kept as ``[start, end)`` offsets into the raw prediction (:func:`places`,
   :func:`read_place`);
2. lies in the output's own part: not wholly inside a stretch that copies the prompt, nor
   after the output moves on to another question (:func:`~taxpraben.parsing.prompt_copy.copied_parts`,
   with the arguments the task's reader gives :func:`~taxpraben.parsing.prompt_copy.own_answer`),
   nor within lines that list a choice's options one a line without judging them (the options
   written back reworded, which is no copy: :func:`~taxpraben.parsing.option_lists.listing_lines`);
3. reads as the answer: the task's own reader reads the same value from the quote (the
   caller's ``reads_same``), the copied part of a quote that overlaps a copy blanked first.

A reply that repeats one of the judge prompt's worked examples (its answer and quote, or a
quote taken from an example's output or quotes rather than from this output) is never
grounded (:func:`prompt_examples`). What is
not grounded is rejected with a short why (:data:`WHYS`), never read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from taxpraben.judge.prompt import NO_ANSWER
from taxpraben.parsing.clean import clean_prediction, fold_characters
from taxpraben.parsing.jsonish import find_json_values
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.option_lists import listing_lines, option_keys_of
from taxpraben.parsing.prompt_copy import ANOTHER_QUESTION, CopyParts, copied_parts
from taxpraben.records import Record
from taxpraben.task_spec import TaskSpec

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

#: The format-failure reason of an item whose judge reading was rejected.
NOT_GROUNDED = "judge: not grounded"
NO_QUOTE = "no quote"
NOT_IN_OUTPUT = "quote not in output"
IN_COPY = "quote in a copy of the prompt"
IN_ANOTHER = "quote in another question"
READS_OTHER = "quote reads another value"
IN_OPTION_LIST = "quote in a list of the options"
REPEATS_EXAMPLE = "repeats the prompt's example"
#: Why a reading is not grounded, in the order they are checked.
WHYS = (REPEATS_EXAMPLE, NO_QUOTE, NOT_IN_OUTPUT, IN_COPY, IN_ANOTHER, IN_OPTION_LIST, READS_OTHER)
#: Occurrences of a quote looked at, at most (a one-letter quote may occur often).
_MAX_PLACES = 50
#: Marks put around a place to find it again in the cleaned text (private use: no reader
#: folds, drops or matches them).
_OPEN, _CLOSE = "\ue000", "\ue001"


@dataclass(frozen=True)
class JudgeReply:
    """A reply read as the judge's JSON object: ``parsed`` False when it is none;
    ``answer`` None for no answer; ``quote`` a string (an object for a field task)."""

    parsed: bool
    answer: JSONValue = None
    quote: JSONValue = None


def _declined(value: JSONValue) -> bool:
    return value is None or (isinstance(value, str) and value.strip().strip("。.").strip() in (NO_ANSWER, "无答案", ""))


def parse_reply(reply: str) -> JudgeReply:
    """The first JSON object of ``reply`` with an ``answer`` key (code fences and text around
    it allowed); the no-answer token alone is no answer; anything else is not parsed."""
    if _declined(reply.strip()) and reply.strip():
        return JudgeReply(True)
    for value in find_json_values(reply):
        if isinstance(value, dict) and "answer" in value:
            answer = None if _declined(value["answer"]) else value["answer"]
            return JudgeReply(True, answer, value.get("quote"))
    return JudgeReply(False)


def answer_text(answer: JSONValue) -> str:
    """The reply's answer as an output for the task's reader: a string as it is, a number
    as written, an object as JSON, a list of letters joined."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, (dict, list)) and not (isinstance(answer, list) and all(isinstance(a, str) for a in answer)):
        return json.dumps(answer, ensure_ascii=False)
    if isinstance(answer, list):
        return "".join(answer) if all(len(a) == 1 for a in answer) else "、".join(answer)
    return str(answer)


# ---------------------------------------------------------------------------- the worked examples


@dataclass(frozen=True)
class Examples:
    """The judge prompt's worked examples: each example reply's (answer, quote) in canonical
    JSON, and the keys (:func:`fold_key`) of the examples' outputs and quotes, one per line."""

    replies: frozenset[tuple[str, str]]
    text_key: str

    def holds(self, quote: str) -> bool:
        """``quote`` is a passage of an example (:data:`EXAMPLE_MIN` characters at least: a
        letter or a number alone is anyone's)."""
        needle = fold_key(quote)[0]
        return len(needle) >= EXAMPLE_MIN and needle in self.text_key


_EXAMPLE_REPLY = re.compile(r"^输出[:：][ \t]*(\{.*\})[ \t]*$", re.MULTILINE)
#: An example's output between the template's <<< and >>> lines.
_EXAMPLE_OUTPUT = re.compile(r"^<<<\n(.*?)\n>>>$", re.MULTILINE | re.DOTALL)
#: The shortest quote taken for a passage of an example.
EXAMPLE_MIN = 4


def _canonical(value: JSONValue) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@lru_cache(maxsize=8)
def prompt_examples(template: str) -> Examples:
    """The worked examples of ``template``: every ``输出：{...}`` line that is a reply with an
    answer, and the examples' outputs (``<<<`` to ``>>>``, but ``{output}``) and quotes (what
    a quote copied from the prompt comes from)."""
    replies = set()
    passages = [m.group(1) for m in _EXAMPLE_OUTPUT.finditer(template) if "{output}" not in m.group(1)]
    for m in _EXAMPLE_REPLY.finditer(template):
        try:
            value = json.loads(m.group(1))
        except ValueError:
            continue
        if isinstance(value, dict) and "answer" in value:
            replies.add((_canonical(value["answer"]), _canonical(value.get("quote"))))
            quote = value.get("quote")
            passages += [q for q in (quote.values() if isinstance(quote, dict) else [quote]) if isinstance(q, str)]
    return Examples(frozenset(replies), "\n".join(fold_key(p)[0] for p in passages))


def repeats_example(answer: JSONValue, quote: JSONValue, examples: Examples) -> bool:
    """The reply's answer and quote are one worked example's."""
    return (_canonical(answer), _canonical(quote)) in examples.replies


# ---------------------------------------------------------------------------- where a quote lies


def fold_key(text: str) -> tuple[str, list[int]]:
    """``text`` folded as the readers fold it (full-width forms, NFKC), case-folded, without
    whitespace; and for each character of that key, the offset in ``text`` it came from."""
    chars: list[str] = []
    where: list[int] = []
    for i, c in enumerate(text):
        folded = c if c.isascii() else fold_characters(c)
        for ch in folded.casefold():
            if not ch.isspace():
                chars.append(ch)
                where.append(i)
    return "".join(chars), where


def _word(c: str) -> bool:
    return c.isascii() and c.isalnum()


def _inside_word(key: str, where: list[int], start: int, end: int) -> bool:
    """The key's ``[start, end)`` begins or ends inside a word or a number of the text (the
    quote "1" in "130000", "A" in "ABD", "5" in "1.5"): not a passage of its own."""
    for edge, inner, outer, beyond in ((start, start, start - 1, start - 2), (end, end - 1, end, end + 1)):
        if not 0 < edge < len(key):
            continue
        if _word(key[inner]) and _word(key[outer]) and abs(where[inner] - where[outer]) <= 1:
            return True
        if key[inner].isdigit() and key[outer] in ".," and 0 <= beyond < len(key) and key[beyond].isdigit():
            return True
    return False


def places(raw: str, quote: str) -> list[tuple[int, int]]:
    """Where ``quote`` occurs in ``raw`` (see :func:`fold_key`), as raw ``[start, end)``; not
    where it is a piece of a longer word or number."""
    needle = fold_key(quote)[0]
    if not needle:
        return []
    key, where = fold_key(raw)
    out: list[tuple[int, int]] = []
    at = key.find(needle)
    while at >= 0 and len(out) < _MAX_PLACES:
        if not _inside_word(key, where, at, at + len(needle)):
            out.append((where[at], where[at + len(needle) - 1] + 1))
        at = key.find(needle, at + 1)
    return out


def read_text(raw: str) -> str:
    """What the readers read of an output: cleaned, LaTeX made plain."""
    return strip_latex(clean_prediction(raw))


def read_place(raw: str, start: int, end: int, read: str) -> tuple[int, int] | None:
    """Where ``raw[start:end]`` lies in ``read`` (:func:`read_text` of ``raw``), found by
    cleaning ``raw`` with the span marked; None when the cleaning drops it (a reasoning
    block) or the marks change what is read."""
    marked = read_text(raw[:start] + _OPEN + raw[start:end] + _CLOSE + raw[end:])
    i, j = marked.find(_OPEN), marked.find(_CLOSE)
    if i < 0 or j < i or marked.replace(_OPEN, "").replace(_CLOSE, "") != read:
        return None
    return i, j - 1


def choice_options(spec: TaskSpec, record: Record) -> list[str] | None:
    """The options the task's reader compares an output with (the names of a choice's options,
    the listed options of a letter set), or None for a task without options."""
    query = record.query
    if spec.classification is not None and record.choices:
        from taxpraben.kinds.classification import option_names

        names = option_names(record.choices, query)
        return names if names is not None and len(names) == len(record.choices) else list(record.choices)
    structured = spec.structured
    if structured is not None and structured.kind == "letters":
        from taxpraben.parsing.readers.letters import listed_option_texts

        allowed = "".join(sorted(set(structured.letters.upper())))
        listed = listed_option_texts(query)
        return [listed[x] for x in sorted(listed) if x in allowed]
    return None


def copy_parts(spec: TaskSpec, record: Record, read: str) -> CopyParts:
    """What ``read`` copies of the record's prompt, with the arguments the task's reader
    gives :func:`~taxpraben.parsing.prompt_copy.own_answer` (the options of a choice, the
    listed options of a letter set, the document of a span)."""
    options = choice_options(spec, record)
    if options is not None:
        structured = spec.structured
        several = structured is not None and structured.kind == "letters"
        return copied_parts(read, record.query, options=options, several=several)
    structured = spec.structured
    if structured is not None and structured.kind == "span":
        return copied_parts(read, record.query, document=record.text)
    return copied_parts(read, record.query)


def _own_part(read: str, start: int, end: int, parts: CopyParts) -> str:
    """``read[start:end]`` with what it holds of a copy, or of another question, blanked."""
    chars = list(read[start:end])
    blanked = list(parts.copies) + ([(parts.cut, len(read))] if parts.cut is not None else [])
    for s, e in blanked:
        for k in range(max(s, start), min(e, end)):
            chars[k - start] = " "
    return "".join(chars)


@dataclass(frozen=True)
class Grounding:
    """A quote checked against its output: ``span`` (raw ``[start, end)``) when grounded,
    else ``why`` (one of :data:`WHYS`)."""

    span: tuple[int, int] | None = None
    why: str | None = None


@dataclass(frozen=True)
class Output:
    """The output a quote is checked against: the raw prediction, what the readers read of
    it, and what that copies of the prompt (each computed once per output)."""

    raw: str
    read: str
    parts: CopyParts
    #: Lines of ``read`` that list the options without judging them (``[start, end)``).
    listing: tuple[tuple[int, int], ...] = ()

    @classmethod
    def of(cls, spec: TaskSpec, record: Record, raw: str) -> Output:
        read = read_text(raw)
        options = choice_options(spec, record)
        listing = tuple(listing_lines(read, option_keys_of(tuple(options)))) if options else ()
        return cls(raw, read, copy_parts(spec, record, read), listing)

    def in_listing(self, start: int, end: int) -> bool:
        """Whether every non-blank character of ``read[start:end]`` lies in a listing line."""
        return bool(self.listing) and all(
            ch.isspace() or any(s <= k < e for s, e in self.listing)
            for k, ch in enumerate(self.read[start:end], start)
        )


def ground(quote: JSONValue, output: Output, reads_same: Callable[[str], bool], examples: Examples) -> Grounding:
    """Whether ``quote`` grounds a reading of ``output`` (rules in the module docstring);
    ``reads_same(text)``: the task's reader reads the answer's value from ``text``."""
    if not isinstance(quote, str) or not quote.strip():
        return Grounding(why=NO_QUOTE)
    found = places(output.raw, quote.strip())
    if not found:
        return Grounding(why=REPEATS_EXAMPLE if examples.holds(quote) else NOT_IN_OUTPUT)
    why = NOT_IN_OUTPUT
    for start, end in found:
        place = read_place(output.raw, start, end, output.read)
        if place is None:
            continue
        held = output.parts.holds(*place)
        if held is not None:
            why = IN_ANOTHER if held == ANOTHER_QUESTION else IN_COPY
            continue
        if output.in_listing(*place):
            why = IN_OPTION_LIST
            continue
        own = _own_part(output.read, *place, output.parts)
        whole = output.raw[start:end]
        if own == output.read[place[0] : place[1]]:
            return Grounding((start, end)) if reads_same(whole) else Grounding(why=READS_OTHER)
        if reads_same(own):
            return Grounding((start, end))
        return Grounding(why=IN_COPY if reads_same(whole) else READS_OTHER)
    return Grounding(why=why)


def field_quotes(quote: JSONValue) -> Mapping[str, JSONValue]:
    """A field task's quotes by field (an object); {} for anything else."""
    return quote if isinstance(quote, dict) else {}

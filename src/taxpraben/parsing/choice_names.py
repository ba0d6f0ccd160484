"""How an output names the options of a classification: every occurrence of every choice.

Both sides are compared in one form (:func:`naming_form`: LaTeX made plain, folded, whitespace
runs as one space, lower-case Latin, no thousands separators, ``百分之五十`` as ``50%``,
``五倍`` as ``5倍`` and ``三年`` as ``3年``). The needles of the choices (:func:`choice_needles`) are each choice, its
aliases, and a charge without its ``罪`` when that stem names no other choice; the occurrences
(:func:`named_choices`) are found longest first, an occurrence inside a longer accepted one
dropped (``企业所得税`` does not also name ``所得税``), each marked negated when a negation comes
right before it (``不属于``, ``并非``, ``不构成``, ...). :mod:`taxpraben.parsing.readers.label` reads
which of them an answer asserts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from taxpraben.parsing.clean import fold_characters
from taxpraben.parsing.latex import strip_latex
from taxpraben.parsing.numbers import NumberMatch, find_numbers, numbers_equal, parse_number

__all__ = ["Named", "choice_needles", "named_choices", "naming_form", "numeric_choice", "option_written_otherwise"]

#: An occurrence of a choice: (start, end, choice index, negated), offsets in the naming form.
Named = tuple[int, int, int, bool]

_NEGATED_MENTION = re.compile(
    r"(?:不属于|不是|并非|而非|非|不为|不应为|排除|不构成|不涉嫌|不认定为|不应认定为|不能认定为|"
    r"不定性为|不涉及|未涉及|并不涉及|无关|而不是|不应是|不选|并不属于)\s*(?:选项)?\s*$"
)
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d{3})")
_CN_PERCENT = re.compile(r"百分之([零一二两三四五六七八九十百]+(?:点[零一二三四五六七八九]+)?)")
_CN_TIMES = re.compile(r"(?<![零一二两三四五六七八九十百千万亿])([一二两三四五六七八九十]{1,3})倍")
#: A period or a date in Chinese numerals (``三年``, ``十五日``, ``三月三十一日``).
_CN_PERIOD = re.compile(r"(?<![零一二两三四五六七八九十百千万亿])([一二两三四五六七八九十]{1,3})(个月|年|月|日|天)")
_CN_PERIOD_HINT = re.compile(r"[一二两三四五六七八九十](?:个月|年|月|日|天)")


def _cn_number(match: re.Match[str], suffix: str) -> str:
    value = parse_number(match.group(1))
    if value is None:
        return match.group(0)
    text = format(value.value.normalize(), "f")
    return text + suffix


#: A square root in LaTeX, and blanks around an operator in a formula.
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}|\\sqrt\s*(\d+)")
_MATH_SPACE = re.compile(r"\s*([-+=/×*])\s*")


#: Dashes of every width are one hyphen: "수용체 – atropine" and "수용체 - atropine" name one option.
_DASHES = str.maketrans({dash: "-" for dash in "‐‑‒–—―"})


@lru_cache(maxsize=4096)
def naming_form(text: str) -> str:
    """Comparison form for naming, the same for an output and for the choices (both sides
    cleaned alike: LaTeX made plain, folded, whitespace runs as one space, lower-case Latin,
    no thousands separators,
    ``百分之五十`` as ``50%`` and ``五倍`` as ``5倍`` (the law's wording of an option;
    cached: a question's options are put in this form by every rule that reads a name)."""
    text = " ".join(fold_characters(strip_latex(text)).lower().split()).replace("，", ",").rstrip("。.;；").translate(_DASHES)
    text = _DIGIT_COMMA.sub("", text)
    if "\\" in text or "$" in text:  # maths left by strip_latex: "\sqrt{2}" is √2, "-1 - i" is -1-i
        text = _MATH_SPACE.sub(r"\1", _SQRT.sub(lambda m: "√" + (m.group(1) or m.group(2)), text.replace("$", "").replace("\\pi", "π"))).strip()
    elif _MATH_SPACE.search(text) and not re.search(r"[a-z]{2}", text):
        text = _MATH_SPACE.sub(r"\1", text)
    if "百分之" in text:
        text = _CN_PERCENT.sub(lambda m: _cn_number(m, "%"), text)
    if "倍" in text:
        text = _CN_TIMES.sub(lambda m: _cn_number(m, "倍"), text)
    if _CN_PERIOD_HINT.search(text):
        text = _CN_PERIOD.sub(lambda m: _cn_number(m, m.group(2)), text)
    if _EN_PERIOD_HINT.search(text):  # "15 months" for the option 15个月 (an answer in English)
        text = _EN_PERIOD.sub(lambda m: m.group(1) + _EN_UNITS[m.group(2).rstrip("s")], text)
    return text


#: A period written in English, as the Chinese option writes it: "15 months" is 15个月.
_EN_UNITS = {"month": "个月", "year": "年", "day": "日", "working day": "个工作日", "time": "倍"}
_EN_PERIOD_HINT = re.compile(r"\d\s*(?:month|year|day|working day|time)")
_EN_PERIOD = re.compile(r"(\d+(?:\.\d+)?)\s*(working days?|months?|years?|days?|times)(?![a-z])")


def choice_needles(
    choices: Sequence[str], aliases: Mapping[str, Sequence[str]] | None = None
) -> list[tuple[str, int]]:
    """(needle, choice index) pairs: each choice, its aliases, and a charge without its 罪
    when that stem names no other choice."""
    names: list[tuple[str, int]] = [(str(c), i) for i, c in enumerate(choices)]
    for i, choice in enumerate(choices):
        names.extend((alias, i) for alias in (aliases or {}).get(str(choice), ()))
    needles: list[tuple[str, int]] = []
    seen: set[str] = set()
    for name, index in names:
        needle = naming_form(name)
        if needle and needle not in seen:
            seen.add(needle)
            needles.append((needle, index))
    for name, index in names:
        needle = naming_form(name)
        stem = needle[:-1] if needle.endswith("罪") else ""
        if len(stem) >= 2 and stem not in seen:
            seen.add(stem)
            needles.append((stem, index))
    # of two options that are single words, one negated names the other: "incorrect" or "not
    # correct" answers "wrong" of correct/wrong, "untrue" answers "false" of true/false
    words = [needle for needle, index in needles if needle == naming_form(str(choices[index]))]
    if len(choices) == 2 and len(words) == 2 and all(_WORD.fullmatch(word) for word in words):
        for index, word in enumerate(words):
            for negated in (prefix + word for prefix in _NEGATING_PREFIXES):
                if negated not in seen:
                    seen.add(negated)
                    needles.append((negated, 1 - index))
    # an option written as "name: what it is" ("Color 1: $(\pi, 0.3, 0.5)$") is named by its name
    heads = [(naming_form(m.group(1)), i) for i, c in enumerate(choices) if (m := _HEAD.match(str(c)))]
    for head, index in heads:
        if len(head) >= 2 and head not in seen and sum(h == head for h, _ in heads) == 1:
            seen.add(head)
            needles.append((head, index))
    return needles


#: A single Latin word, and the prefixes that negate one ("in|correct", "un|true", "not valid").
_WORD = re.compile(r"[a-z]{2,20}")
_NEGATING_PREFIXES = ("in", "im", "il", "ir", "un", "non", "non-", "not ")


#: The name an option opens with, before a colon and what it describes.
_HEAD = re.compile(r"^\s*([^:：\n$]{2,24}?)\s*[:：]\s*\S")


#: What makes a number part of an expression when it stands right before the number (a root,
#: a power, a denominator) or right after it (a numerator, a power's base).
_PART_BEFORE = frozenset("√^/")
_PART_AFTER = frozenset("/^")


def _latin(character: str) -> bool:
    return character.isascii() and character.isalpha()


def _occurrences(haystack: str, needle: str, limit: int = 10_000) -> list[int]:
    """Where ``needle`` occurs in ``haystack``; an option's number names it only as a whole
    number, not as part of another number, a fraction, a root or a power ("1" and "3" are not
    named by "16√3/39", nor "0.5" by "10.5" or "0.55")."""
    found: list[int] = []
    start = haystack.find(needle)
    opens_number, closes_number = needle[:1].isdigit(), needle[-1:].isdigit()
    opens_word, closes_word = _latin(needle[:1]), _latin(needle[-1:])
    bounded = opens_number or closes_number or opens_word or closes_word  # else any occurrence names it
    while start >= 0 and len(found) < limit:
        if not bounded or _whole(haystack, start, start + len(needle), opens_number, closes_number, opens_word, closes_word):
            found.append(start)
        start = haystack.find(needle, start + 1)
    return found


def _whole(haystack: str, start: int, end: int, opens_number: bool, closes_number: bool,
           opens_word: bool, closes_word: bool) -> bool:
    """The occurrence ``haystack[start:end]`` of a needle that opens or closes on a digit or a
    Latin letter stands whole: no number, part of an expression or word runs on from it."""
    before = haystack[max(0, start - 2) : start].rjust(2)  # the two characters before it
    after = haystack[end : end + 2].ljust(2)  # and after it
    joined_before = before[1].isdigit() or before[1] in _PART_BEFORE or (before[1] == "." and before[0].isdigit())
    joined_after = after[0].isdigit() or after[0] in _PART_AFTER or (after[0] == "." and after[1].isdigit())
    # a Latin word names an option only whole: "correct" is no part of "incorrect"
    inside_word = (opens_word and _latin(before[1])) or (closes_word and _latin(after[0]))
    return not ((opens_number and joined_before) or (closes_number and joined_after) or inside_word)


def named_choices(text: str, needles: Sequence[tuple[str, int]]) -> list[Named]:
    """Accepted occurrences in ``text`` as (start, end, index, negated), in text order."""
    haystack = naming_form(text)
    candidates: list[tuple[int, int, int]] = []
    for needle, index in needles:
        candidates.extend((-len(needle), start, index) for start in _occurrences(haystack, needle))
    if not candidates:
        return []
    candidates.sort()
    covered = bytearray(len(haystack))
    accepted: list[Named] = []
    for negative_length, start, index in candidates:
        end = start - negative_length
        if not any(covered[start:end]):
            covered[start:end] = b"\x01" * (end - start)
            negated = bool(_NEGATED_MENTION.search(haystack[max(0, start - 6) : start]))
            accepted.append((start, end, index, negated))
    accepted.sort()
    return accepted


#: The variable an expression is assigned to: "y=", "f(x)=".
_ASSIGNED = re.compile(r"^[A-Za-z](?:\([A-Za-z]\))?=")


def option_written_otherwise(answer: str, texts: Sequence[str]) -> int | None:
    """The one option that an answer value (a JSON answer: the value alone) writes otherwise,
    or None when it names none or several: the option's expression spaced otherwise or
    without the variable it is assigned to ("(8x+7)(8x-7)" for "y=(8x+7)(8x-7)"), or the
    option's value without its unit and markup ("47.9" for "47.9^{\\circ}", "16.91" for
    "16.91 \\mathrm{~cm}": an option that states one number, and no other option that number)."""
    answer = answer.strip(" .。、:：*")
    spaceless = "".join(answer.split())
    same = [index for index, text in enumerate(texts)
            if spaceless in (written := "".join(strip_latex(str(text)).split()), _ASSIGNED.sub("", written, count=1))]
    if len(same) == 1:
        return same[0]
    value = parse_number(answer)
    if same or value is None or value.is_percent:
        return None
    stated = [[n.value for n in find_numbers(strip_latex(str(text)))] for text in texts]
    same = [index for index, numbers in enumerate(stated) if numbers == [value.value]]
    return same[0] if len(same) == 1 else None


@lru_cache(maxsize=256)
def _choice_amounts(choices: tuple[str, ...]) -> tuple[NumberMatch, ...] | None:
    """Each choice as one amount or rate, or None unless every choice is one."""
    values = tuple(v for c in choices if (v := parse_number(c)) is not None)
    return values if len(values) == len(choices) else None


def numeric_choice(body: str, choices: Sequence[str]) -> int | None:
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

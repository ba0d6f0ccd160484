"""When an output offers several options instead of one (TaxSCQ, TaxTopic, TaxCrime).

A hedge between two (``B或D``, ``C，或者D``, ``C也可能是D``), a set where one answer is asked
(``答案：C、D``, ``A和C``, ``同时构成骗取出口退税罪和虚开增值税专用发票罪``) is no answer:
:func:`hedged` tells a statement that offers two, :func:`offered_with_another` whether the
option a reading gives comes only together with another one. A letter after a comma that
opens a clause about its option (``答案：B，D项25%是基本税率``) is no second answer, and 或 after
a denial continues it (``而不是逃税罪或抗税罪``). :mod:`taxpraben.parsing.readers.label` reads with
them.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from itertools import pairwise

from taxpraben.parsing.choice_names import Named, named_choices, naming_form
from taxpraben.parsing.clean import fold_characters

__all__ = [
    "NEGATED_LETTER",
    "NONE_CORRECT_ZH",
    "NO_OPTION_CORRECT",
    "Hedge",
    "hedged",
    "letter_index",
    "lists_options",
    "offered_with_another",
    "says_none_correct",
    "without_negated_letters",
]


#: That no option is correct, said in Chinese: "以上选项都不正确", "无正确答案", "没有正确的选项" (with
#: a subject "A、B都不对" it says so of those only: the reader checks the subject).
NONE_CORRECT_ZH = re.compile(
    r"(?:以上|四个|所有|各|全部)?(?:选项|答案)?(?:均|都|全)(?:不正确|错误|不对|不符合)|"
    r"无正确(?:答案|选项)|没有(?:一个)?正确(?:的)?(?:答案|选项)|都不是正确|没有(?:一个|任何)?(?:选项|答案)(?:是|为)?正确"
)
#: An output's own verdict that no option is right, in the languages models answer in: "none of the
#: (given) options is correct", "all (the) statements are false", "لا يوجد خيار صحيح" (Arabic: there
#: is no correct option), "कोई सही विकल्प नहीं" (Hindi: no correct option), "सभी कथन गलत हैं" (all
#: statements are wrong), and :data:`NONE_CORRECT_ZH`.
NO_OPTION_CORRECT = re.compile(
    r"(?i:\bnone\s+of\s+the\s+(?:given\s+|above\s+|four\s+)?(?:options|statements|choices|answers)\s+(?:is|are)\s+(?:correct|true|right)"
    r"|\bno\s+(?:option|statement|choice)\s+is\s+(?:correct|true)"
    r"|\ball\s+(?:of\s+)?(?:the\s+)?(?:given\s+|four\s+)?(?:options|statements|choices)\s+are\s+(?:incorrect|false|wrong))"
    r"|لا\s+يوجد\s+(?:أي\s+)?(?:خيار|إجابة|بديل)\s+صحيح"
    r"|कोई\s+(?:भी\s+)?सही\s+विकल्प\s+नहीं|सभी\s+कथन\s+गलत|" + NONE_CORRECT_ZH.pattern
)


def letter_index(letter: str, count: int) -> int | None:
    index = string.ascii_uppercase.find(letter.upper())
    return index if 0 <= index < count else None


#: One letter or several joined ("C", "A、B", "A项和B项", "A或B"), as a subject or an object.
_LETTER_RUN = (r"(?:选项)?(?<![A-Za-z])[A-Z](?![A-Za-z])\s*(?:项|选项)?"
               r"(?:\s*[、,，和与及或/]\s*(?:选项)?[A-Z](?![A-Za-z])\s*(?:项|选项)?)*")
#: One letter or several joined in English ("A", "(A) and (B)", "A, B or D").
_EN_LETTER_RUN = (r"[(\[]?(?<![A-Za-z])[A-Z][)\]]?(?![A-Za-z])"
                  r"(?:\s*(?:,|(?i:or|and|nor))\s*[(\[]?(?<![A-Za-z])[A-Z][)\]]?(?![A-Za-z]))*")
NEGATED_LETTER = re.compile(
    r"(?:不是|并非|而非|不选|排除|不应选|注意不是)\s*(?:选项)?\s*[A-Z](?![A-Za-z])\s*(?:项)?"
    # the letters a denial goes on to deny ("而非B或D", "不是A、C")
    r"(?:\s*(?:或者|或是|或|、|和|与)\s*(?:选项)?\s*[A-Z](?![A-Za-z])\s*(?:项)?)*"
    r"|" + _LETTER_RUN + r"\s*(?:的)?(?:说法|表述)?\s*(?:都|均|也|全)?\s*(?:是|为)?\s*"
    r"(?:不正确|错误|不对|有误|不符合|不当选|不选|不适用|❌)"
    # English: "not A or B", "rather than (C)", "A and B are wrong"
    r"|(?<![A-Za-z])(?i:not|rather\s+than|instead\s+of|except|excluding)\s+(?i:options?\s+)?" + _EN_LETTER_RUN +
    r"|" + _EN_LETTER_RUN + r"\s+(?i:is|are)\s+(?i:wrong|incorrect|false|not\s+correct|not\s+the\s+answer)"
)


def without_negated_letters(text: str) -> str:
    """``text`` without the letters it rules out (``注意不是B``, ``而非C``, ``C项不正确``)."""
    return NEGATED_LETTER.sub(" ", text)


#: Words that offer an alternative ("B或D", "C，或者D", "C也可能是D"; "or" in English, French,
#: German, Malay and Indonesian).
_OR = (r"[,，]?\s*(?:或者|或是|或|还是|也可能是|也可能为|"
       r"(?<![A-Za-z])(?i:or|or\s+possibly|or\s+maybe|or\s+perhaps|ou|oder|atau)(?![A-Za-z]))")
#: The word for "and" or "or" between option letters, in the languages the letter readers know.
_JOINER_WORD = r"(?<![A-Za-z])(?i:and|or|dan|atau|et|ou|und|oder|y)(?![A-Za-z])"
_HEDGE_LETTERS = re.compile(
    r"(?<![A-Za-z])[A-Z][)）\]】]?(?![A-Za-z])\s*(?:项)?\s*" + _OR + r"\s*(?:选项|(?i:option))?\s*[(（\[【]?[A-Z](?![A-Za-z\u00c0-\u024f])"
)
_HEDGE_JOIN = re.compile(r"^\s*(?:罪)?\s*" + _OR + r"\s*(?:构成|是|为)?\s*$")
#: Two letters offered together, as alternatives or as a set ("A或C", "A和C", "A、C", "A/C").
_JOINED_LETTERS = re.compile(
    r"(?<![A-Za-z0-9])([A-Z])(?![A-Za-z0-9])\s*(?:项)?\s*(?:" + _OR + r"|[、/和与及])\s*(?:选项)?\s*([A-Z])(?![A-Za-z0-9])"
)
#: What joins two option texts offered together ("增值税或消费税", "增值税和消费税").
_JOINED_TEXTS = re.compile(r"^\s*(?:罪)?\s*(?:" + _OR + r"|[、/和与及]|以及)\s*(?:构成|是|为)?\s*$")


#: A denial right before a pair of letters ("而非B或D", "不是A或B"): it denies both.
_DENIED_BEFORE = re.compile(
    r"(?:而非|而不是|不是|并非|并不是|非|(?<![A-Za-z])(?i:not|nor|neither|rather\s+than|instead\s+of|except))"
    r"\s*(?:选项|(?i:options?))?\s*[(（\[【]?$"
)


class Hedge(Exception):
    """A statement offers two options ("B或D"): it gives no single answer."""


#: A statement that opens with a set of letters ("答案：C、D", "AB"): several options.
_LETTER_SET = re.compile(
    r"^[\s:：*#>】\],，]*(?:是|为|应选|选)?[\s:：*]*(?:选项)?\s*[(（\[【]?\s*([A-Z])[)）\]】]?\s*(?:项)?\s*(?:[、,，/和与及]|\s)?\s*"
    r"[(（\[【]?([A-Z])(?![A-Za-z\u00c0-\u024f])"  # no word's first letter ("C) Rüzgâr")
)


#: After a comma, a letter that opens a clause about its option ("答案：B，D项25%是基本税率"): no
#: second answer.
#: A word for "and"/"or" and the next letter continue the set ("A, B and C", "A, B dan C").
_NEXT_CLAUSE = re.compile(r"[A-Z](?!\s*" + _JOINER_WORD + r"\s+[(（\[]?[A-Z](?![A-Za-z]))\s*(?:项|选项)?\s*[^\s、,，/和与及A-Z)）\]】。.!！]")


#: Where an English sentence ends inside a statement ("C. Options A or B are wrong."): a full
#: stop, then a space and a capitalised word (a decimal point has no space after it).
_EN_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z][a-z])")


def hedged(body: str, named: Sequence[Named], lettered: bool, count: int = 26) -> bool:
    """Whether the statement ``body`` offers two options: its first sentence (in English, up
    to a full stop before the next capitalised sentence). A letter past the ``count`` options
    is none of them ("A) I, II ve III": a roman numeral in option A's text)."""
    if (end := _EN_SENTENCE_END.search(body)) is not None:
        body = body[: end.start()]
        limit = len(naming_form(body))  # the names are placed in the naming form
        named = [n for n in named if n[1] <= limit]
    if lettered and any(not _DENIED_BEFORE.search(body, 0, m.start())
                        and _options(re.findall(r"(?<![A-Za-z])[A-Z](?![a-z])", m.group(0)), count)
                        for m in _HEDGE_LETTERS.finditer(body)):
        return True  # "B或D"; not after a denial: "答案：C，而非B或D" denies both
    if lettered:
        pair = _LETTER_SET.match(body)
        comma = pair is not None and bool(re.search(r"[，,]", body[pair.end(1) : pair.start(2)]))
        if pair and pair.group(1) != pair.group(2) and _options((pair.group(1), pair.group(2)), count) \
                and not (comma and _NEXT_CLAUSE.match(body, pair.start(2))):
            return True
    haystack = naming_form(body)
    return any(  # not after a denial: "而不是逃税罪或抗税罪" denies both
        a[2] != b[2] and not a[3] and _HEDGE_JOIN.match(haystack[a[1] : b[0]])
        for a, b in pairwise(named)
    )


def _options(letters: Sequence[str], count: int) -> bool:
    """Every one of ``letters`` is the letter of one of the ``count`` options."""
    return all(ord(letter) - ord("A") < count for letter in letters)


def offered_with_another(
    body: str, index: int, count: int, lettered: bool, needles: Sequence[tuple[str, int]]
) -> bool:
    """``body`` gives option ``index`` only together with another one, as an alternative or
    in a set ("A或C", "A和C", "信息技术服务或建筑服务"): for a question of one answer, no
    answer. An option also given on its own elsewhere in ``body`` is not."""
    if lettered:
        text = without_negated_letters(body)
        pairs = [(m.span(), {letter_index(m.group(1), count), letter_index(m.group(2), count)})
                 for m in _JOINED_LETTERS.finditer(text)]  # fmt: skip
        pairs = [(span, both) for span, both in pairs if len(both) == 2 and None not in both]
        if any(index in both for _span, both in pairs):
            rest = text
            for (start, end), _both in reversed(pairs):
                rest = rest[:start] + " " + rest[end:]
            letter = string.ascii_uppercase[index]
            return not re.search(rf"(?<![A-Za-z0-9]){letter}(?![A-Za-z0-9])", rest)
    named = [n for n in named_choices(body, needles) if not n[3]]
    haystack = naming_form(body)
    joined = {i + k for i, (a, b) in enumerate(pairwise(named))
              if a[2] != b[2] and _JOINED_TEXTS.match(haystack[a[1] : b[0]]) for k in (0, 1)}  # fmt: skip
    return any(named[i][2] == index for i in joined) and not any(
        n[2] == index for i, n in enumerate(named) if i not in joined)  # fmt: skip


def lists_options(sentence: str, needles: Sequence[tuple[str, int]]) -> bool:
    """``sentence`` is nothing but two or more different options, named one after another
    ("NEGATIVE, NEUTRAL, POSITIVE", "HAWKISH / DOVISH"): the options written back, no answer."""
    named = named_choices(sentence, needles)
    if len({index for _start, _end, index, _negated in named}) < 2:
        return False
    haystack = naming_form(sentence)
    rest = "".join(haystack[end : following[0]] for (_s, end, _i, _n), following in pairwise([*named, (len(haystack), 0, 0, False)]))
    return not re.search(r"[^\W_]", haystack[: named[0][0]] + rest)


def says_none_correct(text: str, choices: Sequence[str]) -> bool:
    """The decisive statement says no option is correct (and names none itself): "以上均不正确",
    not "A、B都不对" (those two are wrong, the others not said to be)."""
    m = NONE_CORRECT_ZH.search(text)
    if not m or m.start() > 12:
        return False
    if any(NONE_CORRECT_ZH.search(fold_characters(str(c))) for c in choices):
        return False
    if re.match(r"以上|四个|所有|各|全部|选项|答案|无|没有|都不是", m.group()):  # says it of them all
        return True
    subject = re.split(r"[，,。；;！!？?\n]", text[: m.start()])[-1]
    letters = {c for c in re.findall(r"(?<![A-Za-z])[A-Z](?![A-Za-z])", subject)}
    return not letters or len(letters) >= len(choices)

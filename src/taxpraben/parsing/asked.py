"""What the question asks for, beside the number itself: the unit it counts in ("How many
gallons …": the value given in gallons is the one asked for), the years it names (the period
asked about: "FY2021" in an answer is no value) and a change, signed (a change given as "a
decrease of $340" is -340)."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from taxpraben.parsing.numbers import NumberMatch, find_numbers

__all__ = ["counted_in", "counted_noun", "counts_in", "named_years", "signed_change", "without_years"]


#: What a question counts: "How many gallons …", "how much money …" (the noun after "how many/much").
_HOW_MANY = re.compile(r"(?i:\bhow\s+(?:many|much)\s+([a-z]{3,}))")
#: Words after "how many/much" that name no unit ("how many more", "how much does").
_NOT_A_UNIT = frozenset({"more", "less", "fewer", "does", "did", "will", "would", "can", "could", "are", "was",
                         "were", "has", "have", "the", "times", "money", "total", "longer", "greater"})


@lru_cache(maxsize=1024)
def counted_noun(query: str) -> str | None:
    """The unit the question counts in ("gallons" for "How many gallons does she drink?"),
    singular, or None."""
    found = [m.group(1).lower() for m in _HOW_MANY.finditer(query)]
    if not found or found[-1] in _NOT_A_UNIT:
        return None
    word = found[-1]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def counts_in(text: str, end: int, unit: str) -> bool:
    """The number that ends at ``end`` of ``text`` counts in ``unit`` (``15 gallons``, ``one brother``)."""
    return re.match(r"\s*" + re.escape(unit) + r"(?:e?s)?(?![a-z])", text[end:], re.IGNORECASE) is not None


def counted_in(sentence: str, unit: str) -> NumberMatch | None:
    """The one value ``sentence`` gives in the asked unit ("15 gallons of water in 30 days" for
    gallons: 15), or None when it gives none or several."""
    hits = [n for n in find_numbers(sentence) if counts_in(sentence, n.end, unit)]
    return hits[0] if hits and len({n.value for n in hits}) == 1 else None


#: A year: four digits from 1900 to 2099, alone ("2021", "FY2021"), not part of an amount.
_YEAR_WRITTEN = re.compile(r"(?<![\d.,$¥€£])(?:FY|fy|Fiscal\s+|fiscal\s+)?((?:19|20)\d{2})(?![\d]|[.,]\d|\s*%)")
#: A year as a question names it: "FY2021", "fiscal 2020", "in 2019", "2019年", "2019-2021".
_YEAR_NAMED = re.compile(r"(?:\b(?:FY|fy)|(?i:fiscal|in|during|for|of|year|since|by|from|to|between|and)\s+)((?:19|20)\d{2})\b"
                         r"|(?<!\d)((?:19|20)\d{2})(?=\s*年|\s*[-–]\s*(?:FY)?(?:19|20)\d{2}\b)")
#: A question that asks for a year.
_ASKS_YEAR = re.compile(r"(?i:\b(?:which|what)\s+(?:fiscal\s+|calendar\s+)?year\b|\bwhen\b|\byear\s+did\b)|哪一?年|何年|年份")


@lru_cache(maxsize=1024)
def named_years(query: str) -> frozenset[str]:
    """The years a question names ("FY2021", "in 2019"), unless it asks for a year: a year it
    names is the period it asks about, not the amount asked for."""
    if not query or _ASKS_YEAR.search(query):
        return frozenset()
    years = {m.group(1) or m.group(2) for m in _YEAR_NAMED.finditer(query)}
    for m in _YEAR_RANGE.finditer(query):  # "FY2019 - FY2021" names 2020 too
        first, last = int(m.group(1)), int(m.group(2))
        if 0 < last - first <= _RANGE_YEARS:
            years.update(str(year) for year in range(first + 1, last))
    return frozenset(years)


#: A span of years a question names ("FY2019 - FY2021", "2018 to 2020"), at most this long.
_YEAR_RANGE = re.compile(r"(?<!\d)((?:19|20)\d{2})\s*(?:[-–~]|to|through|until|至|到)\s*(?:FY|fy)?((?:19|20)\d{2})(?!\d)")
_RANGE_YEARS = 10


def without_years(text: str, years: frozenset[str]) -> str:
    """``text`` with the question's own years blanked (offsets kept): "FY2021" is no value."""
    if not years:
        return text
    return _YEAR_WRITTEN.sub(lambda m: " " * len(m.group(0)) if m.group(1) in years else m.group(0), text)


#: A question that asks for a signed change ("What is the change in …", "the increase / (decrease)
#: in …", "the difference"), not for the size of a fall ("By how much did it decrease?").
_ASKS_CHANGE = re.compile(r"(?i:\bchange\b|\bincrease\s*/\s*\(?\s*decrease\b|\bdifference\b)")
_ASKS_FALL = re.compile(r"(?i:\bhow\s+much\s+(?:\w+\s+){0,8}(?:decrease|decline|drop|fall|fell|shrink|reduce)|\b(?:decrease|decline|reduction)\s+in\b)")
#: A fall given in words right before its amount: "a decrease of $340", "decreased by 12".
_FALL = re.compile(r"(?i:\b(?:decrease|decline|drop|reduction|fall)\s+of|\b(?:decreased|declined|dropped|fell|reduced)\s+by)\s*[$¥€£]?\s*$")


def signed_change(found: NumberMatch | None, text: str, query: str) -> NumberMatch | None:
    """``found`` (an amount read from ``text``), negative when the question asks for a change and
    ``text`` gives it as a fall ("… is a decrease of $340" for "What is the change in …?")."""
    if found is None or found.start < 0 or found.value <= 0 or not _ASKS_CHANGE.search(query) or _ASKS_FALL.search(query):
        return found
    return replace(found, value=-found.value) if _FALL.search(text[: found.start]) else found

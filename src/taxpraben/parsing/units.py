"""The unit an amount is asked and written in (万元, 千元, 元...).

The unit of a gold amount (:func:`gold_unit`, :class:`AnswerUnit`) is the one its text is
written in (``"17.14万元"``), else the one the query asks for (:func:`asked_unit`:
``单位：万元``, ``多少万元``, ``以万元为单位``, ``（万元）``), else 元. A predicted number written
with a multiplier or currency word (``28.50万元``, ``285000元``, ``2.8（万元）``) is converted
into that unit; a bare number is taken as already in it. Both sides are compared in that
unit. In an output's Markdown tables a unit named by a column's header or by a ``单位：万元``
line above the table goes with the column's bare numbers (:func:`tables_with_units`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING

from taxpraben.parsing.clean import fold_characters
from taxpraben.parsing.numbers import MULTIPLIERS, NumberMatch, parse_number

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

__all__ = ["YUAN", "AnswerUnit", "asked_unit", "gold_unit", "tables_with_units"]


#: Units an answer may be asked in, by the factor from 元.
_UNIT_FACTORS: dict[str, Decimal] = {
    "元": Decimal(1),
    **{m + "元": MULTIPLIERS[m] for m in ("千", "万", "十万", "百万", "千万", "亿")},
}
_UNIT_WORD = r"(?P<u>亿元|千万元|百万元|十万元|万元|千元|元)"
_UNIT_ASKED = re.compile(
    r"单位\s*[:：为是]?\s*(?:人民币)?\s*" + _UNIT_WORD
    + r"|多少\s*" + _UNIT_WORD.replace("?P<u>", "?P<u2>")
    + r"|以\s*" + _UNIT_WORD.replace("?P<u>", "?P<u3>") + r"\s*(?:为单位|计|表示)"
)
_UNIT_BRACKET = re.compile(r"[(（]\s*" + _UNIT_WORD + r"\s*[)）]")
_UNIT_LINE = re.compile(r"单位\s*[:：为是]?\s*(?:人民币)?\s*" + _UNIT_WORD)


@dataclass(frozen=True)
class AnswerUnit:
    """The unit an amount is asked in: its name (``"万元"``) and factor from 元 (10000)."""

    name: str
    factor: Decimal

    def convert(self, match: NumberMatch) -> NumberMatch:
        """``match`` expressed in this unit, so that it compares at N decimals of this unit.

        A number written with a multiplier or a currency word (``28.5万元``, ``285000元``)
        is in 元 and is divided by the factor; a bare number is taken as already in this
        unit; a percent is left alone.
        """
        if match.is_percent or self.factor == 1 or not (match.scaled or match.currency):
            return match
        return replace(match, value=match.value / self.factor)

    def show(self, value: Decimal) -> str:
        """A value in this unit as text for the samples file (``"28.5万元"``; 元 unnamed)."""
        text = format(value, "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text + ("" if self.factor == 1 else self.name)


YUAN = AnswerUnit("元", Decimal(1))


def asked_unit(query: str) -> AnswerUnit:
    """The unit the question asks the amount in (``单位：万元``, ``多少万元``, ``（万元）``).

    An explicit request wins over a unit in brackets; of several, the last one (the
    question usually comes last). 元 when the query names none.
    """
    query = fold_characters(query or "")
    for pattern in (_UNIT_ASKED, _UNIT_BRACKET):
        found = [m for m in pattern.finditer(query)]
        if found:
            m = found[-1]
            name = next(g for g in m.groups() if g)
            return AnswerUnit(name, _UNIT_FACTORS[name])
    return YUAN


def gold_unit(gold: JSONValue, query: str) -> AnswerUnit:
    """The unit of a gold amount: the one its text is written in (``"17.14万元"``), else
    the unit the query asks for, else 元."""
    if isinstance(gold, str):
        match = parse_number(gold)
        if match is not None and match.scaled:
            for name, factor in sorted(_UNIT_FACTORS.items(), key=lambda kv: -kv[1]):
                if name[:-1] and name[:-1] in match.text:
                    return AnswerUnit(name, factor)
    return asked_unit(query)


def tables_with_units(text: str) -> str:
    """``text`` with the unit of each Markdown table column whose header names one
    (``金额（万元）``, or a ``单位：万元`` line above the table) written after the column's
    bare numbers, so that they are read in that unit."""
    if "|" not in text or ("万" not in text and "千元" not in text and "亿" not in text):
        return text
    lines = text.split("\n")
    out: list[str] = []
    units: list[str | None] | None = None
    table_unit: str | None = None
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith("|"):
            units = None
            m = _UNIT_LINE.search(line)
            table_unit = m.group("u") if m else table_unit
            out.append(line)
            continue
        cells = stripped.strip("|").split("|")
        if units is None:  # the header row
            units = []
            for cell in cells:
                m = _UNIT_BRACKET.search(fold_characters(cell)) or _UNIT_ASKED.search(fold_characters(cell))
                units.append(next((g for g in m.groups() if g), None) if m else table_unit)
            out.append(line)
            continue
        if all(set(c.strip()) <= set("-: ") for c in cells):
            out.append(line)
            continue
        for i, cell in enumerate(cells):
            unit = units[i] if i < len(units) else None
            if unit and unit != "元" and _BARE_CELL.fullmatch(cell.strip()):
                cells[i] = f" {cell.strip()}{unit} "
        out.append("|" + "|".join(cells) + "|")
    return "\n".join(out)


_BARE_CELL = re.compile(r"-?\d[\d,]*(?:\.\d+)?")

"""The unit an amount is asked and written in (万元, 千元, 元...).

The unit of a gold amount (:func:`gold_unit`, :class:`AnswerUnit`) is the one its text is
written in (``"17.14万元"``), else the one the query asks for (:func:`asked_unit`:
``单位：万元``, ``多少万元``, ``以万元为单位``, ``（万元）``, Japanese ``百万円単位``), else the
unit the output gives the prompt's own figures (:func:`figures_unit`: "売上総利益は26,457百万円"
for the prompt's bare "26,457"), else 元. A predicted number written
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
from taxpraben.parsing.numbers import MULTIPLIERS, NumberMatch, numbers_equal, parse_number

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

__all__ = ["YUAN", "AnswerUnit", "asked_unit", "figures_scale", "figures_unit", "gold_unit", "same_amount_at_scale", "tables_with_units"]


#: Units an answer may be asked in, by the factor from the currency's unit (元, or Japan's 円;
#: 億 is Japan's 亿).
_UNIT_FACTORS: dict[str, Decimal] = {
    "元": Decimal(1),
    "円": Decimal(1),
    **{m + c: MULTIPLIERS[m] for m in ("千", "万", "十万", "百万", "千万", "亿") for c in "元円"},
    "億円": MULTIPLIERS["亿"],
}
_UNIT_WORD = r"(?P<u>亿元|千万元|百万元|十万元|万元|千元|元|億円|亿円|千万円|百万円|十万円|万円|千円|円)"
#: "单位：万元" (単位 in Japanese).
_UNIT_LABEL = r"[单単]位\s*[:：为是]?\s*(?:人民币)?\s*"
_UNIT_ASKED = re.compile(
    _UNIT_LABEL + _UNIT_WORD
    + r"|多少\s*" + _UNIT_WORD.replace("?P<u>", "?P<u2>")
    + r"|以\s*" + _UNIT_WORD.replace("?P<u>", "?P<u3>") + r"\s*(?:为单位|计|表示)"
    + r"|" + _UNIT_WORD.replace("?P<u>", "?P<u4>") + r"\s*単位"  # "金額は百万円単位で表示している"
)
_UNIT_BRACKET = re.compile(r"[(（]\s*" + _UNIT_WORD + r"\s*[)）]")
_UNIT_LINE = re.compile(_UNIT_LABEL + _UNIT_WORD)


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
    return _named_unit(query) or YUAN


def _named_unit(query: str) -> AnswerUnit | None:
    """The unit the query names for its amounts (:func:`asked_unit`), or None."""
    query = fold_characters(query or "")
    for pattern in (_UNIT_ASKED, _UNIT_BRACKET):
        found = [m for m in pattern.finditer(query)]
        if found:
            m = found[-1]
            name = next(g for g in m.groups() if g)
            return AnswerUnit(name, _UNIT_FACTORS[name])
    return None


#: An amount with a multiplier and a currency word ("26,457百万円", "3,095 百万元"): its figure
#: and its unit.
_SCALED_AMOUNT = re.compile(r"(?<![\d,.])(?P<figure>\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?[ \t]*"
                            r"(?P<unit>(?:千万|百万|十万|万|千|亿|億)[元円])")


def figures_unit(query: str, output: str) -> AnswerUnit | None:
    """The unit the output gives the prompt's own figures, where the prompt names none.

    A model that writes a figure of the prompt's table with a multiplier ("売上総利益は
    26,457百万円" for the table's bare "26,457") says in which unit the prompt's figures,
    and so the gold computed from them, are written: its answer "3,095百万円" is 3,095 in
    that unit, not 3,095,000,000. None when the output gives no prompt figure a unit, or
    gives them different ones.
    """
    if "万" not in output and "千" not in output and "亿" not in output and "億" not in output:
        return None
    query = fold_characters(query or "")
    units = set()
    for m in _SCALED_AMOUNT.finditer(fold_characters(output)):
        figure = re.escape(m.group("figure"))
        if re.search(r"(?<![\d,.])" + figure + r"(?![\d,]|\.\d|[ \t]*(?:千万|百万|十万|万|千|亿|億))", query):
            units.add(m.group("unit").replace("億", "亿") if m.group("unit").endswith("元") else m.group("unit"))
    if len(units) != 1:
        return None
    name = units.pop()
    return AnswerUnit(name, _UNIT_FACTORS[name])


def gold_unit(gold: JSONValue, query: str, output: str = "") -> AnswerUnit:
    """The unit of a gold amount: the one its text is written in (``"17.14万元"``), else
    the unit the query asks for, else the unit the output gives the prompt's own figures
    (:func:`figures_unit`), else 元."""
    if isinstance(gold, str):
        match = parse_number(gold)
        if match is not None and match.scaled:
            for name, factor in sorted(_UNIT_FACTORS.items(), key=lambda kv: -kv[1]):
                if name[:-1] and name[:-1] in match.text:
                    return AnswerUnit(name, factor)
    return _named_unit(query) or (figures_unit(query, output) if output else None) or YUAN


#: A prompt's statement that its figures are in thousands, millions or billions: "(in thousands)",
#: "(dollars in millions)", "$ in millions", "in thousands of dollars", "(€ thousands)", "($000s)".
_SCALE_DECLARED = re.compile(
    r"(?i:\bin\s+(?:[$€£]\s*)?(?P<w>thousands|millions|billions)\b"
    r"|[(（]\s*[$€£]\s*(?P<w2>thousands|millions|billions|000s|'000)\s*[)）])"
)
_SCALE_FACTORS = {"thousands": Decimal(10) ** 3, "millions": Decimal(10) ** 6, "billions": Decimal(10) ** 9,
                  "000s": Decimal(10) ** 3, "'000": Decimal(10) ** 3}
#: A figure of three or more digits written with thousands separators or none ("27,579", "8840").
_FIGURE = re.compile(r"(?<![\d,.])\d{1,3}(?:,\d{3})+(?![\d,]|\.\d)|(?<![\d,.])\d{3,}(?![\d,]|\.\d)")


def figures_scale(query: str, output: str) -> Decimal | None:
    """How many units one figure of the prompt counts where its figures are in thousands,
    millions or billions (the accounts' convention an English table states): the scale the
    prompt declares ("(in thousands)", "$ in millions"), else the one the output shows by
    writing a figure of the prompt in full ("$27,579,000" for the table's "27,579"). None when
    neither says."""
    declared = {(m.group("w") or m.group("w2")).lower() for m in _SCALE_DECLARED.finditer(query or "")}
    if len(declared) == 1:
        return _SCALE_FACTORS[declared.pop()]
    if declared or ",000" not in output:
        return None
    figures = {m.group(0) for m in _FIGURE.finditer(query or "") if "," in m.group(0)}
    shown = {zeros for figure in figures for zeros in (",000", ",000,000")
             if re.search(r"(?<![\d,.])" + re.escape(figure + zeros) + r"(?![\d,]|\.\d)", output)}
    if len(shown) != 1:
        return None
    return Decimal(10) ** (3 * shown.pop().count(","))


def same_amount_at_scale(match: NumberMatch, gold: NumberMatch, scale: Decimal, decimals: int) -> bool:
    """Whether ``match`` and ``gold`` are one amount, one written in full and the other in the
    prompt's figures of ``scale`` units ("$24,584,000" and the gold 24,584 of a table in
    thousands, either way round), compared at ``decimals`` places of the gold."""
    if match.is_percent or gold.is_percent:
        return False
    return any(numbers_equal(replace(match, value=value), gold, decimals=decimals, percent_as_fraction=False)
               for value in (match.value / scale, match.value * scale))


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

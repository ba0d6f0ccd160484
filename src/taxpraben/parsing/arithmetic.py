"""The value of an amount written as arithmetic: ``260000×0.05%×365``, ``(1,000+500)÷2``.

A field that should hold a number sometimes holds the formula instead (``"滞纳金":
260000*0.0005*365``): the answer is still determined, and a grader computes it. Only plain
arithmetic is taken: numbers (thousands separators, percentages, a trailing ``元``), ``+ - × ÷
* /``, brackets; anything else (a word, a date such as ``2024-06-30``, a result written after
``=``, which the number readers take as the stated answer) is not an expression here.

Why ``ast`` and not a library: the grammar is Python's own for these operators, and the walk
below allows nothing but numbers and the four operations, computed in ``Decimal`` so that
``0.1+0.2`` is ``0.3``.
"""

from __future__ import annotations

import ast
import re
from decimal import Decimal, DivisionByZero, InvalidOperation, localcontext

__all__ = ["evaluate_expression"]

_OPERATORS = {"×": "*", "÷": "/", "x": "*", "X": "*", "（": "(", "）": ")", "－": "-", "＋": "+"}
_ALLOWED = re.compile(r"^[\d\s.+\-*/()%]+$")
_OPERATOR = re.compile(r"\d\s*\)*\s*[-+*/]\s*\(*\s*[-+]?\d")
_GROUPED = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_DATE = re.compile(r"^\s*\d{4}\s*[-/]\s*\d{1,2}\s*[-/]\s*\d{1,2}\s*$")
_UNIT = re.compile(r"\s*元\s*$")


def evaluate_expression(text: str) -> Decimal | None:
    """The value of ``text`` when it is nothing but arithmetic with at least one operator;
    None otherwise (and for a division by zero)."""
    if len(text) > 200 or _DATE.match(text):
        return None
    body = _UNIT.sub("", text.strip())
    for written, operator in _OPERATORS.items():
        body = body.replace(written, operator)
    body = _GROUPED.sub("", body.replace("％", "%"))
    if not _ALLOWED.match(body) or not _OPERATOR.search(body):
        return None
    body = _PERCENT.sub(r"(\1/100)", body)
    try:
        tree = ast.parse(body, mode="eval")
    except (SyntaxError, ValueError):
        return None
    with localcontext() as context:
        context.prec = 34
        try:
            value = _value(tree.body)
        except (DivisionByZero, InvalidOperation, _NotArithmetic):
            return None
    return value if value is not None and value.is_finite() else None


class _NotArithmetic(Exception):
    pass


def _value(node: ast.expr) -> Decimal:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return Decimal(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        inner = _value(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return left / right
    raise _NotArithmetic

"""The value of an amount written as arithmetic: ``260000×0.05%×365``, ``(1,000+500)÷2``;
and of an answer written in closed form: ``\\frac{\\sqrt{66}}{6}``, ``5\\sqrt{3}/4``, ``sqrt(11/6)``,
``\\sqrt[3]{3/2}``, ``2π``, ``17/3``.

A field that should hold a number sometimes holds the formula instead (``"滞纳金":
260000*0.0005*365``): the answer is still determined, and a grader computes it. Only plain
arithmetic is taken: numbers (thousands separators, percentages, a trailing ``元``), ``+ - × ÷
* /``, brackets; anything else (a word, a date such as ``2024-06-30``, a result written after
``=``, which the number readers take as the stated answer) is not an expression here.

:func:`closed_form_value` reads a final answer that a grader evaluates before comparing it with
a decimal gold: a fraction, a root (``\\sqrt{}``, ``\\sqrt[n]{}``, ``sqrt()``, ``√``), a power
(``^``), ``π``, with implicit multiplication (``5\\sqrt{3}``, ``2π``). The whole text must be the
expression (a trailing aside "（或 …）"/"(or …)" with an equal form aside); a letter that is a
variable (``2x + 2``, ``\\frac{1}{k}``) makes it no number: the answer is then not a value.

Why ``ast`` and not a library: the grammar is Python's own for these operators, and the walk
below allows nothing but numbers, the four operations, powers, ``sqrt``/``root`` and ``pi``,
computed in ``Decimal`` so that ``0.1+0.2`` is ``0.3`` (sympy would parse more, at the cost of a
large dependency and of evaluating far more than a grader would accept as an answer).
"""

from __future__ import annotations

import ast
import re
from decimal import Decimal, DivisionByZero, InvalidOperation, localcontext

__all__ = ["closed_form_value", "evaluate_expression", "symbolic_answer"]

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


#: ``\\pi`` to 34 digits.
_PI = Decimal("3.141592653589793238462643383279503")
_LATEX_DROP = re.compile(r"\\(?:left|right|displaystyle|,|;|!|:|\s)|\$|\\[()\[\]]")
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*")
_LATEX_SQRT = re.compile(r"\\sqrt\s*(?:\[(?P<n>[^\]]{1,8})\])?\s*")
_ASIDE = re.compile(r"\s*[（(]\s*(?:或|即|或者|亦即|等价|or\b|i\.e\.|equivalently)[^()（）]*[)）]\s*$", re.IGNORECASE)
_CLOSED_ALLOWED = re.compile(r"^[\d\s.+\-*/()%,^]*$")
_IMPLICIT = re.compile(r"(?<=[\d)])\s*(?=[(a-z])|(?<=\))\s*(?=\d)")


def _group(text: str, at: int) -> tuple[str, int] | None:
    """The content of the brace group opening at ``text[at]`` and the index past it."""
    if at >= len(text) or text[at] != "{":
        return None
    depth = 0
    for i in range(at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[at + 1 : i], i + 1
    return None


def _latex_to_python(text: str) -> str | None:
    """``\\frac{a}{b}`` -> ``((a)/(b))``, ``\\sqrt[n]{a}`` -> ``root((a),(n))``, ``\\sqrt{a}``
    -> ``sqrt((a))``, ``^{a}`` -> ``**(a)``, ``\\pi``/``π`` -> ``pi``, ``\\times``/``\\cdot``
    -> ``*``; None for a command it does not know."""
    out: list[str] = []
    i = 0
    while i < len(text):
        frac = _LATEX_FRAC.match(text, i)
        if frac:
            first = _group(text, frac.end())
            second = _group(text, first[1]) if first else None
            if first is None or second is None:
                return None
            a, b = _latex_to_python(first[0]), _latex_to_python(second[0])
            if a is None or b is None:
                return None
            out.append(f"(({a})/({b}))")
            i = second[1]
            continue
        root = _LATEX_SQRT.match(text, i)
        if root:
            group = _group(text, root.end())
            if group is None:
                return None
            inner = _latex_to_python(group[0])
            degree = _latex_to_python(root.group("n")) if root.group("n") else None
            if inner is None or (root.group("n") and degree is None):
                return None
            out.append(f"root(({inner}),({degree}))" if degree else f"sqrt(({inner}))")
            i = group[1]
            continue
        if text.startswith("^{", i):
            group = _group(text, i + 1)
            if group is None:
                return None
            inner = _latex_to_python(group[0])
            if inner is None:
                return None
            out.append(f"**({inner})")
            i = group[1]
            continue
        for written, python in (("\\pi", "pi"), ("\\times", "*"), ("\\cdot", "*"), ("\\div", "/")):
            if text.startswith(written, i):
                out.append(f" {python} ")
                i += len(written)
                break
        else:
            if text[i] == "\\":
                return None  # a command with no value here (\\ln, \\infty, \\text, ...)
            out.append({"{": "(", "}": ")", "^": "**", "π": " pi ", "√": " sqrt", "×": "*", "÷": "/", "·": "*"}.get(text[i], text[i]))
            i += 1
    return "".join(out)


_ROOT_SIGN = re.compile(r"sqrt\s*(?=\d)(\d+(?:\.\d+)?)")


def closed_form_value(text: str) -> Decimal | None:
    """The value of ``text`` when the whole of it is an answer in closed form (module
    docstring); None for anything else, for plain numbers (read as numbers elsewhere) and for
    a root of a negative number or a division by zero."""
    if not text or len(text) > 200 or _DATE.match(text.strip(" .。$")):
        return None
    body = _ASIDE.sub("", _LATEX_DROP.sub(" ", text)).strip().strip("。.*").strip()
    python = _latex_to_python(body)
    if python is None:
        return None
    python = _ROOT_SIGN.sub(r"sqrt(\1)", python)  # √3 -> sqrt(3)
    words = re.sub(r"(?<![a-z])(?:sqrt|root|pi)(?![a-z])", "", python)
    if re.search(r"[^\d\s.+\-*/()%,^]", words) or not re.search(r"[+\-*/^]|sqrt|root|pi", python.lstrip("-+ ")):
        return None
    if not re.search(r"\d|pi", python):
        return None
    python = _GROUPED.sub("", python)
    python = _IMPLICIT.sub("*", python)
    python = re.sub(r"\)\s*(?=sqrt|root|pi)|(?<=pi)\s*(?=[\d(]|sqrt|root)", lambda m: m.group(0) + "*", python)
    python = re.sub(r"(?<=\d)\s+(?=sqrt|root|pi)", "*", python)
    python = _PERCENT.sub(r"(\1/100)", python)
    try:
        tree = ast.parse(python.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    with localcontext() as context:
        context.prec = 34
        try:
            value = _closed_value(tree.body)
        except (DivisionByZero, InvalidOperation, _NotArithmetic, OverflowError):
            return None
    if not value.is_finite():
        return None
    with localcontext() as context:
        context.prec = 15  # what a grader carries: 1.35400640077266, not 34 digits
        return (+value).normalize()


def _closed_value(node: ast.expr) -> Decimal:
    if isinstance(node, ast.Name) and node.id == "pi":
        return _PI
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        args = [_closed_value(a) for a in node.args]
        if node.func.id == "sqrt" and len(args) == 1 and args[0] >= 0:
            return args[0].sqrt()
        if node.func.id == "root" and len(args) == 2 and args[1] == args[1].to_integral_value() and args[1] > 0:
            base, degree = args
            if base < 0 and degree % 2 == 1:
                return -((-base) ** (1 / degree))
            if base >= 0:
                return base ** (1 / degree)
        raise _NotArithmetic
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, power = _closed_value(node.left), _closed_value(node.right)
        if abs(power) > 64 or (base < 0 and power != power.to_integral_value()):
            raise _NotArithmetic
        return base ** power
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        inner = _closed_value(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        left, right = _closed_value(node.left), _closed_value(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        return left * right if isinstance(node.op, ast.Mult) else left / right
    return _value(node)


#: What a stated value follows: a copula or an equals sign ("… is", "=", "为", "是", "等于").
_COPULA = re.compile(r"(?<![A-Za-z])(?:is|are|was|were|equals?|be|approaches|tends\s+to)(?![A-Za-z])|[=≈]|为|是|等于")
#: Where a sentence's own statement ends and a clause about it begins (", where w is the wage").
_ASIDE_CLAUSE = re.compile(r"[,，;；]\s*(?:where|which|with|since|because|given|如果|其中|因为)(?![A-Za-z])")
_UNIT_TAIL = re.compile(r"\s+[A-Za-z°µ][A-Za-z/^·\d\s.]*$")
#: A variable in an expression: a lone letter beside an operator ("/ m", "x +", "^x") or after a
#: digit ("3y", "5w"), an absolute value bar ("|S|"); ``e`` is Euler's number, not a variable.
_VARIABLE = re.compile(
    r"[-+*/^×÷=]\s*[(|{]?\s*(?!e(?![A-Za-z]))[A-Za-z](?![A-Za-z])|(?<![A-Za-z\\])(?!e(?![A-Za-z]))[A-Za-z]\s*[-+*/^×÷]\s*[\d({A-Za-z]"
    r"|\d(?!e(?![A-Za-z]))[A-Za-z](?![A-Za-z])|\|[A-Za-z]\|"
)
#: A number and its unit ("22.1 m", "7.22 m/s2", "$36,000", "12%"): a value, not an expression.
_NUMBER_UNIT = re.compile(r"^[-+−]?[$¥€£]?\s*\d[\d,]*(?:\.\d+)?\s*%?\s*(?:[A-Za-z°µ][A-Za-z/^·\d\s.]*)?$")

#: A remark in brackets, in words ("(representing the EPS, since the price is missing)"): an aside,
#: not part of the value; a bracketed term of an expression ("(3y-1)") has no such words.
_PROSE_IN_BRACKETS = re.compile(r"[(（][^()（）]*?[A-Za-z\u4e00-\u9fff]{2,}\s+[A-Za-z\u4e00-\u9fff]{2,}\s+[A-Za-z\u4e00-\u9fff]{2,}[^()（）]*[)）]")
#: A number followed by words: what it counts or measures, not an expression.
_NUMBER_THEN_WORDS = re.compile(r"^[-+−]?[$¥€£]?\s*\d[\d,]*(?:\.\d+)?\s*%?\s+[A-Za-z\u4e00-\u9fff]{2,}")
#: A value with a note in brackets after it: what precedes the note, and the note.
_TRAILING_NOTE = re.compile(r"^(.*?\S)\s*[（(][^()（）]*[)）]$")


def symbolic_answer(sentence: str) -> bool:
    """The value ``sentence`` states (what follows its last copula or equals sign, or the
    whole of it when it has none) is an
    expression in a variable ("the answer is 2 * (3y-1)", "a = 1050 / m", "l = 320 + 5w"):
    the quantity asked for is not given as a number."""
    sentence = _PROSE_IN_BRACKETS.sub(lambda m: " " * len(m.group(0)), sentence)  # "$1.31 (representing …)"
    aside = _ASIDE_CLAUSE.search(sentence)
    sentence = sentence[: aside.start()] if aside else sentence
    copulas = list(_COPULA.finditer(sentence))
    # a statement's body after its marker ("The answer is| 2 * (3y-1)") is the value itself
    value = _LATEX_DROP.sub(" ", sentence[copulas[-1].end():] if copulas else sentence).strip().rstrip("。.!！ ").strip("*$` ").lstrip(":：").strip()
    if _NUMBER_THEN_WORDS.match(value):
        return False  # "33,564,640 spontaneous fissions of U-238": a number and what it counts
    aside_note = _TRAILING_NOTE.match(value)
    if aside_note and _NUMBER_UNIT.match(aside_note.group(1)):
        return False  # a number with a note in brackets after it ("366（3aa3fbd6）"): the number is stated
    if not value or re.search(r"[\u3400-\u9fff]", value) or _NUMBER_UNIT.match(value) or closed_form_value(value) is not None \
            or closed_form_value(_UNIT_TAIL.sub("", value)) is not None:  # 1.28 × 10^-5 V/K
        return False
    return bool(_VARIABLE.search(value)) and bool(re.search(r"\d|[A-Za-z]", value))

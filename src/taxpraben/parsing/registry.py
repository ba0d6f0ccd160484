"""The reading rules' registry: a rule is declared once, beside its code.

A rule is one :class:`Rule`: its name, the reading kinds it reads, its tier, its
confidence, what it reads (``description``), outputs it reads (``examples``) and outputs it
must leave alone. :func:`register_rule` declares one (and refuses a name declared before,
naming both places); :meth:`Rule.reads` registers the rule's *attempt* for a reading kind,
the function a chain runs (:mod:`taxpraben.parsing.chain`)::

    ANSWER_TAG = register_rule(
        "tag.answer", kinds=("number",), tier=2, confidence="high",
        description="The number inside an <answer>...</answer> tag.",
        examples=(Example("number", "<answer>44000</answer>", "44000"),),
    )

    @ANSWER_TAG.reads("number")
    def _answer_tag(view: NumberView) -> Reading | None:
        ...
        return Reading(found, rule=ANSWER_TAG.name, source=...)

The built-in rules are declared in the reader modules (:mod:`taxpraben.parsing.readers`);
a plugin declares its own the same way (``taxpraben.register_rule``), in a module that
``$TAXPRABEN_PLUGINS`` or the ``taxpraben.plugins`` entry points name. Everything that lists
or checks rules (:mod:`taxpraben.parsing.rules`, ``taxpraben rules``, the example tests)
reads this registry. Pure data and lookups; no I/O.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, get_args

__all__ = [
    "EXAMPLE_CONTEXT",
    "READING_KINDS",
    "Comparison",
    "Confidence",
    "Example",
    "ReadingKind",
    "Rule",
    "RuleError",
    "attempt_names",
    "attempt_of",
    "confidence_of",
    "deciding",
    "generation",
    "register_rule",
    "registered_rules",
    "rule_named",
    "unregister_rule",
]

ReadingKind = Literal["label", "letters", "number", "span", "fields", "text"]
#: The reading kinds, in the order the readers are listed.
READING_KINDS: tuple[ReadingKind, ...] = get_args(ReadingKind)
Confidence = Literal["high", "low"]
#: How what a rule reads is compared with the gold: ``taxpraben`` (this project's: an
#: option's label, a number in the gold's unit, a set of letters, a phrase) or ``taxben``
#: (TaxBen's, flaws included; see :mod:`taxpraben.parsing.rules`).
Comparison = Literal["taxpraben", "taxben"]

#: An attempt of any reading kind: each takes its own kind's view (LabelView, NumberView, ...), so
#: the registry, which holds them all, knows them only as callables; a kind's chain calls them.
AnyAttempt = Callable[..., Any]
AttemptT = TypeVar("AttemptT", bound=AnyAttempt)


class RuleError(ValueError):
    """A rule that cannot be registered (a name declared twice, a kind no reader has, ...)."""


@dataclass(frozen=True)
class Example:
    """An output and what its kind's whole chain must read from it (``expect``: the
    extracted value as samples.jsonl writes it, None for a format failure). ``kind``: the
    reading kind the example is for."""

    kind: ReadingKind
    output: str
    expect: str | None
    #: The question it answers, when not its kind's (a key of
    #: :data:`EXAMPLE_CONTEXT`).
    context: str | None = None


@dataclass(frozen=True)
class Rule:
    """One named reading rule (see the module docstring)."""

    name: str
    kinds: tuple[ReadingKind, ...]
    #: Its place among the rule classes: 0 vetoes that come first (copies, invented
    #: questions), 1 JSON answers, 2 final statements, 3 answer lines and bold answers,
    #: 4 conclusions, 5 lead sentences, 6 fallbacks, 7 the vetoes that end a chain.
    tier: int
    confidence: Confidence
    description: str
    #: Outputs this rule reads (the chain must read them by this rule, with ``expect``).
    examples: tuple[Example, ...]
    #: Outputs this rule must leave alone: the chain reads them otherwise (another rule or
    #: no answer), with ``expect``.
    leaves_alone: tuple[Example, ...] = ()
    #: How what it reads is compared with the gold (vetoes read nothing: any chain's).
    comparison: Comparison = "taxpraben"
    #: For a veto: the format-failure reason it stands for wherever a reader fails for that
    #: reason (``"copy of the prompt"``), so that the reason names its rule (:func:`deciding`).
    decides: str | None = None
    #: Where it was declared (``file:line``), for messages.
    declared_at: str = field(default="", compare=False)

    @property
    def veto(self) -> bool:
        return self.name.startswith("veto.")

    def reads(self, *kinds: ReadingKind) -> Callable[[AttemptT], AttemptT]:
        """A decorator: the function is this rule's attempt for each of ``kinds`` (a
        function of that kind's view of one output: None when the rule does not apply, else
        a :class:`~taxpraben.parsing.region.Reading`). RuleError for a kind that already has
        an attempt of this rule."""

        def register(attempt: AttemptT) -> AttemptT:
            for kind in kinds:
                _add_attempt(self, kind, attempt)
            return attempt

        return register


#: The question every example of a kind answers: label (TaxSCQ), letters (TaxMCQ), number
#: (TaxCalc), span (TaxRead), fields (TaxInspect).
EXAMPLE_CONTEXT: dict[str, dict[str, object]] = {
    "label": {
        "query": "以下是中国税法考试中的单项选择题，请选出唯一正确的选项。\n题目：下列服务中，适用6%增值税税率的是（ ）。\n"
                 "A. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务\n答案：",
        "choices": ["有形动产租赁服务", "不动产租赁服务", "信息技术服务", "建筑服务"],
    },
    "label-rates": {
        "query": "以下是中国税法考试中的单项选择题。\n题目：小规模纳税人销售自己使用过的固定资产，减按（ ）征收率征收增值税。\n"
                 "A. 2%\nB. 3%\nC. 5%\nD. 1%\n答案：",
        "choices": ["2%", "3%", "5%", "1%"],
    },
    "label-numbers": {
        "query": "以下是单项选择题。\n题目：某纳税人本月有几笔应税收入？\nA. 5\nB. 10\nC. 15\nD. 20\n答案：",
        "choices": ["5", "10", "15", "20"],
    },
    "true-false": {
        "query": "Question: Is the statement true? Consider the matrix A = [[1, 4], [4, 1]]: is it positive definite, "
                 "and does aliasing occur when it is sampled above twice its highest frequency?",
        "choices": ["True", "False"],
    },
    "label-months": {
        "query": "以下是单项选择题。\n题目：纳税人因有特殊困难不能按期缴纳税款的，经批准可以延期缴纳，但最长不得超过（ ）。\n"
                 "A. 1个月\nB. 3个月\nC. 6个月\nD. 15个月\n答案：",
        "choices": ["1个月", "3个月", "6个月", "15个月"],
    },
    "label-numbered": {
        "query": "Given the family relationships:\n* Diane is Victoria's parent.\n* Danielle is Diane's parent.\n"
                 "What is Danielle's relationship to Diane?\nSelect the correct answer:\n1. parent\n2. child\n"
                 "Enclose the selected answer number in the <ANSWER> tag, for example: <ANSWER>1</ANSWER>.",
        "choices": ["parent", "child"],
    },
    "letters": {
        "query": "以下是中国税务考试中的多项选择题，请选出所有正确的选项。\n根据增值税法律制度的规定，一般纳税人提供的下列服务中，"
                 "适用9%税率的有（  ）。\nA. 交通运输服务\nB. 不动产租赁服务\nC. 有形动产租赁服务\nD. 建筑服务\nE. 金融服务",
    },
    "number": {
        "query": "某公司为增值税一般纳税人，2024年5月销售货物取得不含税销售额800000元，适用税率13%，当月取得增值税专用发票注明的"
                 "可抵扣进项税额60000元。请计算该公司当月应纳增值税额（单位：元）。",
    },
    "span": {
        "query": "请阅读以下税收法规材料，并简要回答问题。\n\n材料：纳税人未按照规定期限缴纳税款的，税务机关除责令限期缴纳外，"
                 "从滞纳税款之日起，按日加收滞纳税款万分之五的滞纳金。\n\n问题：税务机关按日加收滞纳金的比例是多少？",
        "text": "纳税人未按照规定期限缴纳税款的，税务机关除责令限期缴纳外，从滞纳税款之日起，按日加收滞纳税款万分之五的滞纳金。",
    },
    "span-template": {
        "query": "Answer in the format: The ’item’ is in ’location’. Do not write anything else.\n"
                 "Context: John went to the kitchen. John took the apple.\n\nQuestion: Where is the apple?",
        "text": "John went to the kitchen. John took the apple.",
    },
    "fields": {
        "query": "请阅读以下税务稽查案例，判断违法行为的性质，计算少缴税款。\n案例：A公司通过个人账户收取货款，隐匿含税销售收入"
                 "2,260,000元，未申报纳税，适用13%的税率。\n请严格按照以下JSON格式输出：\n"
                 '{"违法性质": "", "少缴税款": 0.00}',
    },
    "text": {"query": "小规模纳税人的增值税征收率是多少？"},
}


_RULES: dict[str, Rule] = {}
#: Reading kind -> rule name -> attempt, in the order they were registered.
_ATTEMPTS: dict[str, dict[str, AnyAttempt]] = {kind: {} for kind in READING_KINDS}
#: Bumped at every change, so that chains built before are built again (chain.chain_for).
_GENERATION = [0]


def _caller(depth: int) -> str:
    frame = sys._getframe(depth + 1)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _checked_kind(kind: str, what: str) -> ReadingKind:
    if kind not in READING_KINDS:
        raise RuleError(f"{what}: {kind!r} is no reading kind (the kinds: {', '.join(READING_KINDS)})")
    return kind


def register_rule(
    name: str,
    *,
    kinds: tuple[ReadingKind, ...],
    tier: int,
    confidence: Confidence,
    description: str,
    examples: tuple[Example, ...],
    leaves_alone: tuple[Example, ...] = (),
    comparison: Comparison = "taxpraben",
    attempts: Mapping[ReadingKind, AnyAttempt] | None = None,
    decides: str | None = None,
) -> Rule:
    """Declare the rule ``name`` (the fields of :class:`Rule`) and return it; ``attempts``:
    its attempt for each reading kind (or register them with :meth:`Rule.reads`); ``decides``:
    for a veto, the format-failure reason it stands for (one veto a reason).

    A rule is put in a chain by name: a named chain (:mod:`taxpraben.parsing.chain`) or a
    task spec's ``reading.chain``. RuleError for a name declared before (the message names
    both places), an unknown kind, confidence or comparison, a tier outside 0-7, no
    example, or an example of a kind the rule does not read."""
    where = _caller(1)
    what = f"rule {name!r} ({where})"
    if name in _RULES:
        raise RuleError(f"rule {name!r} is declared twice: at {_RULES[name].declared_at} and at {where} "
                        "(a rule's name is declared once: rename one, or unregister_rule() the other first)")
    if not name or name != name.strip() or name.startswith("rule:"):
        raise RuleError(f"{what}: a rule's name is a word such as 'tag.answer-tag' (no 'rule:' prefix)")
    for kind in kinds:
        _checked_kind(kind, what)
    if confidence not in get_args(Confidence):
        raise RuleError(f"{what}: confidence {confidence!r} is none of {', '.join(get_args(Confidence))}")
    if comparison not in get_args(Comparison):
        raise RuleError(f"{what}: comparison {comparison!r} is none of {', '.join(get_args(Comparison))}")
    if not 0 <= tier <= 7:
        raise RuleError(f"{what}: tier {tier} is outside 0-7 (see Rule.tier)")
    if not examples:
        raise RuleError(f"{what}: a rule needs at least one example of what it reads")
    for example in (*examples, *leaves_alone):
        if example.kind not in kinds:
            raise RuleError(f"{what}: its example {example.output!r} is for {example.kind}, which it does not read")
    if decides is not None:
        if not name.startswith("veto."):
            raise RuleError(f"{what}: only a veto decides a failure reason ({decides!r})")
        other = deciding(decides)
        if other is not None:
            raise RuleError(f"{what}: the failure {decides!r} is decided by {other.name!r} already ({other.declared_at})")
    rule = Rule(name, tuple(kinds), tier, confidence, description, tuple(examples), tuple(leaves_alone), comparison,
                decides, declared_at=where)
    _RULES[name] = rule
    _GENERATION[0] += 1
    for kind, attempt in (attempts or {}).items():
        _add_attempt(rule, kind, attempt)
    return rule


def deciding(failure: str) -> Rule | None:
    """The veto that stands for the format-failure reason ``failure`` (its ``decides``), or None."""
    return next((rule for rule in _RULES.values() if rule.decides == failure), None)


def _add_attempt(rule: Rule, kind: str, attempt: AnyAttempt) -> None:
    checked = _checked_kind(kind, f"rule {rule.name!r}")
    if _RULES.get(rule.name) is not rule:
        raise RuleError(f"rule {rule.name!r} is not registered (register_rule first)")
    if rule.name in _ATTEMPTS[checked]:
        raise RuleError(f"rule {rule.name!r} already has an attempt for {checked} "
                        f"({_ATTEMPTS[checked][rule.name].__qualname__}); one attempt per reading kind")
    _ATTEMPTS[checked][rule.name] = attempt
    _GENERATION[0] += 1


def unregister_rule(name: str) -> None:
    """Remove the rule ``name`` and its attempts (nothing when there is none)."""
    if _RULES.pop(name, None) is not None:
        for attempts in _ATTEMPTS.values():
            attempts.pop(name, None)
        _GENERATION[0] += 1


def registered_rules() -> tuple[Rule, ...]:
    """The rules registered so far, in the order they were declared."""
    return tuple(_RULES.values())


def rule_named(name: str) -> Rule | None:
    """The rule of that name (``"rule:"`` prefix allowed), or None."""
    return _RULES.get(name.removeprefix("rule:"))


def confidence_of(name: str | None) -> Confidence | None:
    """A rule's confidence (None for no rule or an unknown one)."""
    rule = rule_named(name) if name else None
    return rule.confidence if rule is not None else None


def attempt_of(name: str, kind: str) -> AnyAttempt | None:
    """The attempt of rule ``name`` for reading kind ``kind``, or None."""
    return _ATTEMPTS.get(kind, {}).get(name)


def attempt_names(kind: str) -> tuple[str, ...]:
    """The rules that have an attempt for ``kind``, in the order they were registered."""
    return tuple(_ATTEMPTS.get(kind, {}))


def generation() -> int:
    """A number that changes whenever a rule or an attempt is registered or removed."""
    return _GENERATION[0]

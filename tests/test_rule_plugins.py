"""A rule is one registered object: a plugin adds one with ``taxpraben.register_rule`` (called
in a test, or imported through an entry point of the ``taxpraben.plugins`` group), a task's
``reading.chain`` puts it in a chain, its examples run through the same checks as the
built-in rules', and ``taxpraben rules`` lists it with its description and examples as
written. A name declared twice is refused, naming both places; a rule's name is written once
in the package."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import taxpraben
from taxpraben.cli import app
from taxpraben.parsing.chain import ChainError
from taxpraben.parsing.numbers import parse_number
from taxpraben.parsing.readers.number import NumberView, read_final_number
from taxpraben.parsing.region import Reading
from taxpraben.parsing.registry import Example, Rule, RuleError, unregister_rule
from taxpraben.parsing.rules import CHAINS, RULES, placed_in, rule_named
from taxpraben.scoring.items import prepare_item
from taxpraben.task_spec import ReadingOptions
from taxpraben.tasks.registry import check_reading_chain
from test_rules import (
    REGISTRY,
    SRC,
    assert_left_alone,
    assert_read_by_its_rule,
    example_cases,
    example_record,
    read,
)

_TAG = re.compile(r"⟦(.*?)⟧")


def table_rows(output: str) -> list[list[str]]:
    """The rows of the table ``taxpraben rules`` prints, each a list of its cells' texts with
    all whitespace removed (a long cell is wrapped over lines)."""
    rows: list[list[str]] = []
    current: list[str] | None = None
    for line in output.splitlines():
        if line.startswith("│"):
            cells = line.strip("│").split("│")
            current = [(current[i] if current else "") + "".join(cell.split()) for i, cell in enumerate(cells)]
        elif current is not None:
            rows.append(current)
            current = None
    return rows


def row_of(output: str, name: str) -> list[str]:
    return next(row for row in table_rows(output) if row[0] == name)


def bare(text: str) -> str:
    return "".join(text.split())


def _answer_tag(view: NumberView) -> Reading | None:
    """The number inside ``⟦...⟧`` (a tag style no built-in rule knows)."""
    m = _TAG.search(view.cleaned)
    found = parse_number(m.group(1)) if m else None
    return None if m is None or found is None else Reading(found, rule="tag.answer", source=m.group(0))


def _declare() -> Rule:
    return taxpraben.register_rule(
        "tag.answer", kinds=("number",), tier=2, confidence="high",
        description="The number inside ⟦...⟧, a tag like [ANS]...[/ANS] (a [b]bold[/b] word stays as written).",
        examples=(Example("number", "销项税额104000元，进项税额60000元。⟦44000⟧", "44000"),
                  Example("number", "⟦44000⟧元", "44000")),
        leaves_alone=(Example("number", "答案：44000元 ⟦?⟧", "44000"),),
        attempts={"number": _answer_tag},
    )


@pytest.fixture
def tag_rule() -> Iterator[Rule]:
    rule = _declare()
    yield rule
    unregister_rule(rule.name)


def test_a_registered_rule_reads_its_examples_in_a_task_chain(tag_rule: Rule) -> None:
    assert rule_named("tag.answer") is tag_rule and tag_rule in list(RULES)
    chain = placed_in(CHAINS["number"], tag_rule)
    assert chain.index("tag.answer") == chain.index("final.boxed") + 1  # after the final statements
    spec = dataclasses.replace(REGISTRY["TaxCalc"], reading=ReadingOptions(chain=list(chain)))
    check_reading_chain(spec, "number")  # a spec's reading.chain may name it
    example = tag_rule.examples[0]
    item = prepare_item(spec, example_record(example, spec), 0, example.output, None)
    assert (item.read_by, item.extracted, item.confidence) == ("rule:tag.answer", "44000", "high")
    assert item.evidence is not None
    start, end = item.evidence  # the number inside the tag
    assert example.output[start - 1:end + 1] == "⟦44000⟧"
    # the default chain does not hold it: there the last number reads, with low confidence
    assert (read(example).read_by, read(example).confidence) == ("rule:number.last-number", "low")


def test_a_registered_rules_examples_run_through_the_same_checks(tag_rule: Rule) -> None:
    cases = example_cases([tag_rule])
    assert len(cases) == 2
    for case in cases:
        assert_read_by_its_rule(*case.values)
    for case in example_cases([tag_rule], leaves_alone=True):
        assert_left_alone(*case.values)


def test_the_examples_check_fails_for_a_shadowed_rule(tag_rule: Rule) -> None:
    """Put where an earlier rule reads its examples first, the check fails: it can fail."""
    shadowed = ("number.last-number", "tag.answer", "veto.no-answer")
    with pytest.raises(AssertionError):
        assert_read_by_its_rule(tag_rule, tag_rule.examples[0], shadowed)


def test_a_chain_naming_an_unregistered_rule_is_refused() -> None:
    spec = dataclasses.replace(REGISTRY["TaxCalc"], reading=ReadingOptions(chain=["tag.answer", "veto.no-answer"]))
    with pytest.raises(ValueError, match=r"'tag\.answer' is no rule"):
        check_reading_chain(spec, "number")
    with pytest.raises(ChainError, match=r"number reader has no rule tag\.answer"):
        read_final_number("⟦1⟧", chain=("tag.answer", "veto.no-answer"))


def test_a_chain_naming_a_rule_twice_is_refused(tag_rule: Rule) -> None:
    spec = dataclasses.replace(REGISTRY["TaxCalc"],
                               reading=ReadingOptions(chain=["tag.answer", "tag.answer", "veto.no-answer"]))
    with pytest.raises(ValueError, match=r"tag\.answer named twice"):
        check_reading_chain(spec, "number")


def test_a_name_declared_twice_is_refused_naming_both_places(tag_rule: Rule) -> None:
    with pytest.raises(RuleError) as caught:
        _declare()
    message = str(caught.value)
    assert f"{Path(__file__)}:" in message and tag_rule.declared_at in message
    with pytest.raises(RuleError) as builtin:
        taxpraben.register_rule("final.boxed", kinds=("number",), tier=2, confidence="high", description="mine",
                                examples=(Example("number", "1", "1"),))
    assert str(SRC / "parsing" / "readers" / "shared.py") in str(builtin.value) and str(Path(__file__)) in str(builtin.value)
    assert rule_named("final.boxed") is not None and rule_named("final.boxed").description != "mine"  # type: ignore[union-attr]


@pytest.mark.parametrize(("change", "error"), [
    ({"kinds": ("numbers",)}, "'numbers' is no reading kind"),
    ({"confidence": "medium"}, "confidence 'medium'"),
    ({"tier": 9}, "tier 9 is outside 0-7"),
    ({"examples": ()}, "at least one example"),
    ({"examples": (Example("label", "C", "C"),)}, "is for label, which it does not read"),
    ({"decides": "no answer found"}, "only a veto decides a failure reason"),
])
def test_a_rule_that_cannot_be_read_is_refused_when_declared(change: dict[str, object], error: str) -> None:
    fields: dict[str, object] = {"kinds": ("number",), "tier": 2, "confidence": "high", "description": "d",
                                 "examples": (Example("number", "1", "1"),)}
    with pytest.raises(RuleError, match=re.escape(error)):
        taxpraben.register_rule("tag.bad", **{**fields, **change})  # type: ignore[arg-type]
    assert rule_named("tag.bad") is None


def test_a_failure_reason_names_the_veto_that_decides_it() -> None:
    from taxpraben.parsing.region import NO_ANSWER, veto_of

    assert veto_of("copy of the prompt") == "veto.copy-of-prompt"
    assert veto_of(NO_ANSWER) == "veto.no-answer" and veto_of("a reason no veto decides") == "veto.no-answer"
    with pytest.raises(RuleError, match=re.escape("is decided by 'veto.copy-of-prompt' already")):
        taxpraben.register_rule("veto.mine", kinds=("number",), tier=7, confidence="high", description="d",
                                examples=(Example("number", "1", "1"),), decides="copy of the prompt")
    assert rule_named("veto.mine") is None


# ------------------------------------------------------------- a plugin, by entry point


PLUGIN = '''
import re
import taxpraben
from taxpraben.parsing.numbers import parse_number
from taxpraben.parsing.readers.number import NumberView
from taxpraben.parsing.region import Reading
from taxpraben.parsing.registry import Example

RULE = taxpraben.register_rule(
    "tag.plugin-answer", kinds=("number",), tier=2, confidence="high",
    description="The number inside ⟦...⟧, from a plugin ([X]...[/X] is no markup).",
    examples=(Example("number", "⟦44000⟧ 元", "44000"),),
)


@RULE.reads("number")
def _read(view: NumberView) -> Reading | None:
    m = re.search(r"⟦(.*?)⟧", view.cleaned)
    found = parse_number(m.group(1)) if m else None
    return None if found is None else Reading(found, rule=RULE.name, source=m.group(0))
'''


@pytest.fixture
def plugin_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An installed distribution whose ``taxpraben.plugins`` entry point names a module that
    registers ``tag.plugin-answer`` (imported by ``taxpraben rules`` and task loading)."""
    module = f"taxpraben_rule_plugin_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(PLUGIN, encoding="utf-8")
    info = tmp_path / "taxpraben_rule_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: taxpraben-rule-plugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[taxpraben.plugins]\nrules = {module}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield module
    unregister_rule("tag.plugin-answer")
    sys.modules.pop(module, None)


def test_a_plugins_rule_shows_in_taxpraben_rules(plugin_distribution: str) -> None:
    assert rule_named("tag.plugin-answer") is None
    listed = json.loads(CliRunner().invoke(app, ["rules", "--json"]).output)
    row = next(r for r in listed["rules"] if r["name"] == "tag.plugin-answer")
    assert row["chains"] == [] and row["kinds"] == ["number"] and row["tier"] == 2
    assert row["description"] == "The number inside ⟦...⟧, from a plugin ([X]...[/X] is no markup)."
    assert row["examples"] == [{"kind": "number", "output": "⟦44000⟧ 元", "expect": "44000"}]
    table = CliRunner().invoke(app, ["rules"])
    assert table.exit_code == 0, table.output
    row = row_of(table.output, "tag.plugin-answer")
    assert row[1:5] == ["number", "", "2", "high"]
    assert row[5] == bare("The number inside ⟦...⟧, from a plugin ([X]...[/X] is no markup).")
    assert row[6] == bare("\"⟦44000⟧ 元\" -> '44000'")
    rule = rule_named("tag.plugin-answer")
    assert rule is not None
    for case in example_cases([rule]):  # its examples, through the same check as the built-in rules'
        assert_read_by_its_rule(*case.values)


def test_rules_prints_descriptions_and_examples_literally(tag_rule: Rule) -> None:
    """A description with square brackets is no console markup: printed as written (it
    crashed with a MarkupError, or lost the bracketed words)."""
    result = CliRunner().invoke(app, ["rules"])
    assert result.exit_code == 0, result.output
    row = row_of(result.output, "tag.answer")
    assert row[5] == bare(tag_rule.description)
    assert row[6] == bare("\"销项税额104000元，进项税额60000元。⟦44000⟧\" -> '44000'\n\"⟦44000⟧元\" -> '44000'\n"
                          "leaves alone: \"答案：44000元 ⟦?⟧\" -> '44000'")
    listed = json.loads(CliRunner().invoke(app, ["rules", "--json"]).output)
    row = next(r for r in listed["rules"] if r["name"] == "tag.answer")
    assert row["description"] == tag_rule.description
    assert [ex["output"] for ex in row["examples"]] == [ex.output for ex in tag_rule.examples]


# ------------------------------------------------------------- a name is written once


def _string_constants(path: Path) -> list[tuple[str, int]]:
    """The string constants of a module, but those of its chains (``*_CHAIN`` and ``*_CHAINS``
    assignments: lists of rule names, by design)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    chains = {id(node) for assign in ast.walk(tree) if isinstance(assign, (ast.Assign, ast.AnnAssign))
              for target in (assign.targets if isinstance(assign, ast.Assign) else [assign.target])
              if isinstance(target, ast.Name) and target.id.endswith(("_CHAIN", "_CHAINS"))
              for node in ast.walk(assign)}
    return [(node.value, node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in chains]


def test_a_rules_name_is_written_once_in_the_package() -> None:
    names = {rule.name for rule in RULES}
    written: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        where = str(path.relative_to(SRC))
        for value, line in _string_constants(path):
            name = value.removeprefix("rule:")
            if name in names:
                written.setdefault(name, []).append(f"{where}:{line}")
    twice = {name: places for name, places in written.items() if len(places) > 1}
    assert not twice, twice
    for rule in RULES:  # the one place is its declaration
        declared = Path(rule.declared_at.rsplit(":", 1)[0]).relative_to(SRC)
        assert [p.rsplit(":", 1)[0] for p in written[rule.name]] == [str(declared)], rule.name

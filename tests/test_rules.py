"""The reading rules keep to their names: every rule has examples, every example is read by
its own rule through the whole chain of its kind in every named chain set that holds the rule
(a rule shadowed by an earlier one fails; a rule no named chain holds, a plugin's, through
its kind's default chain with the rule in its tier's place: :func:`example_chains`),
what a rule must leave alone is read otherwise, every rule the readers name is registered,
and every reading carries an evidence span of the raw output that holds its answer."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from taxpraben.data.checks import check_record
from taxpraben.parsing.choice_names import naming_form
from taxpraben.parsing.readers.letters import options_numbered
from taxpraben.parsing.rules import (
    CHAINS,
    EXAMPLE_CONTEXT,
    NAMED_CHAINS,
    RULES,
    Example,
    Rule,
    placed_in,
    rule_named,
)
from taxpraben.records import Record
from taxpraben.results import Sample
from taxpraben.scoring.items import prepare_item
from taxpraben.task_spec import ReadingOptions, TaskSpec
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)
SRC = Path(__file__).resolve().parents[1] / "src" / "taxpraben"

#: The task whose reader reads each kind, and the gold of the example question.
TASK_OF = {"label": "TaxSCQ", "letters": "TaxMCQ", "number": "TaxCalc", "span": "TaxRead",
           "fields": "TaxInspect", "text": "TaxQA"}
GOLD_OF: dict[str, Any] = {
    "label": {"answer": "信息技术服务", "gold": 2}, "letters": {"answer": "ABD"}, "number": {"answer": 44000},
    "span": {"answer": "万分之五"}, "fields": {"answer": {"违法性质": "偷税", "少缴税款": 260000}},
    "text": {"answer": "小规模纳税人适用3%的征收率。"}, "label-rates": {"answer": "2%", "gold": 0},
    "label-months": {"answer": "3个月", "gold": 1}, "label-numbers": {"answer": "15", "gold": 2},
    "true-false": {"answer": "True", "gold": 0}, "label-numbered": {"answer": "parent", "gold": 0},
    "span-template": {"answer": "kitchen"},
}


def example_record(example: Example, spec: TaskSpec) -> Record:
    """The record an example's output answers (its context's prompt and gold)."""
    context = example.context or example.kind
    raw = {"id": "1", **EXAMPLE_CONTEXT[context], **GOLD_OF[context]}
    record, problems = check_record(raw, spec, Path("rules.py"), 1, "example")
    assert record is not None and not [p for p in problems if p.severity == "error"], problems
    return record


def read(example: Example, chain: str | tuple[str, ...] = "taxpraben") -> Sample:
    """The example's output read by its kind's task, as scoring reads it, with the named
    chain set ``chain`` (or the chain of rule names ``chain``, as a spec's ``reading.chain``)."""
    spec = dataclasses.replace(REGISTRY[TASK_OF[example.kind]],
                               reading=ReadingOptions(chain=chain if isinstance(chain, str) else list(chain)))
    return prepare_item(spec, example_record(example, spec), 0, example.output, None)


def extracted(item: Sample) -> str | None:
    if item.status != "ok":
        return None
    if isinstance(item.extracted, dict):
        return json.dumps(item.extracted, ensure_ascii=False)
    return None if item.extracted is None else str(item.extracted)


def answer_texts(item: Sample, example: Example) -> list[str]:
    """The texts the answer read may be written as (one must lie in the evidence)."""
    value = item.extracted
    if item.task == "TaxSCQ" and item.status == "ok":
        record = example_record(example, REGISTRY[item.task])
        choices = list(record.choices or ())
        if value not in choices:
            return [str(value)]
        label = str(choices.index(value) + 1) if options_numbered(record.query, tuple(choices)) else "ABCD"[choices.index(value)]
        return [str(value), label]
    if item.task == "TaxCalc":  # 44000.00 is written 44000, TaxBen's 4.40 as 4.4
        text = str(value)
        return [text.rstrip("0").rstrip(".") if "." in text else text]
    return [str(value)]


#: Rules whose answer is said in words, not written as its value ("除E以外都是", "无需缴纳",
#: "2.0%" for the option 2%): the evidence is the words.
_SAID_IN_WORDS = ("letters.all-or-all-but", "letters.all-options-concluded", "letters.named-by-text",
                  "number.says-zero", "number.in-words", "choice.value-in-last-sentence")


#: Rules that read the whole output: the evidence is all of it.
_READ_WHOLE = ("taxben.gold-absent", "taxben.whole-output-float")


def _id(rule: Rule, i: int, chain: str | tuple[str, ...]) -> str:
    return f"{rule.name}#{i}@{chain if isinstance(chain, str) else 'placed'}"


def _sets(rule: Rule, example: Example) -> list[str]:
    """The named chain sets whose chain of the example's kind holds the rule."""
    return [name for name, chains in NAMED_CHAINS.items() if rule.name in chains.get(example.kind, ())]


def example_chains(rule: Rule, example: Example) -> list[str | tuple[str, ...]]:
    """The chains an example of ``rule`` runs through: every named chain set that holds the
    rule; for a rule none holds (a plugin's), its kind's default chain with the rule placed
    in its tier's place (:func:`~taxpraben.parsing.rules.placed_in`)."""
    return list(_sets(rule, example)) or [placed_in(CHAINS[example.kind], rule)]


def example_cases(rules: Iterable[Rule], leaves_alone: bool = False) -> list[Any]:
    """(rule, example, chain) for every example (or output left alone) of ``rules``."""
    return [pytest.param(rule, ex, chain, id=_id(rule, i, chain))
            for rule in rules for i, ex in enumerate(rule.leaves_alone if leaves_alone else rule.examples)
            for chain in example_chains(rule, ex)]


EXAMPLES = example_cases(RULES)
LEFT_ALONE = example_cases(RULES, leaves_alone=True)


def _builtin(rule: Rule) -> bool:
    return rule.declared_at.startswith(str(SRC))


def test_every_builtin_example_runs_through_a_named_chain() -> None:
    for rule in filter(_builtin, RULES):
        for example in (*rule.examples, *rule.leaves_alone):
            assert _sets(rule, example), f"{rule.name}: no named chain of {example.kind} holds it"


@pytest.mark.parametrize(("rule", "example", "chain"), EXAMPLES)
def test_every_example_is_read_by_its_rule(rule: Rule, example: Example, chain: str | tuple[str, ...]) -> None:
    assert_read_by_its_rule(rule, example, chain)


def assert_read_by_its_rule(rule: Rule, example: Example, chain: str | tuple[str, ...]) -> None:
    """The example read through ``chain`` is read (or vetoed) by ``rule``, as it expects,
    with the rule's confidence and an evidence span that holds the answer."""
    item = read(example, chain)
    if rule.veto:
        assert (item.status, item.veto, item.read_by) == ("format_failure", rule.name, None), item.failure
        assert item.evidence is None and item.confidence is None
        return
    assert item.read_by == f"rule:{rule.name}", (item.read_by, item.veto, item.failure)
    assert item.confidence == rule.confidence
    if example.kind != "text":
        assert extracted(item) == example.expect
    assert item.evidence is not None, "a rule reading without evidence"
    start, end = item.evidence
    shown = example.output[start:end]
    if rule.name in _SAID_IN_WORDS:
        assert shown.strip(), "the words that give the answer"
    elif rule.name in _READ_WHOLE:
        assert shown == example.output
    elif example.kind == "letters":
        assert set(example.expect or "") <= set(shown.upper()), shown
    elif example.kind not in ("fields", "text"):
        named = naming_form(shown)  # an option named in another form ("3 months" for 3个月)
        assert any(text in shown or naming_form(text) in named for text in answer_texts(item, example)), (shown, item.extracted)


@pytest.mark.parametrize(("rule", "example", "chain"), LEFT_ALONE)
def test_what_a_rule_leaves_alone_is_read_otherwise(rule: Rule, example: Example, chain: str | tuple[str, ...]) -> None:
    assert_left_alone(rule, example, chain)


def assert_left_alone(rule: Rule, example: Example, chain: str | tuple[str, ...]) -> None:
    item = read(example, chain)
    assert item.read_by != f"rule:{rule.name}" and item.veto != rule.name
    assert extracted(item) == example.expect


def test_every_rule_has_examples_and_a_place_in_a_named_chain() -> None:
    assert set(NAMED_CHAINS) == {"taxpraben", "taxben"} and NAMED_CHAINS["taxpraben"] is CHAINS
    for rule in RULES:
        assert rule.examples, f"{rule.name} has no example"
        assert {ex.kind for ex in rule.examples} <= set(rule.kinds), rule.name
    for rule in filter(_builtin, RULES):
        for kind in rule.kinds:
            holding = [name for name, chains in NAMED_CHAINS.items() if rule.name in chains[kind]]
            assert holding, f"{rule.name} reads {kind} but no named chain of {kind} holds it"
    for set_name, chains in NAMED_CHAINS.items():
        assert set(chains) == set(CHAINS), set_name  # a chain for every reading kind
        for kind, chain in chains.items():
            assert len(chain) == len(set(chain)), (set_name, kind)
            for name in chain:
                rule = rule_named(name)
                assert rule is not None, f"chain {set_name}/{kind} names an unknown rule {name}"
    assert len({rule.name for rule in RULES}) == len(RULES)


def test_taxbens_rules_are_its_chains_and_compare_as_it_does() -> None:
    taxben = {rule.name for rule in RULES if rule.name.startswith("taxben.")}
    assert taxben == {"taxben.choice-substring", "taxben.letter-run", "taxben.whole-output-float",
                      "taxben.yuan-amount", "taxben.gold-substring", "taxben.gold-absent", "taxben.raw-output"}
    in_taxben_chains = {name for chain in NAMED_CHAINS["taxben"].values() for name in chain}
    assert taxben <= in_taxben_chains
    assert not taxben & {name for chain in CHAINS.values() for name in chain}
    for name in taxben:
        rule = rule_named(name)
        assert rule is not None and rule.comparison == "taxben" and "TaxBen" in rule.description, name


def test_every_rule_the_readers_name_is_registered() -> None:
    named: set[str] = {rule.name for rule in RULES if rule.decides is not None}
    pattern = re.compile(r"""["']((?:veto|json|final|choice|letters|conclusion|number|span|fields|text|taxben)\.[a-z-]+)["']""")
    for path in [*(SRC / "parsing").rglob("*.py"), *(SRC / "kinds").glob("*.py")]:
        if path.name == "rules.py":
            continue
        named |= set(pattern.findall(path.read_text(encoding="utf-8")))
    assert len(named) > 30
    unknown = sorted(name for name in named if rule_named(name) is None)
    assert not unknown, unknown


# ---------------------------------------------------------------------------- the commands


@pytest.fixture(scope="module")
def first_choice_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first-choice baseline on the bundled sample, one run, exact scoring only."""
    from typer.testing import CliRunner

    from taxpraben.cli import app

    out = tmp_path_factory.mktemp("fc")
    sample = SRC / "data" / "sample"
    result = CliRunner().invoke(app, ["run", "--model", "baseline:first-choice", "--data", str(sample),
                                      "--runs", "1", "--out", str(out), "--no-semantic"])
    assert result.exit_code in (0, 3, 4), result.output
    return out


def test_every_samples_line_says_how_it_was_read(first_choice_run: Path) -> None:
    lines = [json.loads(x) for x in (first_choice_run / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines
    for line in lines:
        assert {"read_by", "evidence", "confidence"} <= line.keys(), line
        if line["status"] == "ok":
            assert line["read_by"].startswith("rule:") and rule_named(line["read_by"]) is not None
            start, end = line["evidence"]
            assert 0 <= start < end <= len(line["prediction"])
        else:
            assert line["read_by"] is None and line["evidence"] is None
    scq = [x for x in lines if x["task"] == "TaxSCQ" and x["status"] == "ok"]
    assert scq and all(x["prediction"][x["evidence"][0]:x["evidence"][1]] == "A" for x in scq)
    results = json.loads((first_choice_run / "results.json").read_text(encoding="utf-8"))
    assert results["tasks"]["TaxSCQ"]["readings"] == {"rule:choice.bare-answer": len(scq)}


def test_explain_shows_the_rule_the_evidence_and_the_chain(first_choice_run: Path) -> None:
    from typer.testing import CliRunner

    from taxpraben.cli import app

    first = json.loads((first_choice_run / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0])
    scq = next(json.loads(x) for x in (first_choice_run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
               if '"TaxSCQ"' in x)
    result = CliRunner().invoke(app, ["explain", str(first_choice_run), "TaxSCQ", scq["id"]])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "fired  choice.bare-answer" in out and "did not read  final.answer-statement" in out
    assert "not tried  choice.lead-sentence" in out
    assert "Read by rule:choice.bare-answer [0, 1)" in out
    missing = CliRunner().invoke(app, ["explain", str(first_choice_run), first["task"], "no-such-id"])
    assert missing.exit_code == 2 and "no-such-id" in missing.output


def test_rules_lists_the_registry() -> None:
    from typer.testing import CliRunner

    from taxpraben.cli import app

    listed = json.loads(CliRunner().invoke(app, ["rules", "--json"]).output)
    assert [r["name"] for r in listed["rules"]] == [r.name for r in RULES]
    assert all(len(r["examples"]) >= 1 for r in listed["rules"])
    boxed = next(r for r in listed["rules"] if r["name"] == "final.boxed")
    assert boxed["examples"][1] == {"kind": "number", "output": "应纳税额为 $\\boxed{44000}$ 元", "expect": "44000"}
    hedge = next(r for r in listed["rules"] if r["name"] == "veto.hedge")
    assert hedge["leaves_alone"] == [{"kind": "label", "output": "答案：C，而非B或D", "expect": "信息技术服务"}]
    assert listed["chains"]["label"][0] == "veto.copy-of-prompt"
    assert listed["default_chain"] == "taxpraben"
    assert listed["named_chains"]["taxben"]["label"] == ["taxben.choice-substring", "veto.no-answer"]
    assert listed["named_chains"]["taxpraben"] == listed["chains"]
    row = next(r for r in listed["rules"] if r["name"] == "taxben.letter-run")
    assert (row["chains"], row["comparison"], row["kinds"]) == (["taxben"], "taxben", ["letters"])
    table = CliRunner().invoke(app, ["rules"])
    assert table.exit_code == 0 and "choice.bare-answer" in table.output
    # the examples themselves: the output and the reading expected, and what it leaves alone
    assert '"答案：B或C" -> no answer' in table.output
    assert "leaves alone: \"答案：C，而非B或D\" -> '信息技术服务'" in table.output


def test_low_confidence_readings_of_every_kind_go_to_the_judge_not_to_the_audit() -> None:
    from taxpraben.judge.reading import low_confidence_outputs, read_outputs

    fallback = read(Example("number", "800000×13%=104000\n104000-60000=44000", "44000"))
    stated = read(Example("number", "答案：44000元", "44000"))
    named = read(Example("label", "有形动产租赁适用13%。不动产租赁适用9%。我倾向于C", "信息技术服务"))
    assert (fallback.confidence, stated.confidence, named.confidence) == ("low", "high", "low")
    items = [fallback, stated, named]
    low = [group[0] for group in low_confidence_outputs(items).values()]
    audited = [group[0] for group in read_outputs(items).values()]
    assert low == [fallback, named] and audited == [stated]

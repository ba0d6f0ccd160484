"""Each kind's reader is the execution of its chain of rules (parsing/chain.py): the chain's
order decides, a rule left out of the chain reads nothing, a veto stops the chain, and the
trace of what each rule did is what `taxpraben explain` shows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.parsing.chain import ChainError, Trace, collecting
from taxpraben.parsing.readers.label import label_chain, read_choice
from taxpraben.parsing.readers.letters import read_letter_set
from taxpraben.parsing.readers.number import read_final_number
from taxpraben.parsing.readers.span import read_span_answer
from taxpraben.parsing.rules import CHAINS, EXAMPLE_CONTEXT

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "taxpraben" / "data" / "sample"
LABEL = EXAMPLE_CONTEXT["label"]
CHOICES = list(LABEL["choices"])  # type: ignore[call-overload]
QUERY = str(LABEL["query"])


def label(output: str, chain: tuple[str, ...] | None = None) -> tuple[object, str | None]:
    reading = read_choice(output, CHOICES, option_letters=True, markers=(), query=QUERY, chain=chain)
    return reading.value, reading.rule


def traced(read: object) -> Trace:
    with collecting() as traces:
        assert callable(read)
        read()
    assert len(traces) == 1
    return traces[0]


def without(kind: str, *names: str) -> tuple[str, ...]:
    return tuple(name for name in CHAINS[kind] if name not in names)


def test_the_chain_order_decides_the_label() -> None:
    output = "答案：B\n\n不对，不动产租赁适用9%，应为C"
    assert label(output) == (2, "final.self-correction")
    # Without the correction rule, the final statements give nothing another rule takes:
    # the letter of the last sentence is read
    assert label(output, without("label", "final.self-correction")) == (2, "choice.letter-in-last-sentence")
    assert label("C") == (2, "choice.bare-answer")
    assert label("C", without("label", "choice.bare-answer")) == (2, "choice.lead-sentence")
    # A chain of vetoes only reads nothing
    assert label("C", ("veto.copy-of-prompt", "veto.no-answer")) == (None, "veto.no-answer")


def test_the_chain_drives_every_kind() -> None:
    calc = "销项税额104000元，进项税额60000元，因此应纳增值税为44000元。"
    assert read_final_number(calc).rule == "conclusion.statement"
    fallback = read_final_number(calc, chain=without("number", "conclusion.statement"))
    assert (fallback.rule, str(fallback.value.value)) == ("number.last-number", "44000")  # type: ignore[union-attr]
    letters = "交通运输服务、不动产租赁服务、建筑服务适用9%，对应 A、B、D"
    assert read_letter_set(letters).rule == "letters.last-group"
    assert read_letter_set(letters, chain=without("letters", "letters.last-group")).rule == "veto.no-answer"
    span, _ = read_span_answer("比例为**万分之五**，从滞纳之日起按日计算", "", None, True)
    assert (span.value, span.rule) == ("万分之五", "span.marked")
    whole, _ = read_span_answer("比例为**万分之五**，从滞纳之日起按日计算", "", None, True,
                                without("span", "span.marked"))
    assert whole.rule == "span.bare-answer"  # a short sentence: the output itself


def test_a_chain_naming_a_rule_its_kind_has_not_is_refused() -> None:
    with pytest.raises(ChainError, match=r"label reader has no rule letters\.last-group"):
        label_chain(("veto.copy-of-prompt", "letters.last-group"))


def test_the_trace_is_what_each_rule_did() -> None:
    trace = traced(lambda: label("答案：B\n\n答案：C"))
    steps = {step.rule: step for step in trace.steps}
    assert trace.kind == "label" and [s.rule for s in trace.steps] == list(CHAINS["label"])
    assert steps["veto.hedge"].outcome == "did not apply"
    assert steps["final.answer-statement"].outcome == "did not apply"
    assert (steps["veto.several-answers"].outcome, steps["veto.several-answers"].failure) == (
        "vetoed", "several different answers")
    assert steps["choice.bare-answer"].outcome == "not reached"
    assert trace.reading.rule == "veto.several-answers"


def test_a_rule_may_veto_under_another_name() -> None:
    trace = traced(lambda: label("答案：B或C"))
    decided = [s for s in trace.steps if s.outcome == "vetoed"]
    assert [(s.rule, s.decided_by, s.failure) for s in decided] == [
        ("final.answer-statement", "veto.hedge", "hedges between options")]


def test_a_number_read_by_the_last_fallback_shows_every_rule_before_it() -> None:
    trace = traced(lambda: read_final_number("800000×13%=104000\n104000-60000=44000"))
    outcomes = [(s.rule, s.outcome) for s in trace.steps]
    fired = outcomes.index(("number.last-number", "read"))
    assert all(outcome == "did not apply" for _, outcome in outcomes[:fired])
    assert outcomes[fired + 1:] == [("veto.no-answer", "not reached")]
    step = trace.steps[fired]
    assert (step.value.text, step.source) == ("44000", "104000-60000=44000")  # type: ignore[attr-defined]


def test_no_trace_is_kept_outside_collecting() -> None:
    with collecting() as traces:
        pass
    label("C")
    assert traces == []


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The first-choice baseline on a copy of the bundled sample (exact scoring only)."""
    root = tmp_path_factory.mktemp("chains")
    data, out = root / "data", root / "out"
    shutil.copytree(SAMPLE, data)
    result = CliRunner().invoke(app, ["run", "--model", "baseline:first-choice", "--data", str(data), "--runs", "1",
                                      "--out", str(out), "--no-semantic"])
    assert result.exit_code in (0, 3, 4), result.output
    return data, out


def _first_id(out: Path, task: str) -> str:
    lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return str(next(json.loads(x)["id"] for x in lines if json.loads(x)["task"] == task))


def test_explain_prints_the_trace_of_the_chain(sample_run: tuple[Path, Path]) -> None:
    _data, out = sample_run
    scq = CliRunner().invoke(app, ["explain", str(out), "TaxSCQ", _first_id(out, "TaxSCQ")], env={"COLUMNS": "200"})
    assert scq.exit_code == 0, scq.output
    assert "fired  choice.bare-answer (high): read 'option A' from 'A'" in scq.output
    assert "did not apply  veto.hedge" in scq.output and "did not read  json.answer-field" in scq.output
    assert "not tried  choice.bold-answer" in scq.output
    calc = CliRunner().invoke(app, ["explain", str(out), "TaxCalc", _first_id(out, "TaxCalc")], env={"COLUMNS": "200"})
    assert "vetoed  veto.copy-of-prompt (high): copy of the prompt" in calc.output
    assert "not tried  number.last-number" in calc.output


def test_explain_says_why_there_is_no_trace_when_the_data_is_gone(sample_run: tuple[Path, Path]) -> None:
    data, out = sample_run
    moved = data.with_name("moved")
    data.rename(moved)
    try:
        result = CliRunner().invoke(app, ["explain", str(out), "TaxSCQ", _first_id(out, "TaxSCQ")],
                                    env={"COLUMNS": "200"})
    finally:
        moved.rename(data)
    assert result.exit_code == 0, result.output
    assert "No trace of the chain" in result.output and "is not at hand" in result.output
    assert "fired" not in result.output and "Read by rule:choice.bare-answer" in result.output

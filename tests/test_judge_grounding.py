"""A judge that must quote (issue "Every reading shows its evidence", item 7): a judge reading
counts only when its quote is in the output, outside what the output copies of its prompt,
reads the same value by the task's own reader, and repeats none of the judge prompt's worked
examples; the accepted quote's place is the item's evidence. And --judge-concurrency bounds
the judge's requests in flight, in score and run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.cli_data import cli_app, quarterly_calc_rows, scq_rows, write_data
from helpers.mock_openai_server import MockConfig, MockServerThread
from taxpraben.commands.run import run
from taxpraben.commands.score import score
from taxpraben.data.loader import load_data
from taxpraben.jobs.judge import judge_stage
from taxpraben.judge import load_prompt
from taxpraben.judge.grounding import places, prompt_examples
from taxpraben.judge.reading import ReplyReading, read_reply
from taxpraben.kinds.profiles import scoring_rules
from taxpraben.models.defaults import DEFAULT_JUDGE_CONCURRENCY, DEFAULT_JUDGE_TIMEOUT_S
from taxpraben.options import JudgeOptions
from taxpraben.results import Sample
from taxpraben.run.runner import RunnerSettings
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

REGISTRY = load_registry(())
RULES = scoring_rules("taxpraben")
EXAMPLES = prompt_examples(load_prompt().template)
SAMPLE = load_data("sample", REGISTRY, ["TaxSCQ", "TaxCalc", "TaxMCQ"], 1)


def reply(answer: Any, quote: Any) -> str:
    return json.dumps({"answer": answer, "quote": quote}, ensure_ascii=False)


def judged(task: str, output: str, answer: Any, quote: Any) -> tuple[Sample, ReplyReading]:
    """The sample's first record of ``task`` answered ``output``; the judge's reply read back."""
    spec, record = REGISTRY[task], SAMPLE.records[task][0]
    item = prepare_item(spec, record, 0, output, profile=RULES)
    return item, read_reply(spec, record, item, reply(answer, quote), RULES, EXAMPLES)


def evidence_of(item: Sample, reading: ReplyReading) -> str:
    assert reading.outcome == "answer" and reading.evidence is not None, reading
    start, end = reading.evidence
    return item.prediction[start:end]


# ---------------------------------------------------------------------------- TaxSCQ (one letter)
# The sample's TaxSCQ record 0: 适用6%增值税税率的是（ ）, A 有形动产租赁服务 ... C 信息技术服务 (gold).

TWO_ANSWERS = "这题我拿不准。答案是C。答案是B。"


def test_a_grounded_letter_is_read_with_its_quote_as_evidence() -> None:
    item, reading = judged("TaxSCQ", TWO_ANSWERS, "C", "答案是C")
    assert item.status == "format_failure"  # the rules read two answers
    assert evidence_of(item, reading) == "答案是C" and reading.evidence == (7, 11)
    assert reading.item is not None and reading.item.label_pred == "信息技术服务"


def test_a_quote_not_in_the_output_is_rejected() -> None:
    reading = judged("TaxSCQ", "[正确答案]E<eoa>", "C", "所以选C")[1]
    assert (reading.outcome, reading.why, reading.evidence) == ("not_grounded", "quote not in output", None)
    # The judge's own answer to the question: a letter the output never states.
    assert judged("TaxSCQ", "[正确答案]E<eoa>", "C", "[正确答案]E")[1].why == "quote reads another value"


def test_a_quote_in_a_copy_of_the_prompt_is_rejected() -> None:
    copied = "A. 有形动产租赁服务\nB. 不动产租赁服务\nC. 信息技术服务\nD. 建筑服务\n这题我不确定。"
    item, reading = judged("TaxSCQ", copied, "C", "C. 信息技术服务")
    assert item.status == "format_failure"
    assert (reading.outcome, reading.why) == ("not_grounded", "quote in a copy of the prompt")
    # The same option named as the output's own answer is its evidence.
    item, reading = judged("TaxSCQ", "我认为应选：C. 信息技术服务", "C", "C. 信息技术服务")
    assert evidence_of(item, reading) == "C. 信息技术服务"


def test_a_quote_in_an_invented_question_is_rejected() -> None:
    invented = "我不会。\n题目：下列税种中属于地方税的是（ ）。\nA. 增值税\nB. 房产税\n答案：B"
    reading = judged("TaxSCQ", invented, "B", "答案：B")[1]
    assert (reading.outcome, reading.why) == ("not_grounded", "quote in another question")


def test_a_quote_that_reads_another_value_is_rejected() -> None:
    reading = judged("TaxSCQ", TWO_ANSWERS, "B", "答案是C")[1]
    assert (reading.outcome, reading.why) == ("not_grounded", "quote reads another value")


def test_a_reply_repeating_a_worked_example_is_rejected() -> None:
    # Example one's answer and quote, word for word, even were its quote in the output.
    item, reading = judged("TaxSCQ", "故本题应选C项", "C", "故本题应选C项")
    assert (reading.outcome, reading.why) == ("not_grounded", "repeats the prompt's example")
    # A quote taken from an example's text (not the output's) is the example, not a missing quote.
    reading = judged("TaxSCQ", TWO_ANSWERS, "C", "信息技术服务属于现代服务，适用6%")[1]
    assert (reading.outcome, reading.why) == ("not_grounded", "repeats the prompt's example")
    # Example five copied whole by a weak judge for another task's output.
    five = ('{"answer": {"违法性质": "偷税", "少缴税款": 130000, "滞纳金": 6500, "罚款": null}, "quote": {"违法性质": '
            '"属于偷税行为", "少缴税款": "应补缴增值税13万元", "滞纳金": "共计6,500元", "罚款": null}}')  # fmt: skip
    spec, record = REGISTRY["TaxCalc"], SAMPLE.records["TaxCalc"][0]
    item = prepare_item(spec, record, 0, "我不会。", profile=RULES)
    assert read_reply(spec, record, item, five, RULES, EXAMPLES).why == "repeats the prompt's example"


def test_a_quote_only_in_the_reasoning_or_inside_a_longer_word_is_not_in_the_output() -> None:
    reading = judged("TaxSCQ", "<think>我想是C</think>我不知道", "C", "我想是C")[1]
    assert (reading.outcome, reading.why) == ("not_grounded", "quote not in output")
    assert places("罚款130000元", "1") == [] and places("答案：ABD", "A") == [] and places("罚款1元", "1") == [(2, 3)]


def test_the_quote_is_found_after_the_readers_folding_and_the_span_is_the_raw_ones() -> None:
    item, reading = judged("TaxSCQ", "思考很久。\n答案：Ｃ", "C", "答案：C")
    assert evidence_of(item, reading) == "答案：Ｃ"


def test_no_quote_is_no_evidence() -> None:
    assert judged("TaxSCQ", TWO_ANSWERS, "C", None)[1].why == "no quote"
    assert judged("TaxSCQ", TWO_ANSWERS, "C", "  ")[1].why == "no quote"


# ---------------------------------------------------------------------------- TaxCalc, TaxMCQ


def test_taxcalc_a_number_quoted_in_another_unit_reads_the_same() -> None:
    # The sample's TaxCalc record 0 asks for 元 (gold 104000).
    output = "销项税额为26万元，进项15.6万元。应纳增值税为10.4万元，或者104000元？我拿不准，也可能是100000元。"
    item, reading = judged("TaxCalc", output, 104000, "应纳增值税为10.4万元")
    assert evidence_of(item, reading) == "应纳增值税为10.4万元"
    assert reading.item is not None and reading.item.extracted == "104000"
    assert judged("TaxCalc", output, 104000, "也可能是100000元")[1].why == "quote reads another value"
    assert judged("TaxCalc", output, 104000, "应纳增值税为10.5万元")[1].why == "quote not in output"


def test_taxmcq_a_letter_set_is_grounded_by_its_quote() -> None:
    output = "我觉得答案：ABD，但是不确定是不是ABC"
    item, reading = judged("TaxMCQ", output, "ABD", "答案：ABD")
    assert evidence_of(item, reading) == "答案：ABD" and reading.item is not None and reading.item.extracted == "ABD"
    assert judged("TaxMCQ", output, "ABC", "答案：ABD")[1].why == "quote reads another value"
    assert judged("TaxMCQ", output, "A", "A")[1].why == "quote not in output"  # only inside ABD and ABC


# ---------------------------------------------------------------------------- score, against the mock

APP = cli_app(score=score, run=run)
CALC = quarterly_calc_rows(3)
SCQ = scq_rows(3)  # gold A
#: s0 read; s1 two answers (the judge's quote is one of them); s2 two answers, the judge quotes what it is not.
ANSWERS = {"s0": "答案：A", "s1": "答案是A。答案是B。", "s2": "答案是C。答案是B。"}
QUOTES = {"s1": "答案是A", "s2": "所以选A"}


def judge_a(body: dict[str, Any]) -> str:
    text = body["messages"][0]["content"]
    output = text[text.rindex("<<<\n") + 4 : text.rindex("\n>>>")]
    quote = next((q for k, q in QUOTES.items() if output == ANSWERS[k]), output)
    return reply("A", quote)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TAXPRABEN_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("JUDGE_KEY", "sk-judge")  # the judge's own: the generation's is not sent to its endpoint
    write_data(tmp_path / "data", {"TaxSCQ": SCQ, "TaxCalc": CALC})
    lines = [{"task": "TaxSCQ", "id": i, "run": r, "prediction": text} for r in range(2) for i, text in ANSWERS.items()]
    lines += [{"task": "TaxCalc", "id": row["id"], "run": 0, "prediction": "这道题我不会。"} for row in CALC]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                                                encoding="utf-8")  # fmt: skip
    return tmp_path


def invoke(*args: str) -> tuple[int, str]:
    from typer.testing import CliRunner

    result = CliRunner().invoke(APP, list(args), catch_exceptions=False, env={"COLUMNS": "200"})
    return result.exit_code, result.output


def score_args(ws: Path, url: str, out: str, *extra: str) -> list[str]:
    return ["score", "--data", str(ws / "data"), "--tasks", "TaxSCQ,TaxCalc", "--predictions",
            str(ws / "predictions.jsonl"), "--no-semantic", "--out", str(ws / out), "--judge", "openai:mock",
            "--judge-base-url", url, "--judge-api-key-env", "JUDGE_KEY", *extra]  # fmt: skip


def test_a_rejected_reading_stays_a_format_failure_counted_with_its_reply(workspace: Path) -> None:
    with MockServerThread(MockConfig(reply_of=judge_a)) as judge:
        code, output = invoke(*score_args(workspace, judge.base_url, "out"))
        assert code == 0, output
    results = json.loads((workspace / "out" / "results.json").read_text(encoding="utf-8"))
    samples = {(s["task"], s["id"], s["run"]): s for s in map(json.loads, (workspace / "out" / "samples.jsonl").open())}
    for run_ in (0, 1):
        s1, s2 = samples[("TaxSCQ", "s1", run_)], samples[("TaxSCQ", "s2", run_)]
        assert (s1["status"], s1["extracted_by"], s1["score"]) == ("ok", "judge", 1.0)
        assert s1["read_by"] == "judge:openai:mock" and s1["confidence"] is None
        start, end = s1["evidence"]
        assert ANSWERS["s1"][start:end] == "答案是A" and Sample.model_validate(s1).span == (start, end)
        assert Sample.model_validate(s2).judge_rejected == "quote not in output"
        assert (s2["status"], s2["extracted_by"], s2["failure"], s2["judge_rejected"]) == (
            "format_failure", "none", "judge: not grounded", "quote not in output")
        assert s2["judge_reply"] == reply("A", "所以选A") and s2["evidence"] is None and s2["read_by"] is None
    scq = results["tasks"]["TaxSCQ"]
    assert (scq["judge"]["asked"], scq["judge"]["not_grounded"], scq["judge"]["read_by_judge"]) == (2, 1, 2)
    assert scq["judge"]["not_grounded_whys"] == {"quote not in output": 1}
    assert scq["format_failures"] == {"judge: not grounded": 2}
    assert any("TaxSCQ: the judge's reading of 1 output(s) was rejected" in w for w in results["meta"]["warnings"])
    md = (workspace / "out" / "report.md").read_text(encoding="utf-8")
    assert "Not grounded: the judge's reading of 1 output(s) was rejected" in md and "quote not in output: 1" in md


@pytest.mark.parametrize("command", ["score", "run"])
def test_judge_concurrency_one_keeps_one_request_in_flight(workspace: Path, command: str) -> None:
    # Each answer takes 50 ms: with more than one in flight the judge's requests overlap.
    with MockServerThread(MockConfig(reply_of=judge_a, latency=0.05)) as judge, \
            MockServerThread(MockConfig(fixed_reply="这道题我不会。答案是A。答案是B。")) as model:  # fmt: skip
        if command == "score":
            args = score_args(workspace, judge.base_url, "out", "--judge-concurrency", "1")
        else:
            args = ["run", "--model", "openai:mock", "--base-url", model.base_url, "--data", str(workspace / "data"),
                    "--tasks", "TaxSCQ,TaxCalc", "--judge-api-key-env", "JUDGE_KEY", "--runs", "1", "--no-semantic", "--out", str(workspace / "out"), "--judge", "openai:mock",
                    "--judge-base-url", judge.base_url, "--judge-concurrency", "1"]  # fmt: skip
        code, output = invoke(*args)
        assert code == 0, output
        assert judge.stats.requests >= 3 and judge.stats.max_in_flight == 1


def test_a_higher_judge_concurrency_sends_requests_together(workspace: Path) -> None:
    import threading

    together = threading.Event()  # each answer waits until two requests are in flight at once

    with MockServerThread(MockConfig(reply_of=judge_a, hang_s=20)) as judge:

        def gate(body: dict[str, Any]) -> threading.Event:
            if judge.stats.in_flight >= 2:
                together.set()
            return together

        judge.config.on_request = gate
        code, output = invoke(*score_args(workspace, judge.base_url, "out", "--judge-concurrency", "3"))
        assert code == 0, output
        assert together.is_set() and 2 <= judge.stats.max_in_flight <= 3


def test_the_judges_backend_and_runner_take_its_own_concurrency_and_timeout(tmp_path: Path) -> None:
    from rich.console import Console

    with MockServerThread(MockConfig()) as server:
        options = JudgeOptions(judge="openai:mock", judge_base_url=server.base_url, judge_concurrency=3,
                               judge_timeout=900.0)  # fmt: skip
        judge = judge_stage(options, REGISTRY, profile="taxpraben", seed=0, runner=RunnerSettings(concurrency=16),
                            cache_path=None, console=Console(file=(tmp_path / "log").open("w")))  # fmt: skip
    assert judge is not None and judge.runner.concurrency == 3
    assert judge.backend._first_tokens.deadlines[0].cap == 900.0  # type: ignore[attr-defined]
    assert (JudgeOptions().judge_concurrency, JudgeOptions().judge_timeout) == (
        DEFAULT_JUDGE_CONCURRENCY, DEFAULT_JUDGE_TIMEOUT_S) == (1, 600.0)  # fmt: skip


def test_a_quote_from_a_list_of_the_options_reworded_is_rejected() -> None:
    # The options written back reworded (real-0012 of the corpus, as a real judge read it): no copy
    # of the prompt, and no line chooses; a judge quoting one line quotes the list, not an answer.
    listed = "A. 有形的动产租赁服务；\nB. 不动产的租赁服务；\nC. 信息技术方面的服务；\nD. 建筑类服务"
    item, reading = judged("TaxSCQ", listed, "C", "C. 信息技术方面的服务；")
    assert item.status == "format_failure"
    assert (reading.outcome, reading.why) == ("not_grounded", "quote in a list of the options")
    # A line of the list that gives its verdict is the output's own answer.
    judging = listed.replace("C. 信息技术方面的服务；", "C. 信息技术方面的服务 —— 正确，适用6%；")
    item, reading = judged("TaxSCQ", judging, "C", "C. 信息技术方面的服务 —— 正确")
    assert evidence_of(item, reading) == "C. 信息技术方面的服务 —— 正确"
    # An answer after the list, naming its option as the list does, is grounded.
    answered = listed + "\n故选C. 信息技术方面的服务"
    item, reading = judged("TaxSCQ", answered, "C", "故选C. 信息技术方面的服务")
    assert evidence_of(item, reading) == "故选C. 信息技术方面的服务"


def test_the_real_options_list_of_real_0012_is_not_grounded() -> None:
    from taxpraben.data.checks import check_record

    path = Path(__file__).parent / "corpus" / "real_outputs.jsonl"
    case = next(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if '"real-0012"' in line)
    spec = REGISTRY["TaxSCQ"]
    record = check_record(case["record"], spec, path, 12, "line")[0]
    assert record is not None
    item = prepare_item(spec, record, 0, case["output"], profile=RULES)
    first_line = case["output"].strip().split("\n")[0]
    reading = read_reply(spec, record, item, reply("A", first_line), RULES, EXAMPLES)
    assert (reading.outcome, reading.why) == ("not_grounded", "quote in a list of the options")

"""The second reader (``--judge``, issue 21): the prompt, which items are asked, the reply
read by the task's own reader, the audit's Wilson interval, and the job against the mock."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from helpers.cli_data import cli_app, quarterly_calc_rows, scq_rows, write_data
from helpers.mock_openai_server import MockConfig, MockServerThread
from taxpraben.commands.run import run
from taxpraben.commands.score import score
from taxpraben.data.loader import load_data
from taxpraben.judge import (
    NO_ANSWER,
    JudgePromptError,
    draw,
    fill_prompt,
    load_prompt,
    wilson_interval,
)
from taxpraben.judge.audit import Agreement, banner
from taxpraben.judge.prompt import answer_form, parse_prompt
from taxpraben.judge.reading import read_reply, same_reading
from taxpraben.judge.stage import JudgeStage
from taxpraben.kinds.profiles import scoring_rules
from taxpraben.models.factory import create_backend
from taxpraben.results.predictions import Prediction
from taxpraben.run.runner import RunnerSettings
from taxpraben.scoring import Hooks, ScoringSettings, score_predictions
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

APP = cli_app(score=score, run=run)
REGISTRY = load_registry(())
RULES = scoring_rules("taxpraben")

CALC = quarterly_calc_rows(4)  # golds 130, 260, 390, 520
SCQ = scq_rows(4)  # gold "13%" = option A
#: TaxCalc: ids 0 and 1 read by the rules, 2 and 3 not; TaxSCQ: s0-s2 read, s3 not (it gives two
#: answers; the judge's quote 答案是A is one of them).
ANSWERS = {
    ("TaxCalc", "0"): "销项税额为130元。", ("TaxCalc", "1"): "销项税额为260元。",
    ("TaxCalc", "2"): "这道题我不会。", ("TaxCalc", "3"): "这道题我不会。",
    ("TaxSCQ", "s0"): "答案是A", ("TaxSCQ", "s1"): "答案是B", ("TaxSCQ", "s2"): "答案是A",
    ("TaxSCQ", "s3"): "这题很难说。答案是A。答案是B。",
}  # fmt: skip
#: The judge's fixed reply: A, quoting 答案是A (grounded in s0, s2 and s3; "A" is no number for TaxCalc).
REPLY_A = json.dumps({"answer": "A", "quote": "答案是A"}, ensure_ascii=False)


def write_predictions(path: Path, runs: int = 2) -> Path:
    lines = [json.dumps({"task": t, "id": i, "run": r, "prediction": text}, ensure_ascii=False)
             for r in range(runs) for (t, i), text in ANSWERS.items()]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TAXPRABEN_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("JUDGE_KEY", "sk-judge")  # the judge's own (the generation's is not sent to its endpoint)
    write_data(tmp_path / "data", {"TaxCalc": CALC, "TaxSCQ": SCQ})
    write_predictions(tmp_path / "predictions.jsonl")
    return tmp_path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(APP, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def score_with_judge(ws: Path, url: str, out: str, *extra: str) -> tuple[int, str]:
    return invoke("score", "--data", str(ws / "data"), "--predictions", str(ws / "predictions.jsonl"),
                  "--no-semantic", "--out", str(ws / out), "--judge", "openai:mock", "--judge-base-url", url,
                  "--judge-api-key-env", "JUDGE_KEY", *extra)  # fmt: skip


def read_out(out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    return results, samples


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# ---------------------------------------------------------------------------- pure parts


def test_wilson_interval_is_the_hand_computation() -> None:
    # 8 of 10, z = 1.959964: centre (0.8 + z²/20) / (1 + z²/10), half-width
    # z·sqrt(0.8·0.2/10 + z²/400) / (1 + z²/10), computed by hand: [0.49016, 0.94332].
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.490162, abs=1e-5) and hi == pytest.approx(0.943318, abs=1e-5)
    # All agree: the lower bound is n / (n + z²), the upper 1.
    lo, hi = wilson_interval(10, 10)
    assert lo == pytest.approx(10 / (10 + 1.959964**2), abs=1e-6) and hi == pytest.approx(1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    # None agree: exactly 0 below (not the 1.4e-17 the subtraction leaves for 0 of 25) and
    # z² / (n + z²) above; the interval is the mirror of n of n.
    for n in range(1, 60):
        lo, hi = wilson_interval(0, n)
        assert lo == 0.0 and hi == pytest.approx(1.959964**2 / (n + 1.959964**2), abs=1e-6)
        mirror = wilson_interval(n, n)
        assert mirror[1] == 1.0 and mirror[0] == pytest.approx(1 - hi, abs=1e-12)
    with pytest.raises(ValueError, match="agreed must lie"):
        wilson_interval(3, 2)


def test_banner_below_ninety_five_percent_lower_bound() -> None:
    assert banner(Agreement(10, 10)) is not None  # 10/10: lower bound 0.72 < 0.95
    assert banner(Agreement(100, 100)) is None  # 100/100: lower bound 0.963
    text = banner(Agreement(20, 18))
    assert text is not None and text.startswith("rules and judge disagree on 10.0% of audited items")


def test_the_draw_is_seeded_per_task() -> None:
    items = list(range(50))
    first = draw(items, 5, seed=0, task="TaxCalc")
    assert first == draw(items, 5, seed=0, task="TaxCalc") and len(set(first)) == 5 and first == sorted(first)
    assert draw(items, 5, seed=1, task="TaxCalc") != first or draw(items, 5, seed=0, task="TaxSCQ") != first
    assert draw(items, 80, seed=0, task="TaxCalc") == items and draw(items, 0, 0, "TaxCalc") == []


def test_the_builtin_prompt_is_versioned_and_a_file_replaces_it(tmp_path: Path) -> None:
    builtin = load_prompt()
    assert builtin.version == "zh-3" and builtin.source is None and len(builtin.sha256) == 64
    assert len(re.findall("^示例[一二三四五]$", builtin.template, re.M)) == 5
    assert '{"answer": null, "quote": null}' in builtin.template and "#" not in builtin.template[:1]
    own = tmp_path / "judge.txt"
    own.write_text("#version: mine-2\n题目：{question}\n回答：{output}\n", encoding="utf-8")
    mine = load_prompt(own)
    assert (mine.version, mine.source, mine.template) == ("mine-2", str(own), "题目：{question}\n回答：{output}\n")
    assert parse_prompt("{question} {output}").version.startswith("sha256:")
    own.write_text("只有题目：{question}\n", encoding="utf-8")
    with pytest.raises(JudgePromptError, match=r"judge\.txt: the judge prompt lacks \{output\}"):
        load_prompt(own)


def test_the_filled_prompt_holds_question_options_form_and_output_never_the_gold() -> None:
    loaded = load_data("sample", REGISTRY, ["TaxSCQ", "TaxCalc", "TaxMCQ"], 2)
    prompt = parse_prompt("Q={question}|O={options}|F={answer_form}|A={output}")
    scq = loaded.records["TaxSCQ"][0]
    text = fill_prompt(prompt, REGISTRY["TaxSCQ"], scq, "  我选C {output}  ")
    assert text.startswith("Q=" + scq.query.strip() + "|O=选项：\nA. 有形动产租赁服务\n")
    assert "|F=一个选项字母（A、B、C、D之一）|" in text and text.endswith("|A=我选C {output}\n")
    calc = loaded.records["TaxCalc"][0]
    assert "数字" in answer_form(REGISTRY["TaxCalc"], calc) and "ABCDE" in answer_form(REGISTRY["TaxMCQ"], calc)
    filled = fill_prompt(load_prompt(), REGISTRY["TaxCalc"], calc, "不知道")
    assert calc.answer_text not in filled.replace(calc.query, "")


def reply(answer: Any, quote: Any = None) -> str:
    return json.dumps({"answer": answer, "quote": quote}, ensure_ascii=False)


def test_a_reply_is_read_by_the_tasks_own_reader() -> None:
    spec, record = REGISTRY["TaxSCQ"], load_data("sample", REGISTRY, ["TaxSCQ"], 1).records["TaxSCQ"][0]
    item = prepare_item(spec, record, 0, "这题很难说。答案是C。答案是B。", profile=RULES)
    assert item.status == "format_failure"
    reading = read_reply(spec, record, item, reply("C", "答案是C"), RULES)
    assert reading.outcome == "answer" and reading.item is not None and reading.item.label_pred == record.choices[2]
    assert read_reply(spec, record, item, f" {NO_ANSWER}。", RULES).outcome == "no_answer"
    assert read_reply(spec, record, item, reply(None), RULES).outcome == "no_answer"
    assert read_reply(spec, record, item, "C", RULES).outcome == "malformed"  # no reply object: nothing to ground
    calc_spec = REGISTRY["TaxCalc"]
    calc = load_data("sample", REGISTRY, ["TaxCalc"], 1).records["TaxCalc"][0]
    unread = prepare_item(calc_spec, calc, 0, "?", profile=RULES)
    assert read_reply(calc_spec, calc, unread, reply("我说不清", "?"), RULES).outcome == "malformed"
    rule = prepare_item(calc_spec, calc, 0, "应纳税额1,560元", profile=RULES)
    judge = read_reply(calc_spec, calc, rule, reply("1560.00", "应纳税额1,560元"), RULES).item
    assert same_reading(rule, judge) and not same_reading(rule, None)
    assert not same_reading(rule, read_reply(calc_spec, calc, rule, reply("1561", "1,560元"), RULES).item)


# ---------------------------------------------------------------------------- score, against the mock


def test_only_unread_items_are_sent_and_a_rescoring_sends_nothing(workspace: Path) -> None:
    with MockServerThread(MockConfig(fixed_reply=REPLY_A)) as judge:
        code, output = score_with_judge(workspace, judge.base_url, "out")
        assert code == 0, output
        # Distinct unread outputs: TaxCalc 2 and 3 share a text but not a record (2), TaxSCQ s3 (1);
        # run 1 repeats run 0's outputs, so it adds none.
        assert judge.stats.requests == 3
        results, samples = read_out(workspace / "out")
        scq = results["tasks"]["TaxSCQ"]["judge"]
        assert (scq["read_by_rule"], scq["read_by_judge"], scq["unread"], scq["asked"]) == (6, 2, 0, 1)
        assert (scq["format_failure_rate_before"], scq["format_failure_rate_after"]) == (0.25, 0.0)
        calc = results["tasks"]["TaxCalc"]["judge"]  # "A" is no number: malformed, still format failures
        assert (calc["read_by_judge"], calc["unread"], calc["malformed"], calc["format_failure_rate_after"]) == (0, 4, 2, 0.5)
        assert any("could not be read by the task's reader" in w for w in results["meta"]["warnings"])
        by = {(s["task"], s["id"], s["run"]): s for s in samples}
        s3 = by[("TaxSCQ", "s3", 1)]
        assert (s3["extracted_by"], s3["judge_reply"], s3["status"], s3["extracted"], s3["score"]) == (
            "judge", REPLY_A, "ok", "13%", 1.0)
        prediction = ANSWERS[("TaxSCQ", "s3")]
        start, end = s3["evidence"]
        assert prediction[start:end] == "答案是A" and (start, end) == (6, 10)
        # The judge's edits, in order, each with what it changed as it was before (the rules' reading).
        assert [(e["edit"], e["by"]) for e in s3["judge_history"]] == [("replied", "judge:openai:mock"),
                                                                       ("adopted", "judge:openai:mock")]
        assert s3["judge_history"][0]["before"] == {"judge_reply": None}
        before = s3["judge_history"][1]["before"]
        assert (before["status"], before["extracted"], before.get("score")) == (
            "format_failure", "missing", None) and before["read_by"] is None and before["evidence"] is None
        assert by[("TaxSCQ", "s1", 0)]["extracted_by"] == "rule" and "judge_reply" not in by[("TaxSCQ", "s1", 0)]
        assert "judge_history" not in by[("TaxSCQ", "s1", 0)]  # not asked: not edited
        assert by[("TaxCalc", "2", 0)]["extracted_by"] == "none" and by[("TaxCalc", "2", 0)]["status"] == "format_failure"
        # SCQ accuracy: s0, s2 by the rules and s3 by the judge are right, s1 is wrong.
        assert results["tasks"]["TaxSCQ"]["metrics"]["acc"]["mean"] == pytest.approx(0.75)
        meta = results["meta"]["judge"]
        assert (meta["model"], meta["prompt_version"], meta["requests"], meta["sent"]) == ("openai:mock", "zh-3", 3, 3)
        assert meta["prompt_sha256"] == load_prompt().sha256
        # The judge's tokens, apart from the model's: the mock counts a character as a token.
        sent_prompts = sum(len(m["content"]) for body in judge.stats.bodies for m in body["messages"])
        assert meta["tokens"]["generated"]["generations"] == 3
        assert (meta["tokens"]["generated"]["prompt_tokens"], meta["tokens"]["generated"]["completion_tokens"]) == (
            sent_prompts, 3 * len(REPLY_A))
        code, output = score_with_judge(workspace, judge.base_url, "again")
        assert code == 0, output
        assert judge.stats.requests == 3  # all from the cache
        again, _ = read_out(workspace / "again")
        assert (again["meta"]["judge"]["from_cache"], again["meta"]["judge"]["sent"]) == (3, 0)
        assert again["meta"]["judge"]["tokens"]["from_cache"]["prompt_tokens"] == sent_prompts
        assert again["meta"]["judge"]["tokens"]["generated"]["generations"] == 0
        assert again["tasks"]["TaxSCQ"]["judge"] == scq


def test_the_no_answer_token_keeps_the_item_a_format_failure(workspace: Path) -> None:
    with MockServerThread(MockConfig(fixed_reply=NO_ANSWER)) as judge:
        code, output = score_with_judge(workspace, judge.base_url, "out")
    assert code == 0, output
    results, samples = read_out(workspace / "out")
    scq = results["tasks"]["TaxSCQ"]["judge"]
    assert (scq["read_by_judge"], scq["unread"], scq["no_answer"], scq["malformed"]) == (0, 2, 1, 0)
    s3 = next(s for s in samples if s["id"] == "s3")
    assert (s3["status"], s3["extracted_by"], s3["judge_reply"]) == ("format_failure", "none", NO_ANSWER)
    assert [e["edit"] for e in s3["judge_history"]] == ["replied", "unanswered"]
    assert s3["judge_history"][1]["before"] == {"extracted_by": None}  # the rules set no reader; the judge: none


def test_the_audit_measures_agreement_and_lists_the_disagreements(workspace: Path) -> None:
    with MockServerThread(MockConfig(fixed_reply=REPLY_A)) as judge:
        code, output = score_with_judge(workspace, judge.base_url, "out", "--judge-audit", "2", "--seed", "7")
        assert code == 0, output
        # 3 unread outputs + 2 drawn per task among the outputs the rules read (TaxCalc 2, TaxSCQ 3).
        assert judge.stats.requests == 3 + 2 + 2
    results, samples = read_out(workspace / "out")
    calc = results["tasks"]["TaxCalc"]["judge"]["audit"]
    assert (calc["audited"], calc["agreed"], calc["not_grounded"]) == (2, 0, 0)  # the judge's "A" is no number
    assert {d["id"] for d in calc["disagreements"]} == {"0", "1"} and calc["disagreements"][0]["judge"] is None
    scq = results["tasks"]["TaxSCQ"]["judge"]["audit"]
    meta = results["meta"]["judge"]
    # The judge reads "A" quoting 答案是A: it agrees on s0 and s2; on s1 (答案是B) its quote is not in the
    # output, so that reply is left out of the audit (only grounded readings are compared).
    drawn = {s["id"] for s in samples if s["task"] == "TaxSCQ" and "judge_reply" in s and s["id"] != "s3"}
    agreed = sum(1 for s in samples if s["task"] == "TaxSCQ" and s.get("judge_agrees") and s["run"] == 0)
    assert len(drawn) == 2 and scq["agreed"] == agreed == len(drawn - {"s1"}) == scq["audited"]
    assert scq["not_grounded"] == int("s1" in drawn)
    s1 = [s for s in samples if s["id"] == "s1"]
    assert all(s.get("judge_rejected") == ("quote not in output" if "s1" in drawn else None) for s in s1)
    assert all("judge_agrees" not in s for s in s1)
    total = meta["audit"]
    assert (total["audited"], total["agreed"], total["not_grounded"]) == (2 + scq["audited"], scq["agreed"],
                                                                           scq["not_grounded"])  # fmt: skip
    assert total["ci95"] == pytest.approx(list(wilson_interval(scq["agreed"], total["audited"])))
    assert meta["banner"].startswith("rules and judge disagree on") and (meta["audit_per_task"], meta["audit_seed"]) == (2, 7)
    audited = [s for s in samples if s.get("judge_agrees") is False and s["task"] == "TaxCalc"]
    assert {s["id"] for s in audited} == {"0", "1"} and all(s["extracted_by"] == "rule" for s in audited)
    assert all(s["score"] == 1.0 for s in audited)  # the audit never changes a score
    html = (workspace / "out" / "report.html").read_text(encoding="utf-8")
    md = (workspace / "out" / "report.md").read_text(encoding="utf-8")
    assert "rule and judge disagree" in html and "rules and judge disagree on" in md
    assert "openai:mock" in md and "Judge" in md


def test_the_cap_leaves_items_unread_with_a_line(workspace: Path) -> None:
    with MockServerThread(MockConfig(fixed_reply=REPLY_A)) as judge:
        code, output = score_with_judge(workspace, judge.base_url, "out", "--judge-max-items", "1")
        assert code == 0, output
        assert judge.stats.requests == 1
    results, _ = read_out(workspace / "out")
    assert sum(e["judge"]["capped"] for e in results["tasks"].values()) == 2
    assert any(w.startswith("--judge-max-items 1: 2 output(s)") for w in results["meta"]["warnings"])
    from taxpraben.report.tables import judge_pairs
    from taxpraben.report.view import view_of
    from taxpraben.results import Results

    pairs = judge_pairs(view_of(Results.model_validate(results)))
    assert pairs[1] == ("Judge cap", "--judge-max-items 1: 2 output(s) were left unread.")


def test_a_judge_failing_with_500s_leaves_the_items_as_the_rules_read_them(workspace: Path) -> None:
    loaded = load_data(str(workspace / "data"), REGISTRY, None, None)
    preds = [Prediction(t, i, 0, text) for (t, i), text in ANSWERS.items()]
    with MockServerThread(MockConfig(failure_rate=1.0, failure_kinds=("500",))) as server:
        backend = create_backend("openai:mock", base_url=server.base_url)
        stage = JudgeStage(backend, load_prompt(), REGISTRY, runner=RunnerSettings(max_retries=1, backoff_base=0.001,
                           progress=False), console=Console(file=open(workspace / "log.txt", "w")))  # noqa: SIM115
        scored = score_predictions(loaded, preds, REGISTRY, ScoringSettings(semantic=False, bootstrap=0),
                                   hooks=Hooks(second_reader=stage))
        assert server.stats.requests == 3 * 2  # each of the 3 outputs: one attempt and one retry
    assert scored.results["tasks"]["TaxSCQ"]["judge"]["failed"] == 1
    assert any("judge requests failed" in w for w in scored.results["meta"]["warnings"])
    s3 = next(s for s in scored.samples if s["id"] == "s3")
    assert (s3["status"], s3["extracted_by"]) == ("format_failure", "none") and "judge_reply" not in s3


def test_a_dead_judge_fails_fast_before_any_generation(workspace: Path) -> None:
    with MockServerThread(MockConfig(fixed_reply=REPLY_A)) as model:
        code, output = invoke("run", "--model", "openai:mock", "--base-url", model.base_url, "--data",
                              str(workspace / "data"), "--tasks", "TaxCalc,TaxSCQ", "--runs", "1", "--no-semantic", "--judge-api-key-env", "JUDGE_KEY",
                              "--out", str(workspace / "out"), "--judge", "openai:mock", "--judge-base-url", dead_url())  # fmt: skip
        assert code == 2, output
        assert model.stats.requests == 0 and "Nothing was generated" in output
    code, output = score_with_judge(workspace, dead_url(), "out2")
    assert code == 2 and not (workspace / "out2" / "results.json").exists()


def test_run_asks_the_judge_after_generation_with_the_same_runner(workspace: Path) -> None:
    with MockServerThread(MockConfig(fixed_reply="这题很难说。答案是A。答案是B。")) as model, \
            MockServerThread(MockConfig(fixed_reply=REPLY_A)) as judge:  # fmt: skip
        args = ("run", "--model", "openai:mock", "--base-url", model.base_url, "--data", str(workspace / "data"),
                "--tasks", "TaxCalc,TaxSCQ", "--runs", "1", "--no-semantic", "--judge-api-key-env", "JUDGE_KEY", "--out", str(workspace / "out"), "--judge", "openai:mock",
                "--judge-base-url", judge.base_url)  # fmt: skip
        code, output = invoke(*args)
        assert code == 0, output
        assert model.stats.requests == 8 and judge.stats.requests == 8  # every output unread, each record once
        results, samples = read_out(workspace / "out")
        assert results["tasks"]["TaxSCQ"]["judge"]["read_by_judge"] == 4
        assert results["tasks"]["TaxSCQ"]["score"]["mean"] == pytest.approx(1.0)
        assert all(s["extracted_by"] == ("judge" if s["task"] == "TaxSCQ" else "none") for s in samples)
        code, output = invoke(*args[:-5], str(workspace / "again"), *args[-4:])
        assert code == 0, output
        assert (model.stats.requests, judge.stats.requests) == (8, 8)  # a rerun asks nothing again


def test_the_leaderboard_refuses_judged_with_unjudged_runs(workspace: Path) -> None:
    from taxpraben.report.leaderboard import IncompatibleResultsError, build_leaderboard

    code, output = invoke("score", "--data", str(workspace / "data"), "--tasks", "TaxCalc,TaxSCQ", "--predictions",
                          str(workspace / "predictions.jsonl"), "--no-semantic", "--out", str(workspace / "plain"))  # fmt: skip
    assert code == 0, output
    with MockServerThread(MockConfig(fixed_reply=REPLY_A)) as judge:
        code, output = score_with_judge(workspace, judge.base_url, "judged")
    assert code == 0, output
    dirs = [workspace / "plain", workspace / "judged"]
    with pytest.raises(IncompatibleResultsError, match=r"different second readers \(--judge\).*no judge"):
        build_leaderboard(dirs)
    board = build_leaderboard(dirs, force=True)
    assert any("second readers" in w for w in board.warnings)


def test_the_judges_tokens_are_priced_apart_with_the_pricing_file(workspace: Path) -> None:
    prices = workspace / "prices.yaml"
    prices.write_text("currency: CNY\nmodels:\n  mock: {input: 2.0, output: 8.0}\n", encoding="utf-8")
    with MockServerThread(MockConfig(fixed_reply=REPLY_A)) as judge:
        code, output = score_with_judge(workspace, judge.base_url, "priced", "--pricing", str(prices))
        assert code == 0, output
        sent_prompts = sum(len(m["content"]) for body in judge.stats.bodies for m in body["messages"])
    tokens = read_out(workspace / "priced")[0]["meta"]["judge"]["tokens"]["generated"]
    assert (tokens["prompt_tokens"], tokens["completion_tokens"]) == (sent_prompts, 3 * len(REPLY_A))
    assert tokens["cost"] == pytest.approx((sent_prompts * 2.0 + 3 * len(REPLY_A) * 8.0) / 1e6)

"""The judge on ``run`` (issue 21): its requests go out while the later tasks generate, give
what ``run`` then ``score --judge`` gives, spend the run's budget, and a judge that stops
midway (or a Ctrl-C) stops the run cleanly. Two mock servers, the model's and the judge's;
order is proved by events (a server holds its answers until the other has been asked), never
by time."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.cli_data import (
    RUN_SCRIPT,
    cli_app,
    quarterly_calc_rows,
    scq_rows,
    stacks_of,
    write_data,
)
from helpers.mock_openai_server import MockConfig, MockServerThread
from taxpraben.commands.run import run
from taxpraben.commands.score import score
from taxpraben.costs.budget import BUDGET_EXIT
from taxpraben.jobs.judge import STOPPED_HINT
from taxpraben.judge.prompt import NO_ANSWER, load_prompt
from taxpraben.judge.stage import JudgeStage, capped_asks, records_by_id
from taxpraben.kinds.profiles import scoring_rules
from taxpraben.models.base import Completion
from taxpraben.models.factory import create_backend
from taxpraben.records import Record
from taxpraben.run.cache import CompletionCache
from taxpraben.scoring.items import prepare_item
from taxpraben.tasks import load_registry

APP = cli_app(run=run, score=score)
REGISTRY = load_registry(())
RULES = scoring_rules("taxpraben")

CALC = quarterly_calc_rows(4)  # golds 130, 260, 390, 520; queries "某企业第{i}季度…"
SCQ = scq_rows(4)  # queries "第{i}题：增值税一般税率是？…", gold "13%" = A
QA = [{"id": f"q{i}", "query": f"问答第{i}题：什么是增值税？", "answer": "对增值额征收的税。"} for i in range(2)]
#: Unread by the rules of TaxCalc and TaxSCQ alike (two answers each); the judge quotes one of them.
UNREAD = "这道题我不会。答案：260元或390元。答案是A。答案是B。"
#: The judge's reply quoting UNREAD's A (TaxSCQ).
REPLY_A = json.dumps({"answer": "A", "quote": "答案是A"}, ensure_ascii=False)


def content(body: dict[str, Any]) -> str:
    return "".join(m.get("content") or "" for m in body.get("messages", []))


def mixed_model(body: dict[str, Any]) -> str:
    """The model's answers: some read by the rules, some not, some differing between runs."""
    text, seed = content(body), body.get("seed") or 0
    if "季度" in text:
        quarter = int(text.split("第")[1][0])
        return ["销项税额为130元。", UNREAD, "答案：390" if seed % 2 == 0 else "说不清。", UNREAD][quarter]
    if "增值税一般税率" in text:
        question = int(text.split("第")[1][0])
        return ["答案：A", "这题很难说。答案是A。答案是B。", "答案：B", "我也不知道选哪个。"][question]
    return "对增值额征收的一种税。"


def asked(body: dict[str, Any]) -> str:
    """The output a judge request asks about (the last <<< >>> block: the examples come first)."""
    text = content(body)
    return text[text.rindex("<<<\n") + 4 : text.rindex("\n>>>")]


def judging(body: dict[str, Any]) -> str:
    """The judge's replies: 260 for a TaxCalc output, A for a TaxSCQ one, each quoting the
    passage that says so where the output has it, else the whole output (then the reading is
    not grounded: it reads nothing, or another value); no answer for one of them."""
    output = asked(body)
    if "我也不知道选哪个" in output:
        return NO_ANSWER
    answer, passage = (260, "答案：260元") if "季度" in content(body) else ("A", "答案是A")
    return json.dumps({"answer": answer, "quote": passage if passage in output else output}, ensure_ascii=False)


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(APP, list(args), catch_exceptions=False, env={"COLUMNS": "200", **(env or {})})
    return result.exit_code, result.output


def run_args(model: Any, data: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    tasks = ",".join(sorted(p.stem for p in data.glob("*.jsonl")))  # the few tasks the data holds, named
    return ["run", "--model", "openai:mock", "--base-url", model.base_url, "--data", str(data), "--tasks", tasks,
            "--no-semantic", "--out", str(out), "--cache", str(cache), *extra]  # fmt: skip


def judge_args(judge: Any, *extra: str) -> list[str]:
    """The judge at its own endpoint, with its own key (the generation's is not sent there)."""
    return ["--judge", "openai:mock", "--judge-base-url", judge.base_url, "--judge-api-key-env", "JUDGE_KEY", *extra]


def read_out(out: Path) -> tuple[dict[str, Any], dict[tuple[str, str, int], dict[str, Any]]]:
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    lines = [json.loads(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    return results, {(s["task"], s["id"], s["run"]): s for s in lines}


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("JUDGE_KEY", "sk-judge")
    monkeypatch.setenv("TAXPRABEN_CACHE", str(tmp_path / "default-cache.sqlite"))
    write_data(tmp_path / "data", {"TaxCalc": CALC, "TaxSCQ": SCQ})
    return tmp_path


# ---------------------------------------------------------------------------- interleaving, by order


def test_the_judge_is_asked_while_the_later_task_is_still_generating(workspace: Path) -> None:
    """TaxCalc comes first, TaxSCQ second. The model holds its answers to TaxSCQ until the
    judge has been asked something: a judge asked only after generation would never be, and
    the run would wait for the hold to give up (then fail the order checks below)."""
    released = threading.Event()
    seen: dict[str, Any] = {}

    def hold_second_task(body: dict[str, Any]) -> threading.Event | None:
        return released if "增值税一般税率" in content(body) else None

    model_config = MockConfig(fixed_reply=UNREAD, on_request=hold_second_task, hang_s=20)
    with MockServerThread(model_config) as model:

        def first_judge_request(body: dict[str, Any]) -> None:
            if not released.is_set():
                seen["model_answered"] = model.stats.completed
                seen["scq_asked_of_model"] = sum("增值税一般税率" in content(b) for b in model.stats.bodies)
                seen["asked_about"] = content(body)
                released.set()

        with MockServerThread(MockConfig(reply_of=judging, on_request=first_judge_request)) as judge:
            code, output = invoke(*run_args(model, workspace / "data", workspace / "out", workspace / "c.sqlite",
                                            "--runs", "1"), *judge_args(judge))  # fmt: skip
            assert code == 0, output
            # When the judge got its first request, the model had answered the 4 TaxCalc
            # generations and none of the TaxSCQ ones, which it was holding. (How many of the 4
            # had reached it by then is a race between concurrent requests: all 4 as a rule,
            # 3 once under load.)
            assert seen["model_answered"] == 4 and 1 <= seen["scq_asked_of_model"] <= 4
            assert "季度" in seen["asked_about"] and model.stats.completed == 8
            assert judge.stats.requests == 8  # every output unread, each record once
    results, samples = read_out(workspace / "out")
    assert results["meta"]["judge"]["requests"] == 8 and results["meta"]["judge"]["sent"] == 8
    assert results["tasks"]["TaxSCQ"]["judge"]["read_by_judge"] == 4
    assert results["tasks"]["TaxCalc"]["judge"]["read_by_judge"] == 4  # "260": right for id 1 only
    assert results["tasks"]["TaxCalc"]["metrics"]["em"]["mean"] == pytest.approx(0.25)
    assert all(s["extracted_by"] == "judge" for s in samples.values())


#: ``taxpraben run`` in a child process that says which judge modules were loaded when the
#: model's backend was first asked to generate.
FIRST_REQUEST_SCRIPT = """
import json, sys, typer
import taxpraben.models.openai as openai
seen = {}
generate = openai.OpenAIBackend.generate
async def first(self, requests, config):
    if not seen:
        names = ("taxpraben.judge.stage", "taxpraben.judge.reading", "taxpraben.scoring.pipeline")
        seen.update({name: name in sys.modules for name in names})
        print("LOADED " + json.dumps(seen), file=sys.stderr)
    return await generate(self, requests, config)
openai.OpenAIBackend.generate = first
from taxpraben.commands.run import run
app = typer.Typer()
app.command()(run)
app()
"""


def test_nothing_of_the_judge_is_loaded_before_the_first_request(workspace: Path) -> None:
    with MockServerThread(MockConfig(fixed_reply=UNREAD)) as model, MockServerThread(MockConfig(reply_of=judging)) as judge:
        args = [sys.executable, "-c", FIRST_REQUEST_SCRIPT, *run_args(model, workspace / "data", workspace / "out",
                workspace / "c.sqlite", "--runs", "1")[1:], *judge_args(judge)]  # fmt: skip
        done = subprocess.run(args, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
        assert done.returncode == 0, done.stdout + done.stderr
        assert judge.stats.model_listings == 1 and judge.stats.requests == 8  # checked before, asked after
    loaded = json.loads(next(line for line in done.stderr.splitlines() if line.startswith("LOADED "))[7:])
    assert loaded == {"taxpraben.judge.stage": False, "taxpraben.judge.reading": False,
                      "taxpraben.scoring.pipeline": False}  # fmt: skip


# ---------------------------------------------------------------------------- the same results


def judged_and_scored(
    workspace: Path, data: Path, model_reply: Any, judge_reply: Any, extra: tuple[str, ...]
) -> tuple[int, tuple[dict[str, Any], dict[Any, Any]], tuple[dict[str, Any], dict[Any, Any]]]:
    """``run --judge`` into judged/, and ``run`` then ``score --judge`` into scored/ (each with its
    own cache): the judge requests the first sent, and both outputs as read by read_out."""
    with MockServerThread(MockConfig(reply_of=model_reply)) as model, \
            MockServerThread(MockConfig(reply_of=judge_reply)) as judge:  # fmt: skip
        common = ("--runs", "2", "--temperature", "0.5", "--seed", "3")
        code, output = invoke(*run_args(model, data, workspace / "judged", workspace / "a.sqlite", *common),
                              *judge_args(judge, *extra))  # fmt: skip
        assert code == 0, output
        asked_ahead = judge.stats.requests
        code, output = invoke(*run_args(model, data, workspace / "plain", workspace / "b.sqlite", *common))
        assert code == 0, output
        assert judge.stats.requests == asked_ahead  # no judge, no request
        code, output = invoke("score", "--data", str(data), "--predictions", str(workspace / "plain" / "predictions.jsonl"),
                              "--no-semantic", "--seed", "3", "--out", str(workspace / "scored"),
                              *judge_args(judge, *extra), env={"TAXPRABEN_CACHE": str(workspace / "b.sqlite")})  # fmt: skip
        assert code == 0, output
        assert judge.stats.requests == 2 * asked_ahead  # the same requests, each sent again (another cache)
    return asked_ahead, read_out(workspace / "judged"), read_out(workspace / "scored")


#: The judge's options, the unread outputs its cap leaves unasked, the audits it asks (of 2 per task).
JUDGED_WAYS = [
    (("--judge-audit", "2"), 0, 4),
    (("--judge-audit", "1", "--judge-max-items", "6"), 0, 1),  # 5 unread outputs, then room for 1 audit
    (("--judge-audit", "1", "--judge-max-items", "4"), 1, 0),
]


@pytest.mark.parametrize(("extra", "capped", "audited"), JUDGED_WAYS)
def test_run_with_a_judge_gives_what_run_then_score_with_it_gives(
    workspace: Path, extra: tuple[str, ...], capped: int, audited: int
) -> None:
    asked_ahead, (judged, judged_samples), (scored, scored_samples) = judged_and_scored(
        workspace, workspace / "data", mixed_model, judging, extra)

    def steady(sample: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in sample.items() if k != "latency_s"}  # the only figure a second run changes

    assert judged_samples.keys() == scored_samples.keys() and len(judged_samples) == 16
    for key, sample in judged_samples.items():
        assert steady(sample) == steady(scored_samples[key]), key
    # The ledger aside: on a mock that answers in a millisecond, two runs' answers of one record
    # with the same text may share their latency to the 0.1 ms in either run (the ledger then
    # counts one generation), whatever the judge; the rest of each task entry is the same.
    for task, entry in judged["tasks"].items():
        mine, theirs = dict(entry), dict(scored["tasks"][task])
        ledger, other = mine.pop("ledger"), theirs.pop("ledger")
        assert mine == theirs, task
        assert (ledger["answers"], ledger["finish_reasons"]) == (other["answers"], other["finish_reasons"])
    assert judged["tasks"].keys() == scored["tasks"].keys()
    assert judged["meta"]["judge"] == scored["meta"]["judge"]
    meta = judged["meta"]["judge"]
    assert (meta["requests"], meta["sent"], meta["from_cache"]) == (asked_ahead, asked_ahead, 0)
    assert [w for w in judged["meta"]["warnings"] if "judge" in w] == [w for w in scored["meta"]["warnings"] if "judge" in w]
    # Each reader decided something, and the cap left out what it says: the comparison compares something.
    assert {s["extracted_by"] for s in judged_samples.values()} == {"rule", "judge", "none"}
    assert sum(entry["judge"]["capped"] for entry in judged["tasks"].values()) == capped
    # The audits asked: compared with the rules, or left out (their quote no evidence in the output).
    audits = [entry["judge"].get("audit", {}) for entry in judged["tasks"].values()]
    assert sum(a.get("audited", 0) + a.get("not_grounded", 0) for a in audits) == audited


#: TaxInspect beside TaxCalc: i0 read whole; i1 read, but 滞纳金 only by a fuzzy key (the days,
#: "滞纳金天数": 30; its rationale says 100 元); i2 without 罚款; i3 a fuzzy key in one run (the
#: right value), the exact one in the other.
INSPECT_QUERY = "请阅读以下税务稽查案例{n}，计算少缴税款、滞纳金和罚款并说明理由。金额单位为元。"
INSPECT = [{"id": f"i{n}", "query": INSPECT_QUERY.format(n=n),
            "answer": {"违法性质": "偷税", "少缴税款": 1000 * (n + 1), "滞纳金": 50 * (n + 1), "罚款": 500 * (n + 1),
                       "分析理由": "隐匿收入少缴税款。"}} for n in range(4)]  # fmt: skip


def inspect_model(body: dict[str, Any]) -> str:
    """The model's answers to TaxInspect (case i3 depends on the run's seed), else :func:`mixed_model`'s."""
    text, seed = content(body), body.get("seed") or 0
    if "稽查案例" not in text:
        return mixed_model(body)
    n = int(text.split("稽查案例")[1][0])
    late = {0: "滞纳金", 1: "滞纳金天数", 2: "滞纳金", 3: "滞纳金额" if seed % 2 else "滞纳金"}[n]
    fields: dict[str, Any] = {"违法性质": "偷税", "少缴税款": 1000 * (n + 1), late: 30 if n == 1 else 50 * (n + 1),
                              "罚款": 500 * (n + 1), "分析理由": f"隐匿收入少缴税款，滞纳金{50 * (n + 1)}元。"}  # fmt: skip
    if n == 2:
        del fields["罚款"]
    return json.dumps(fields, ensure_ascii=False)


def inspect_judging(body: dict[str, Any]) -> str:
    """The judge's replies: TaxInspect's from the output's own rationale, the rest as :func:`judging`."""
    text = content(body)
    if "稽查案例" not in text:
        return judging(body)
    n = int(text.split("稽查案例")[1][0])
    names = [name for name in ("违法性质", "少缴税款", "滞纳金", "罚款") if f'"{name}"：' in text.split("现在请处理")[-1]]
    values = {"违法性质": "偷税", "少缴税款": 1000 * (n + 1), "滞纳金": 50 * (n + 1), "罚款": None}
    quotes = {"违法性质": '"违法性质": "偷税"', "少缴税款": f'"少缴税款": {1000 * (n + 1)}',
              "滞纳金": f"滞纳金{50 * (n + 1)}元", "罚款": None}  # fmt: skip
    return json.dumps({"answer": {name: values[name] for name in names}, "quote": {name: quotes[name] for name in names}},
                      ensure_ascii=False)  # fmt: skip


#: The judge's options; the unread and low-confidence outputs the cap leaves unasked; the
#: low-confidence ones asked; the audits asked (of 1 per task). 4 unread outputs (TaxCalc 3,
#: TaxInspect i2), 2 low-confidence ones (i1, i3 in one run), 2 audit candidates per task.
LOW_WAYS = [
    (("--judge-audit", "1"), 0, 0, 2, 2),
    (("--judge-audit", "1", "--judge-max-items", "7"), 0, 0, 2, 1),  # then room for one audit, TaxCalc's
    (("--judge-audit", "1", "--judge-max-items", "5"), 0, 1, 1, 0),  # the unread ones, then i1
    (("--judge-audit", "1", "--judge-max-items", "3"), 1, 2, 0, 0),  # TaxCalc's unread ones only
]


@pytest.mark.parametrize(("extra", "capped", "low_capped", "low", "audited"), LOW_WAYS)
def test_run_with_a_judge_gives_what_score_gives_with_low_confidence_outputs(
    workspace: Path, extra: tuple[str, ...], capped: int, low_capped: int, low: int, audited: int
) -> None:
    """As above, with a field task whose readings include low-confidence ones: they go out
    early only once every task is complete, as far as the cap has room after the unread ones."""
    data = write_data(workspace / "low", {"TaxCalc": CALC, "TaxInspect": INSPECT})
    asked_ahead, (judged, judged_samples), (scored, scored_samples) = judged_and_scored(
        workspace, data, inspect_model, inspect_judging, extra)
    assert judged_samples.keys() == scored_samples.keys() and len(judged_samples) == 16
    for key, sample in judged_samples.items():
        assert {k: v for k, v in sample.items() if k != "latency_s"} == {
            k: v for k, v in scored_samples[key].items() if k != "latency_s"}, key  # fmt: skip
    for task, entry in judged["tasks"].items():
        assert entry["judge"] == scored["tasks"][task]["judge"], task
        assert entry["metrics"] == scored["tasks"][task]["metrics"], task
    assert judged["meta"]["judge"] == scored["meta"]["judge"]
    assert [w for w in judged["meta"]["warnings"] if "judge" in w] == [w for w in scored["meta"]["warnings"] if "judge" in w]
    inspect = judged["tasks"]["TaxInspect"]["judge"]
    assert inspect["low_confidence"] == low
    assert sum(entry["judge"]["capped"] for entry in judged["tasks"].values()) == capped
    audits = [entry["judge"].get("audit", {}) for entry in judged["tasks"].values()]
    assert sum(a.get("audited", 0) + a.get("not_grounded", 0) for a in audits) == audited
    assert judged["meta"]["judge"]["requests"] == asked_ahead == 8 - capped - low_capped - (2 - audited)
    low_line = [w for w in judged["meta"]["warnings"] if "low-confidence output(s) were not sent" in w]
    assert low_line == ([f"--judge-max-items {extra[-1]}: {low_capped} low-confidence output(s) were not sent to the "
                         "judge and keep the rules' reading"] if low_capped else [])  # fmt: skip
    # An audited field item shows the judge's reading of the asked fields beside the rules'
    # (fields[...].pred), never its rationale.
    inspected = [s for (task, _, _), s in judged_samples.items() if task == "TaxInspect" and "judge_agrees" in s]
    assert bool(inspected) == bool(inspect.get("audit", {}).get("audited")), (inspected, inspect)
    for sample in inspected:  # i0: the judge gave 罚款 as null (its rationale names none): None, not the rules' 500
        assert sample["judge_extracted"] == {"违法性质": "偷税", "少缴税款": 1000, "滞纳金": 50, "罚款": None}
        assert all(sample["fields"][name]["kind"] != "text" for name in sample["judge_extracted"])
    # i1: the fuzzy 滞纳金 (the days, 30) replaced by the judge's 100 (the gold) where it was asked.
    i1 = judged_samples[("TaxInspect", "i1", 0)]["fields"]["滞纳金"]
    assert (i1["matched_by"], i1["pred"], i1["score"]) == (("judge", 100, 1.0) if low else ("fuzzy", 30, 0.0))


def test_what_goes_out_early_under_a_cap_is_exactly_what_scoring_keeps() -> None:
    """Three tasks complete in every order; with every cap, the requests released by the
    plan, put together, are the requests scoring's capped asks send, no more, no less."""
    stage = JudgeStage(create_backend("openai:judge", base_url="http://127.0.0.1:9/v1"), load_prompt(), REGISTRY,
                       audit=1, seed=5)  # fmt: skip
    rows = {"TaxCalc": ["销项税额为130元。", UNREAD, "说不清。", "答案：520"],
            "TaxSCQ": ["答案：A", "这题很难说。", "答案：B", "我也不知道选哪个。"],
            "TaxMCQ": ["答案：AB", "不会", "AB", "不好说"]}  # fmt: skip
    items = {task: [prepare_item(REGISTRY[task], _record(task, k), 0, text, profile=RULES) for k, text in enumerate(texts)]
             for task, texts in rows.items()}  # fmt: skip
    records = {task: records_by_id(_record(task, k) for k in range(len(texts))) for task, texts in rows.items()}
    order = list(rows)
    per_task = [stage.task_asks(t, items[t], records[t]) for t in order]
    total = sum(len(u) + len(low) + len(a) for u, low, a in per_task)
    assert sum(len(u) for u, _, _ in per_task) == 6 and total == 9  # 2 unread outputs and 1 audit per task
    for cap, finishing in itertools.product([None, 0, 1, 3, 6, 7, 9, 20], itertools.permutations(order)):
        stage.max_items = cap
        plan = stage.plan_ahead(order)
        early = [r for task in finishing for r in plan.task_done(task, items[task], records[task])]
        kept, _ = capped_asks(per_task, cap)
        assert sorted(stage.key_of(r) for r in early) == sorted(stage.key_of(stage.request_of(a)) for a in kept), (
            cap, finishing)


def test_what_goes_out_early_with_low_confidence_outputs_is_exactly_what_scoring_keeps() -> None:
    """The same with a field task holding unread, low-confidence and audited outputs between
    two others: in every order of completion and with every cap, the plan releases exactly
    the requests of scoring's capped asks."""
    stage = JudgeStage(create_backend("openai:judge", base_url="http://127.0.0.1:9/v1"), load_prompt(), REGISTRY,
                       audit=1, seed=5)  # fmt: skip
    rows = {"TaxCalc": ["销项税额为130元。", UNREAD, "说不清。", "答案：520"],
            "TaxSCQ": ["答案：A", "这题很难说。", "答案：B", "我也不知道选哪个。"]}  # fmt: skip
    items = {task: [prepare_item(REGISTRY[task], _record(task, k), 0, text, profile=RULES) for k, text in enumerate(texts)]
             for task, texts in rows.items()}  # fmt: skip
    items["TaxInspect"] = [
        prepare_item(REGISTRY["TaxInspect"], Record("TaxInspect", row["id"], row["query"], row["answer"]), run,
                     inspect_model({"messages": [{"content": row["query"]}], "seed": run + 1}), profile=RULES)
        for run in (0, 1) for row in INSPECT
    ]  # fmt: skip
    records = {task: records_by_id(_record(task, k) for k in range(len(texts))) for task, texts in rows.items()}
    records["TaxInspect"] = records_by_id(Record("TaxInspect", row["id"], row["query"], row["answer"]) for row in INSPECT)
    order = ["TaxCalc", "TaxInspect", "TaxSCQ"]
    per_task = [stage.task_asks(t, items[t], records[t]) for t in order]
    assert [[len(part) for part in asks] for asks in per_task] == [[2, 0, 1], [1, 2, 1], [2, 0, 1]]
    for cap, finishing in itertools.product(range(0, 11), itertools.permutations(order)):
        stage.max_items = cap
        plan = stage.plan_ahead(order)
        early = [r for task in finishing for r in plan.task_done(task, items[task], records[task])]
        kept, _ = capped_asks(per_task, cap)
        assert sorted(stage.key_of(r) for r in early) == sorted(stage.key_of(stage.request_of(a)) for a in kept), (
            cap, finishing)


def _record(task: str, k: int) -> Record:
    if task == "TaxCalc":
        row = CALC[k]
        return Record(task, row["id"], row["query"], str(row["answer"]))
    if task == "TaxSCQ":
        row = SCQ[k]
        return Record(task, row["id"], row["query"], row["answer"], choices=tuple(row["choices"]), gold=0)
    return Record(task, f"m{k}", f"第{k}题：下列属于流转税的有？A. 增值税 B. 消费税 C. 个人所得税", "AB")


# ---------------------------------------------------------------------------- the budget


def test_a_budget_that_stops_the_judge_stops_the_run_and_a_rerun_finishes_it(workspace: Path) -> None:
    """The budget covers generation and the judge's first request: the second is refused,
    the run stops (exit 3, predictions written, not scored), and the rerun with a larger
    budget asks the judge only the three it had not answered."""
    write_data(workspace / "scq", {"TaxSCQ": SCQ})
    data = workspace / "scq"
    common = ("--runs", "1", "--max-tokens", "64")
    with MockServerThread(MockConfig(fixed_reply="这题很难说。答案是A。答案是B。")) as model, \
            MockServerThread(MockConfig(fixed_reply=REPLY_A)) as judge:  # fmt: skip
        code, output = invoke(*run_args(model, data, workspace / "ref", workspace / "ref.sqlite", *common),
                              *judge_args(judge))  # fmt: skip
        assert code == 0, output
        # The mock counts a character as a token: what generation spent, and the judge's first request.
        generated = sum(p["usage"]["prompt_tokens"] + p["usage"]["completion_tokens"]
                        for p in _lines(workspace / "ref" / "predictions.jsonl"))  # fmt: skip
        first_judged = len(content(judge.stats.bodies[0])) + len(REPLY_A)
        assert judge.stats.requests == 4
        budget = generated + first_judged + 100  # less than that and the second judge request's own worst case
        out, cache = workspace / "out", workspace / "c.sqlite"
        code, output = invoke(*run_args(model, data, out, cache, *common, "--budget-tokens", str(budget)),
                              *judge_args(judge))  # fmt: skip
        assert code == BUDGET_EXIT, output
        assert judge.stats.requests == 5  # one judge request fitted
        assert "Budget reached" in output and "judge request(s) were not sent" in output and "larger budget" in output
        assert not (out / "results.json").exists() and len(_lines(out / "predictions.jsonl")) == 4
        code, output = invoke(*run_args(model, data, out, cache, *common, "--budget-tokens", "10000000"),
                              *judge_args(judge))  # fmt: skip
        assert code == 0, output
        assert judge.stats.requests == 8 and model.stats.requests == 8  # each generation and judge request once
    results, _ = read_out(out)
    meta = results["meta"]["judge"]
    assert (meta["requests"], meta["from_cache"], meta["sent"]) == (4, 1, 3)
    assert results["tasks"]["TaxSCQ"]["judge"]["read_by_judge"] == 4


# ---------------------------------------------------------------------------- whose key the judge gets


def test_a_judge_at_another_endpoint_without_its_own_key_stops_before_any_request(workspace: Path) -> None:
    """The generation's key ($OPENAI_API_KEY) is for the generation's endpoint: a judge at
    another one without --judge-api-key-env ends the run (exit 2) before anything is sent to
    either, the judge's /models included."""
    with MockServerThread(MockConfig(fixed_reply=UNREAD)) as model, MockServerThread(MockConfig()) as judge:
        code, output = invoke(*run_args(model, workspace / "data", workspace / "out", workspace / "c.sqlite"),
                              "--judge", "openai:mock", "--judge-base-url", judge.base_url)  # fmt: skip
        assert (model.stats.requests, model.stats.model_listings) == (0, 0)
        assert (judge.stats.requests, judge.stats.model_listings, judge.stats.auth_headers) == (0, 0, set())
        text = " ".join(output.split())
        assert code == 2, output
        assert f"the judge's endpoint {judge.base_url} is not the generation's ({model.base_url})" in text
        assert "$OPENAI_API_KEY is not sent to it" in text and "--judge-api-key-env" in text
        # score has no generation endpoint: $OPENAI_API_KEY is the default endpoint's
        code, output = invoke("score", "--data", str(workspace / "data"), "--predictions",
                              str(workspace / "missing.jsonl"), "--judge", "openai:mock", "--judge-base-url",
                              judge.base_url)  # fmt: skip
        assert code == 2 and "--judge-api-key-env" in output
        assert (judge.stats.requests, judge.stats.model_listings) == (0, 0)


def test_the_judge_gets_its_own_key_or_at_the_same_endpoint_the_generations(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, common = workspace / "data", ("--runs", "1", "--tasks", "TaxCalc")
    with MockServerThread(MockConfig(fixed_reply=UNREAD)) as model, MockServerThread(MockConfig(reply_of=judging)) as judge:
        code, output = invoke(*run_args(model, data, workspace / "a", workspace / "a.sqlite", *common),
                              *judge_args(judge))  # fmt: skip
        assert code == 0, output
        assert judge.stats.auth_headers == {"Bearer sk-judge"} and model.stats.auth_headers == {"Bearer sk-test"}
    monkeypatch.setenv("MODEL_KEY", "sk-model")
    with MockServerThread(MockConfig(reply_of=lambda body: judging(body) if "阅卷助理" in content(body) else UNREAD)) as both:
        code, output = invoke(*run_args(both, data, workspace / "b", workspace / "b.sqlite", *common),
                              "--api-key-env", "MODEL_KEY", "--judge", "openai:mock",
                              "--judge-base-url", both.base_url + "/")  # fmt: skip
        assert code == 0, output
        assert both.stats.auth_headers == {"Bearer sk-model"}  # one endpoint, one key: the generation's
    assert read_out(workspace / "b")[0]["meta"]["judge"]["requests"] > 0


def test_a_cost_budget_needs_the_judges_prices_too(workspace: Path) -> None:
    prices = workspace / "prices.yaml"
    prices.write_text("currency: USD\nmodels:\n  mock: {input: 1.0, output: 2.0}\n", encoding="utf-8")
    with MockServerThread(MockConfig(fixed_reply=UNREAD)) as model, MockServerThread(MockConfig()) as judge:
        code, output = invoke(*run_args(model, workspace / "data", workspace / "out", workspace / "c.sqlite",
                                        "--pricing", str(prices), "--budget-cost", "1"),
                              "--judge", "openai:judge-model", "--judge-base-url", judge.base_url,
                              "--judge-api-key-env", "JUDGE_KEY")  # fmt: skip
        assert (model.stats.requests, judge.stats.requests) == (0, 0)
    assert code == 2, output
    assert "the judge openai:judge-model has no price" in output and "--budget-tokens" in output


def test_the_cost_line_counts_the_judge(workspace: Path) -> None:
    """With prices for both, the terminal's cost line is the model's and the judge's cost
    together, each named; the ledger table has the judge's row."""
    prices = workspace / "prices.yaml"
    prices.write_text("currency: USD\nmodels:\n  mock: {input: 1.0, output: 2.0}\n", encoding="utf-8")
    out = workspace / "out"
    with MockServerThread(MockConfig(fixed_reply=UNREAD)) as model, MockServerThread(MockConfig()) as judge:
        code, output = invoke(*run_args(model, workspace / "data", out, workspace / "c.sqlite", "--runs", "1",
                                        "--pricing", str(prices)), *judge_args(judge))  # fmt: skip
        assert judge.stats.requests > 0
    assert code == 0, output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    model_cost = results["ledger"]["generated"]["cost"]
    judged = results["meta"]["judge"]["tokens"]["generated"]
    assert model_cost > 0 and judged["cost"] > 0
    said = " ".join(output.split())
    assert f"judge {judged['generations']} requests: {judged['prompt_tokens']:,} in / {judged['completion_tokens']:,} out" in said
    assert (f"cost {model_cost + judged['cost']:,.4f} USD (model {model_cost:,.4f} + judge {judged['cost']:,.4f})"
            in said), said  # fmt: skip
    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"| Judge |  |  | {judged['generations']}: " in report and f"{judged['cost']:,.4f} USD" in report


# ---------------------------------------------------------------------------- stopping


def test_a_judge_refusing_the_key_midway_stops_generation_and_a_rerun_asks_only_the_rest(workspace: Path) -> None:
    """TaxCalc, then TaxSCQ, then TaxQA (held by the model, so generation is still going):
    the judge answers TaxCalc's four requests, then refuses the key; the run stops at once
    (exit 2), and the rerun asks the judge only for TaxSCQ."""
    write_data(workspace / "data", {"TaxCalc": CALC, "TaxSCQ": SCQ, "TaxQA": QA})
    never = threading.Event()
    holding = {"on": True}

    def hold_qa(body: dict[str, Any]) -> threading.Event | None:
        return never if holding["on"] and "问答" in content(body) else None

    judge_config = MockConfig(reply_of=judging)

    def refuse_after_four(body: dict[str, Any]) -> None:
        if holding["on"] and judge.stats.requests > 4:
            judge_config.api_key = "sk-another"

    judge_config.on_request = refuse_after_four
    try:
        with MockServerThread(MockConfig(fixed_reply=UNREAD, on_request=hold_qa)) as model, \
                MockServerThread(judge_config) as judge:  # fmt: skip
            args = (*run_args(model, workspace / "data", workspace / "out", workspace / "c.sqlite", "--runs", "1",
                              "--max-retries", "0"), *judge_args(judge))  # fmt: skip
            code, output = invoke(*args)
            assert code == 2, output
            assert "the judge openai:mock stopped" in output and "Incorrect API key" in output
            assert STOPPED_HINT in output and "Generation was stopped with it" in output
            assert not (workspace / "out" / "predictions.jsonl").exists()
            assert model.stats.completed == 8  # TaxQA's two were never answered
            asked = judge.stats.requests
            assert asked > 4
            holding["on"], judge_config.api_key = False, None
            never.set()
            code, output = invoke(*args)
            assert code == 0, output
            assert judge.stats.requests - asked == 4  # TaxSCQ's; TaxCalc's came from the cache
    finally:
        never.set()
    meta = read_out(workspace / "out")[0]["meta"]["judge"]
    assert (meta["requests"], meta["from_cache"], meta["sent"]) == (8, 4, 4)


def test_ctrl_c_stops_generation_and_the_judge_cleanly(workspace: Path) -> None:
    """Interrupted while the judge's first request and the model's TaxSCQ answers are held:
    exit 130, no traceback, what was answered in the cache."""
    never, judge_asked = threading.Event(), threading.Event()

    def hold_scq(body: dict[str, Any]) -> threading.Event | None:
        return never if "增值税一般税率" in content(body) else None

    def hold_judge(body: dict[str, Any]) -> threading.Event:
        judge_asked.set()
        return never

    cache = workspace / "c.sqlite"
    try:
        with MockServerThread(MockConfig(fixed_reply=UNREAD, on_request=hold_scq, hang_s=60)) as model, \
                MockServerThread(MockConfig(fixed_reply=REPLY_A, on_request=hold_judge, hang_s=60)) as judge:  # fmt: skip
            args = [sys.executable, "-c", RUN_SCRIPT, *run_args(model, workspace / "data", workspace / "out", cache,
                    "--runs", "1")[1:], *judge_args(judge)]  # fmt: skip
            env = {**os.environ, "COLUMNS": "200"}
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            try:
                assert judge_asked.wait(60), "the judge was never asked"
                proc.send_signal(signal.SIGINT)
                try:
                    stdout, stderr = proc.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    pytest.fail("still running 60 s after Ctrl-C\n" + stacks_of(proc))
            finally:
                if proc.poll() is None:
                    proc.kill()
            assert proc.returncode == 130, stdout + stderr
            assert "Traceback" not in stderr and "Interrupted: 4 of 8 generations are stored" in stdout
            never.set()
    finally:
        never.set()
    assert _cached(cache) == 4  # TaxCalc's answers; the judge answered nothing


# ---------------------------------------------------------------------------- the cache, two connections


def test_two_cache_connections_write_at_once_without_failing(tmp_path: Path) -> None:
    """Generation's connection and the judge's: WAL (readers never block the writer) and a
    busy timeout (a writer waits for the other's transaction instead of failing)."""
    path = tmp_path / "c.sqlite"
    first, second = CompletionCache(path), CompletionCache(path)
    try:
        for cache in (first, second):
            assert cache._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert cache._conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
        errors: list[BaseException] = []

        def writer(name: str) -> Callable[[], None]:
            def write() -> None:
                try:
                    with CompletionCache(path) as cache:  # a connection per thread, as each runner has its own
                        for k in range(200):
                            cache.put_many([(f"{name}{k}", Completion(f"{name}-{k}"), None)], backend="openai",
                                           model=name)  # fmt: skip
                except BaseException as exc:  # collected and asserted below
                    errors.append(exc)

            return write

        threads = [threading.Thread(target=writer(name)) for name in ("model", "judge")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert len(first) == 400 and first.get_many(["judge199"])["judge199"].text == "judge-199"
    finally:
        first.close()
        second.close()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _cached(path: Path) -> int:
    conn = sqlite3.connect(path, timeout=5)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0])
    finally:
        conn.close()


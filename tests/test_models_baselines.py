"""baseline: and replay: backends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    Request,
    build_request,
)
from taxpraben.models.baselines import BaselineBackend
from taxpraben.models.factory import create_backend
from taxpraben.records import Record
from taxpraben.results.predictions import Prediction, write_predictions
from taxpraben.run.runner import Runner, RunnerSettings
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)
CONFIG = GenerationConfig()

RECORDS = {
    "TaxTopic": Record(
        task="TaxTopic", id="t1", query="这段文字属于哪个税种？", answer="印花税",
        text="签订购销合同应缴纳印花税。\n第二行。", choices=("增值税", "印花税", "契税"), gold=1,
    ),
    "TaxSCQ": Record(
        task="TaxSCQ", id="s1", query="单选题：A. 13% B. 9% C. 6%", answer="9%",
        choices=("13%", "9%", "6%"), gold=1,
    ),
    "TaxMCQ": Record(task="TaxMCQ", id="m1", query="多选题：A B C D E", answer="ABD"),
    "TaxCalc": Record(
        task="TaxCalc", id="c1", query="销售额100000元，税率13%，求销项税额。", answer=13000.0
    ),
    "TaxRead": Record(
        task="TaxRead", id="r1", query="问：税率是多少？", answer="13%",
        text="一般纳税人销售货物适用13%的税率。",
    ),
    "TaxSum": Record(task="TaxSum", id="u1", query="请总结：" + "税" * 300, answer="摘要", text="正文" * 150),
    "TaxInspect": Record(
        task="TaxInspect", id="i1", query="分析案例", answer={"少缴税款": 1200, "分析理由": "未申报"}
    ),
}  # fmt: skip


def answers(name: str, run: int = 0) -> dict[str, str]:
    backend = BaselineBackend(name)
    reqs = [build_request(r, run, CONFIG, REGISTRY[t]) for t, r in RECORDS.items()]
    outs = asyncio.run(backend.generate(reqs, CONFIG))
    assert all(isinstance(o, Completion) for o in outs)
    return {t: o.text for t, o in zip(RECORDS, outs, strict=True)}  # type: ignore[union-attr]


def test_oracle_answers_the_gold() -> None:
    got = answers("oracle")
    assert got["TaxTopic"] == "印花税"
    assert got["TaxSCQ"] == "9%"
    assert got["TaxMCQ"] == "ABD"
    assert got["TaxCalc"] == "13000"
    assert got["TaxRead"] == "13%"
    assert json.loads(got["TaxInspect"]) == {"少缴税款": 1200, "分析理由": "未申报"}


def test_first_choice_and_lead() -> None:
    got = answers("first-choice")
    assert got["TaxTopic"] == "增值税"
    assert got["TaxSCQ"] == "A"  # lettered options
    assert got["TaxMCQ"] == "A"
    assert got["TaxRead"] == "一般纳税人销售货物适用13%的税率。"
    lead = answers("lead")
    assert lead["TaxSum"] == ("正文" * 150)[:200]
    assert lead["TaxCalc"] == RECORDS["TaxCalc"].query  # no text: the query


def test_random_is_seeded_per_run_and_well_formed() -> None:
    a, b, c = answers("random", 0), answers("random", 0), answers("random", 1)
    assert a == b
    assert a != c
    assert a["TaxTopic"] in RECORDS["TaxTopic"].choices  # type: ignore[operator]
    assert a["TaxMCQ"] and set(a["TaxMCQ"]) <= set("ABCDE")
    assert a["TaxCalc"] in {"100000", "13"}


def test_deterministic_baselines_share_runs() -> None:
    assert BaselineBackend("oracle").shares_runs(CONFIG)
    assert not BaselineBackend("random").shares_runs(CONFIG)
    with pytest.raises(ModelSpecError, match="unknown baseline"):
        create_backend("baseline:best")


def test_oracle_through_the_runner_fills_every_run() -> None:
    reqs = [
        build_request(r, run, CONFIG, REGISTRY[t]) for run in range(3) for t, r in RECORDS.items()
    ]
    runner = Runner(create_backend("baseline:oracle"), CONFIG, RunnerSettings(progress=False))
    preds = asyncio.run(runner.run(reqs))
    assert runner.stats.shared_generation and runner.stats.unique == len(RECORDS)
    assert [p.run for p in preds] == [r.run for r in reqs]
    assert all(p.model == "baseline:oracle" and not p.error for p in preds)


def _requests(runs: int) -> list[Request]:
    return [build_request(r, run, CONFIG) for run in range(runs) for r in RECORDS.values()]


def test_replay_reads_the_predictions_contract(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    preds = [
        Prediction(task=t, id=r.id, run=0, prediction=f"answer {t}", usage={"prompt_tokens": 3})
        for t, r in RECORDS.items()
    ]
    preds[0] = Prediction(task="TaxTopic", id="t1", run=0, prediction="", error="HTTP 500")
    write_predictions(path, preds)
    runner = Runner(create_backend(f"replay:{path}"), CONFIG, RunnerSettings(progress=False))
    out = asyncio.run(runner.run(_requests(2)))
    by_key = {p.key: p for p in out}
    assert by_key[("TaxCalc", "c1", 0)].prediction == "answer TaxCalc"
    assert by_key[("TaxCalc", "c1", 0)].usage == {"prompt_tokens": 3}
    assert by_key[("TaxTopic", "t1", 0)].error == "HTTP 500"
    assert "no prediction for task TaxCalc id c1 run 1" in (
        by_key[("TaxCalc", "c1", 1)].error or ""
    )


def test_replay_errors_are_user_facing(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="no such predictions file"):
        create_backend(f"replay:{tmp_path / 'absent.jsonl'}")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": "TaxCalc"}\n', encoding="utf-8")
    with pytest.raises(ModelSpecError, match=r"bad\.jsonl:1"):
        create_backend(f"replay:{bad}")


def test_backend_error_is_not_a_completion() -> None:
    err = BackendError("x", retryable=False)
    assert not isinstance(err, Completion) and err.retry_after is None

"""Builders of result directories (``results.json`` + ``samples.jsonl``) for the report tests.

They follow docs/results-schema.md exactly, with realistic values: 14 tasks, 5 runs, item-level
samples from which every per-run figure is recomputed, so that the figures a report shows and
the paired tests a leaderboard runs agree with each other. Predictions include hostile markup
(``<script>``, ``<img onerror>``, ``</script>`` in a gold) that reports must show as text.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy import stats as scipy_stats

DATA_HASH = "sha256:5f1c0a7d9e2b4c6a8f0e1d3c5b7a9f1e2d4c6b8a0f1e3d5c7b9a1f3e5d7c9b1a"
XSS_SCRIPT = "<script>window.__xss=1</script>"
XSS_IMG = '<img src=x onerror="window.__xss=2">'
XSS_GOLD = "</script><script>window.__xss=3</script>"


@dataclass(frozen=True)
class FixtureTask:
    name: str
    name_zh: str
    type: str
    bloom: str
    base: float  # how hard the task is: the latent score of an average model
    pred_len: int  # typical prediction length in characters
    gold_len: int
    fields: tuple[tuple[str, str], ...] = ()  # (name, kind) for mixed tasks and aspects


TASKS: tuple[FixtureTask, ...] = (
    FixtureTask("TaxRecite", "税法条文背诵", "generation", "remember", 0.55, 260, 220),
    FixtureTask("TaxSum", "税务新闻摘要", "generation", "understand", 0.6, 160, 110),
    FixtureTask("TaxTopic", "涉税文本主题分类", "classification", "understand", 0.75, 90, 5),
    FixtureTask("TaxRead", "税务阅读理解", "structured", "understand", 0.6, 80, 20),
    FixtureTask("TaxCalc", "税额计算", "structured", "apply", 0.45, 320, 8),
    FixtureTask("TaxSCQ", "税务单项选择", "classification", "apply", 0.65, 120, 12),
    FixtureTask("TaxMCQ", "税务多项选择", "structured", "apply", 0.4, 150, 3),
    FixtureTask("TaxQA", "税务知识问答", "generation", "apply", 0.55, 480, 300),
    FixtureTask("TaxBoard", "税务留言板问答", "generation", "apply", 0.5, 520, 260),
    FixtureTask("TaxCrime", "涉税犯罪案例分类", "classification", "analyze", 0.6, 140, 8),
    FixtureTask("TaxOpinion", "税务意见书撰写", "generation", "analyze", 0.5, 820, 650),
    FixtureTask(
        "TaxRisk",
        "税务风险防范",
        "generation",
        "evaluate",
        0.5,
        700,
        520,
        (("风险识别", "text"), ("法律依据", "text"), ("防范建议", "text")),
    ),
    FixtureTask(
        "TaxInspect",
        "税务稽查分析",
        "mixed",
        "evaluate",
        0.5,
        480,
        300,
        (
            ("违法性质", "category"),
            ("少缴税款", "number"),
            ("滞纳金", "number"),
            ("罚款", "number"),
            ("分析理由", "text"),
        ),
    ),
    FixtureTask(
        "TaxPlan",
        "税务筹划方案",
        "mixed",
        "create",
        0.45,
        560,
        360,
        (("筹划方案", "category"), ("节税金额", "number"), ("方案说明", "text")),
    ),
)
TASK_BY_NAME = {t.name: t for t in TASKS}

PHRASES = (
    "根据《中华人民共和国增值税暂行条例》的规定",
    "纳税人销售货物或者提供应税劳务",
    "应当按照适用税率计算缴纳增值税",
    "企业所得税的税率为百分之二十五",
    "符合条件的小型微利企业减按百分之二十的税率征收",
    "个人所得税综合所得按年度汇算清缴",
    "税务机关依法追缴其不缴或者少缴的税款",
    "并自滞纳税款之日起按日加收万分之五的滞纳金",
    "处不缴或者少缴的税款百分之五十以上五倍以下的罚款",
    "纳税人应当在规定的期限内办理纳税申报",
    "企业发生的研发费用可以按照规定加计扣除",
    "虚开增值税专用发票构成犯罪的依法追究刑事责任",
    "建议企业建立健全内部税务风险控制制度",
    "对关联交易应当遵循独立交易原则",
    "留抵退税政策有效缓解了企业资金压力",
    "税务部门持续优化营商环境",
    "进一步落实结构性减税降费政策",
    "该公司通过隐匿收入的方式少缴税款",
    "综上所述",
    "因此",
    "同时",
    "此外",
    "需要注意的是",
    "具体而言",
)
TOPICS = ("增值税", "企业所得税", "个人所得税", "消费税", "印花税", "土地增值税", "契税", "车船税")
CRIMES = ("逃税罪", "虚开增值税专用发票罪", "骗取出口退税罪", "抗税罪", "非法出售发票罪")
SCQ = ("A. 13%", "B. 9%", "C. 6%", "D. 3%")


_ZIPF_CHARS = [chr(0x4E00 + (k * 7919) % 20902) for k in range(3500)]
_ZIPF_WEIGHTS = [1 / (k + 1) for k in range(3500)]
TEXT_MODE = {"mode": "phrases"}  # "zipf": characters drawn Zipf-like (size measurements)


def chinese_text(rng: random.Random, length: int) -> str:
    """Tax-flavoured Chinese prose of about ``length`` characters, in sentences.

    With ``TEXT_MODE["mode"] == "zipf"`` the characters are drawn from 3,500 CJK characters
    with Zipf weights instead: about as hard to compress as real Chinese text (the phrase mode
    repeats 24 phrases and compresses unrealistically well).
    """
    if TEXT_MODE["mode"] == "zipf":
        chars = rng.choices(_ZIPF_CHARS, weights=_ZIPF_WEIGHTS, k=max(length - 1, 0))
        for k in range(12, len(chars), rng.randrange(12, 30)):
            chars[k] = "，"
        return "".join(chars) + "。"
    parts: list[str] = []
    size = 0
    while size < length:
        phrase = rng.choice(PHRASES)
        parts.append(phrase + rng.choice("，，。；"))
        size += len(phrase) + 1
    return "".join(parts)[: max(length, 1) - 1] + "。"


def stat(
    values: list[float | None], item_sd: float | None = None, n: int = 0
) -> dict[str, Any] | None:
    """A STAT over the runs as the schema defines it (None when any run is None)."""
    if not values or any(v is None for v in values):
        return None
    k = len(values)
    mean = sum(values) / k
    if k > 1:
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / (k - 1))
        half = float(scipy_stats.t.ppf(0.975, k - 1)) * std / math.sqrt(k)
        ci = [mean - half, mean + half]
    else:
        std, ci = None, None
    boot = None
    if item_sd is not None and n:
        half = 1.96 * item_sd / math.sqrt(n * k)
        boot = [mean - half, mean + half]
    return {"mean": mean, "std": std, "ci95": ci, "runs": list(values), "bootstrap_ci95": boot}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _sd(values: list[float]) -> float:
    m = _mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / max(len(values) - 1, 1))


def _clip(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return min(hi, max(lo, x))


def _item(
    task: FixtureTask, i: int, run: int, latent: float, rng: random.Random, scale: float
) -> dict[str, Any]:
    """One line of samples.jsonl for ``task`` item ``i`` in ``run``."""
    pred_len = max(4, int(rng.gauss(task.pred_len, task.pred_len * 0.25) * scale))
    gold_rng = random.Random(f"gold:{task.name}:{i}")
    gold_len = max(2, int(gold_rng.gauss(task.gold_len, task.gold_len * 0.2) * scale))
    status = "ok"
    if rng.random() < 0.04:
        status = "format_failure"
    if rng.random() < 0.005:
        status = "error"
    line: dict[str, Any] = {
        "task": task.name,
        "id": str(i),
        "run": run,
        "status": status,
        "prediction": "",
        "gold": "",
        "extracted": None,
        "scores": {},
        "score": 0.0,
        "error": None,
    }
    if status == "error":
        line.update(prediction=None, error="HTTP 503: upstream overloaded", score=0.0)
    if task.type == "classification":
        choices = {"TaxTopic": TOPICS, "TaxCrime": CRIMES, "TaxSCQ": SCQ}[task.name]
        gold = choices[gold_rng.randrange(len(choices))]
        correct = status == "ok" and latent > 0.5
        label = gold if correct else rng.choice([c for c in choices if c != gold])
        if status == "format_failure":
            label = "missing"
        line["gold"] = gold
        if status != "error":
            line["prediction"] = chinese_text(rng, pred_len) + (
                f"答案：{label}" if status == "ok" else "无法判断。"
            )
        line["extracted"] = label if status != "error" else None
        line["scores"] = {"acc": 1.0 if correct else 0.0}
        line["score"] = 1.0 if correct else 0.0
    elif task.type == "structured":
        if task.name == "TaxCalc":
            gold = f"{gold_rng.randrange(100, 90000) + gold_rng.randrange(100) / 100:.2f}"
        elif task.name == "TaxMCQ":
            gold = "".join(sorted(gold_rng.sample("ABCDE", gold_rng.randrange(2, 5))))
        else:
            gold = chinese_text(gold_rng, gold_len)
        correct = status == "ok" and latent > 0.5
        extracted = (
            gold if correct else (f"{float(gold) * 1.13:.2f}" if task.name == "TaxCalc" else "AB")
        )
        line["gold"] = gold
        if status != "error":
            line["prediction"] = chinese_text(rng, pred_len) + (
                f"答案：{extracted}" if status == "ok" else ""
            )
        line["extracted"] = extracted if status == "ok" else None
        line["scores"] = {"em": 1.0 if correct else 0.0}
        line["score"] = line["scores"]["em"]
    else:  # generation and mixed
        line["gold"] = chinese_text(gold_rng, gold_len)
        if status != "error":
            line["prediction"] = chinese_text(rng, pred_len)
        ok = status == "ok"
        bert = _clip(0.52 + 0.35 * latent + rng.gauss(0, 0.03)) if ok else 0.0
        raw = -4.6 + 2.4 * latent + rng.gauss(0, 0.2) if ok else None
        bart = math.exp(min(raw, 0.0)) if raw is not None else 0.0
        if task.type == "generation":
            line["scores"] = {"bertscore": bert, "bartscore": bart, "bartscore_raw": raw}
            line["score"] = (bert + bart) / 2
            line["extracted"] = None
            if task.fields:
                line["fields"] = {
                    name: {
                        "pred": chinese_text(rng, 30),
                        "gold": chinese_text(gold_rng, 30),
                        "score": _clip(bert + rng.gauss(0, 0.03)) if ok else 0.0,
                        "status": "ok" if ok else "format_failure",
                    }
                    for name, _ in task.fields
                }
        else:
            fields: dict[str, Any] = {}
            ems: list[float] = []
            texts: list[float] = []
            for name, kind in task.fields:
                if kind == "text":
                    value = bert
                    texts.append(value)
                    fields[name] = {
                        "pred": chinese_text(rng, 60) if ok else None,
                        "gold": chinese_text(gold_rng, 60),
                        "score": value,
                        "status": "ok" if ok else "format_failure",
                    }
                else:
                    gold_value: Any = (
                        gold_rng.randrange(1000, 200000) if kind == "number" else "偷税"
                    )
                    hit = ok and latent + rng.gauss(0, 0.15) > 0.5
                    pred_value = (
                        str(gold_value) if hit else ("虚开发票" if kind == "category" else "0")
                    )
                    fields[name] = {
                        "pred": pred_value if ok else None,
                        "gold": gold_value,
                        "score": 1.0 if hit else 0.0,
                        "status": "ok" if ok else "format_failure",
                    }
                    ems.append(1.0 if hit else 0.0)
            line["fields"] = fields
            em, bs = _mean(ems), _mean(texts)
            line["scores"] = {"em": em, "bertscore": bs}
            line["score"] = (em + bs) / 2
            line["extracted"] = {k: v["pred"] for k, v in fields.items()} if ok else None
            if status != "error":
                line["prediction"] = "\n".join(f"{k}：{v['pred']}" for k, v in fields.items())
    return line


def _task_run_metrics(task: FixtureTask, lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-run entry of one task, recomputed from its sample lines."""
    n = len(lines)
    counts = {
        s: sum(1 for x in lines if x["status"] == s) for s in ("ok", "format_failure", "error")
    }
    scores = [x["score"] for x in lines]
    if task.type == "classification":
        acc = _mean(scores)
        metrics = {
            "acc": acc,
            "f1": _clip(acc - 0.021),
            "macro_f1": _clip(acc - 0.083),
            "missing_rate": counts["format_failure"] / n,
        }
        score = (metrics["acc"] + metrics["f1"]) / 2
    elif task.type == "structured":
        metrics = {"em": _mean(scores)}
        score = metrics["em"]
    elif task.type == "generation":
        raws = [
            x["scores"]["bartscore_raw"]
            for x in lines
            if x["scores"].get("bartscore_raw") is not None
        ]
        metrics = {
            "bertscore": _mean([x["scores"]["bertscore"] for x in lines]),
            "bartscore": _mean([x["scores"]["bartscore"] for x in lines]),
            "bartscore_raw": _mean(raws),
        }
        score = (metrics["bertscore"] + metrics["bartscore"]) / 2
    else:
        metrics = {
            "em": _mean([x["scores"]["em"] for x in lines]),
            "bertscore": _mean([x["scores"]["bertscore"] for x in lines]),
        }
        score = _mean(scores)
    return {
        "metrics": metrics,
        "score": score,
        "format_failure_rate": counts["format_failure"] / n,
        "error_rate": counts["error"] / n,
        "counts": counts,
    }


def build_result_dir(
    out: Path,
    *,
    model: str | None = "openai:deepseek-chat",
    quality: float = 0.0,
    seed: int = 0,
    items_per_task: int = 10,
    runs: int = 5,
    not_computed: tuple[str, ...] = (),
    data_hash: str = DATA_HASH,
    profile: str = "taxpraben",
    text_scale: float = 1.0,
    hostile: bool = True,
    tasks: tuple[str, ...] | None = None,
    manifest: dict[str, Any] | None = None,
) -> Path:
    """Write ``out/results.json`` and ``out/samples.jsonl`` for one model.

    ``quality`` shifts the model's latent ability (0 is average); items share a difficulty
    across models (so two models' scores are paired), while ``seed`` draws the model's own
    noise. ``not_computed`` marks tasks whose scorer was unavailable; ``manifest`` is written
    as ``meta.manifest`` when given.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [TASK_BY_NAME[name] for name in tasks] if tasks else list(TASKS)
    samples: list[dict[str, Any]] = []
    per_task_runs: dict[str, list[dict[str, Any]]] = {}
    item_sd: dict[str, float] = {}
    for task in chosen:
        difficulty = random.Random(f"difficulty:{task.name}")
        diffs = [difficulty.gauss(0, 0.22) for _ in range(items_per_task)]
        model_rng = random.Random(f"model:{seed}:{task.name}")
        affinity = [model_rng.gauss(0, 0.08) for _ in range(items_per_task)]
        runs_out: list[dict[str, Any]] = []
        all_scores: list[float] = []
        for run in range(runs):
            rng = random.Random(f"run:{seed}:{task.name}:{run}")
            lines = []
            for i in range(items_per_task):
                latent = task.base + quality + diffs[i] + affinity[i] + rng.gauss(0, 0.05)
                line = _item(task, i, run, latent, rng, text_scale)
                if task.name in not_computed:
                    line["scores"], line["score"] = {}, None
                lines.append(line)
            if hostile and task.name == "TaxQA" and run in (0, 1):
                lines[0]["prediction"] = (
                    ("答案见下：" + XSS_SCRIPT) if run == 0 else ("图片" + XSS_IMG + "结束")
                )
            if hostile and task.name == "TaxRead":
                lines[1]["gold"] = "第十二条" + XSS_GOLD
            samples.extend(lines)
            if task.name in not_computed:
                counts = {
                    s: sum(1 for x in lines if x["status"] == s)
                    for s in ("ok", "format_failure", "error")
                }
                runs_out.append(
                    {
                        "metrics": None,
                        "score": None,
                        "counts": counts,
                        "format_failure_rate": counts["format_failure"] / len(lines),
                        "error_rate": counts["error"] / len(lines),
                    }
                )
            else:
                runs_out.append(_task_run_metrics(task, lines))
                all_scores.extend(x["score"] for x in lines)
        per_task_runs[task.name] = runs_out
        item_sd[task.name] = _sd(all_scores) if all_scores else 0.0

    tasks_out: dict[str, Any] = {}
    for task in chosen:
        runs_out = per_task_runs[task.name]
        computed = task.name not in not_computed
        metric_keys = {
            "classification": ("acc", "f1", "macro_f1", "missing_rate"),
            "structured": ("em",),
            "generation": ("bertscore", "bartscore", "bartscore_raw"),
            "mixed": ("em", "bertscore"),
        }[task.type]
        n = items_per_task
        entry: dict[str, Any] = {
            "name_zh": task.name_zh,
            "type": task.type,
            "bloom": task.bloom,
            "n": n,
            "status": "ok" if computed else "not_computed",
            "reason": None
            if computed
            else "BERTScore model hfl/chinese-xlnet-base unavailable: no network and no local copy",
            "metrics": {
                key: stat([r["metrics"][key] for r in runs_out], item_sd[task.name], n)
                if computed
                else None
                for key in metric_keys
            },
            "score": stat([r["score"] for r in runs_out], item_sd[task.name], n)
            if computed
            else None,
            "format_failure_rate": stat([r["format_failure_rate"] for r in runs_out]),
            "error_rate": stat([r["error_rate"] for r in runs_out]),
            "per_run": [
                {
                    "run": k,
                    "metrics": r["metrics"],
                    "score": r["score"],
                    "format_failure_rate": r["format_failure_rate"],
                    "error_rate": r["error_rate"],
                    "counts": r["counts"],
                }
                for k, r in enumerate(runs_out)
            ],
        }
        if task.fields:
            fields: dict[str, Any] = {}
            for name, kind in task.fields:
                per_run_scores = []
                per_run_ff = []
                for run in range(runs):
                    lines = [s for s in samples if s["task"] == task.name and s["run"] == run]
                    per_run_scores.append(
                        _mean([s["fields"][name]["score"] for s in lines if s.get("fields")])
                    )
                    per_run_ff.append(
                        _mean(
                            [
                                1.0
                                if (not s.get("fields") or s["fields"][name]["status"] != "ok")
                                else 0.0
                                for s in lines
                            ]
                        )
                    )
                metric = "bertscore" if kind == "text" else "em"
                fields[name] = {
                    "kind": kind,
                    metric: stat(per_run_scores) if computed else None,
                    "format_failure_rate": stat(per_run_ff),
                }
            entry["fields"] = fields
        tasks_out[task.name] = entry

    computed_tasks = [t for t in chosen if t.name not in not_computed]

    def group_stat(members: list[FixtureTask]) -> dict[str, Any] | None:
        if not members:
            return None
        return stat(
            [_mean([per_task_runs[t.name][r]["score"] for t in members]) for r in range(runs)]
        )

    groups = {
        "type": {
            k: group_stat([t for t in computed_tasks if t.type == k])
            for k in ("classification", "generation", "structured", "mixed")
        },
        "bloom": {
            k: group_stat([t for t in computed_tasks if t.bloom == k])
            for k in ("remember", "understand", "apply", "analyze", "evaluate", "create")
        },
    }
    overall = group_stat(computed_tasks) or {
        "mean": None,
        "std": None,
        "ci95": None,
        "runs": [],
        "bootstrap_ci95": None,
    }
    overall_sd = _mean([item_sd[t.name] for t in computed_tasks])
    if overall.get("mean") is not None:
        half = 1.96 * overall_sd / math.sqrt(items_per_task * max(len(computed_tasks), 1))
        overall["bootstrap_ci95"] = [overall["mean"] - half, overall["mean"] + half]
    overall.update(partial=bool(not_computed), tasks=[t.name for t in computed_tasks])

    n_items = items_per_task * len(chosen)
    results = {
        "schema_version": 1,
        "meta": {
            "model": model,
            "endpoint": "https://api.deepseek.com/v1"
            if model and model.startswith("openai:")
            else None,
            "generation": {
                "temperature": 0,
                "top_p": None,
                "max_tokens": 1024,
                "seed_base": 0,
                "system_prompt": None,
                "gen_kwargs": {},
            },
            "runs": runs,
            "shared_generation": False,
            "data_dir": "/data/taxpraben",
            "data_hash": data_hash,
            "profile": profile,
            "scorers": {
                "bertscore": {
                    "model": "hfl/chinese-xlnet-base",
                    "layer": 5,
                    "idf": False,
                    "max_tokens": None,
                    "available": not not_computed,
                    "reason": "no network and no local copy" if not_computed else None,
                },
                "bartscore": {
                    "model": "facebook/bart-large-cnn",
                    "weights": None,
                    "max_length": 1024,
                    "available": True,
                    "reason": None,
                },
            },
            "package_version": "0.1.0",
            "git_hash": "abc1234",
            "started_at": "2026-11-30T03:20:51+00:00",
            "finished_at": "2026-11-30T04:02:13+00:00",
            "tasks": [t.name for t in chosen],
            "counts": {
                "items": n_items,
                "predictions": n_items * runs,
                "missing_predictions": 0,
                "unknown_predictions": 0,
                "duplicate_predictions": 0,
                "errors": sum(1 for s in samples if s["status"] == "error"),
            },
        },
        "tasks": tasks_out,
        "groups": groups,
        "overall": overall,
    }
    if manifest is not None:
        results["meta"]["manifest"] = manifest
    (out / "results.json").write_text(
        json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8"
    )
    with (out / "samples.jsonl").open("w", encoding="utf-8") as handle:
        for line in samples:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    return out

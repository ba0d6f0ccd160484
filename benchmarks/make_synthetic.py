"""Write a full-size synthetic TaxPraBen data directory (and, optionally, model predictions).

Fourteen datasets in the data contract (README, "Data format"), at the real sizes: the nine
TaxBen datasets at TaxBen's sizes (6,000 records), the five newer ones at 260 each, so the
total is the paper's 7.3K. Text lengths follow the bundled sample: prompts of 100-900
characters, generation golds of 100-500, mixed-task rationales of 80-200. Golds follow the
contract exactly: classification ``choices`` + ``gold`` index (``answer`` = ``choices[gold]``),
TaxMCQ option letters ("ABD"), TaxCalc numbers, TaxRisk / TaxInspect / TaxPlan JSON objects
with the field names of their task specs. Everything is a pure function of ``--seed``.

``--predictions FILE --runs N`` also writes model-like predictions for N runs: mostly right
answers in the shapes models give (answer markers, option letters, JSON in code fences,
``<think>`` blocks, ``字段：值`` lines), some wrong, some unparseable, runs differing a little,
so that scoring at scale does the work a real evaluation does.

    python benchmarks/make_synthetic.py --out /tmp/syn                      # 7,300 records
    python benchmarks/make_synthetic.py --out /tmp/syn --predictions /tmp/syn-preds.jsonl
    python benchmarks/make_synthetic.py --out /tmp/small --scale 0.03        # ~220 records
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (puts tests/ on sys.path)

from helpers.tiny_models import tax_sentence

#: Records per dataset: TaxBen's sizes for the nine it has, 260 for the five newer ones.
SIZES: dict[str, int] = {
    "TaxRecite": 200,
    "TaxSum": 1000,
    "TaxTopic": 1000,
    "TaxRead": 1000,
    "TaxCalc": 500,
    "TaxSCQ": 700,
    "TaxMCQ": 400,
    "TaxQA": 700,
    "TaxBoard": 500,
    "TaxCrime": 260,
    "TaxOpinion": 260,
    "TaxRisk": 260,
    "TaxInspect": 260,
    "TaxPlan": 260,
}

TAXES = ["增值税", "消费税", "企业所得税", "个人所得税", "印花税", "土地增值税", "房产税", "契税",
         "城市维护建设税", "车辆购置税"]  # fmt: skip
CRIMES = ["逃税罪", "抗税罪", "逃避追缴欠税罪", "骗取出口退税罪", "虚开增值税专用发票罪", "虚开发票罪",
          "非法出售增值税专用发票罪", "非法购买增值税专用发票罪", "持有伪造的发票罪"]  # fmt: skip
VIOLATIONS = ["偷税", "虚开发票", "未按规定申报", "逃避追缴欠税"]
LAWS = ["中华人民共和国个人所得税法", "中华人民共和国企业所得税法", "中华人民共和国增值税法",
        "中华人民共和国税收征收管理法", "中华人民共和国印花税法", "中华人民共和国契税法"]  # fmt: skip
COMPANIES = ["甲公司", "乙公司", "A商贸有限公司", "B科技有限公司", "某机械制造有限公司", "某建筑工程公司",
             "某电商企业", "某物流有限公司", "某餐饮连锁企业", "某房地产开发公司"]  # fmt: skip
CATEGORIES = ["一般纳税人", "小规模纳税人", "小型微利企业", "高新技术企业", "个体工商户"]


def paragraph(rng: random.Random, lo: int, hi: int) -> str:
    """Tax prose of about ``lo``-``hi`` characters (sentences of ~45 characters)."""
    target = rng.randint(lo, hi)
    text = ""
    while len(text) < target:
        text += tax_sentence(rng)
    return text


def money(rng: random.Random, lo: int, hi: int) -> float:
    return round(rng.uniform(lo, hi), 2)


# ---------------------------------------------------------------------------- records


def chinese_numeral(n: int) -> str:
    """1..999 as written in article numbers: 第二十五条, 第一百零三条."""
    digits = "零一二三四五六七八九"
    hundreds, tens, ones = n // 100, n // 10 % 10, n % 10
    out = f"{digits[hundreds]}百" if hundreds else ""
    if tens:
        out += ("" if tens == 1 and not hundreds else digits[tens]) + "十"
    elif hundreds and ones:
        out += "零"
    return out + (digits[ones] if ones else "")


def _recite(rng: random.Random, i: int) -> dict[str, Any]:
    # Every (law, article) once, as in the real dataset: no two records share a query.
    law, article = LAWS[i % len(LAWS)], f"第{chinese_numeral(i // len(LAWS) + 1)}条"
    return {
        "query": f"请背诵《{law}》{article}的内容，直接写出条文原文。",
        "answer": paragraph(rng, 120, 420),
        "law": law,
        "article": article,
    }


def _summary(rng: random.Random, i: int) -> dict[str, Any]:
    news = paragraph(rng, 350, 900)
    return {
        "query": f"请阅读下面的税务新闻，用简洁的语言概括其主要内容，摘要不超过150字。\n新闻：{news}\n摘要：",
        "text": news,
        "answer": paragraph(rng, 80, 150),
    }


def _topic(rng: random.Random, i: int) -> dict[str, Any]:
    gold = rng.randrange(len(TAXES))
    text = paragraph(rng, 60, 160) + f"本案主要涉及{TAXES[gold]}的处理。"
    return {
        "query": (
            f"请判断下面这段文本主要涉及的税种，只能从以下选项中选择一个：{'、'.join(TAXES)}。\n"
            f"文本：{text}\n请直接输出税种名称。答案："
        ),
        "text": text,
        "answer": TAXES[gold],
        "choices": TAXES,
        "gold": gold,
    }


def _read(rng: random.Random, i: int) -> dict[str, Any]:
    rate = rng.choice(["1%", "3%", "6%", "9%", "13%", "20%", "25%"])
    subject = rng.choice(CATEGORIES)
    fact = f"{subject}适用的税率为{rate}"
    text = paragraph(rng, 100, 300) + fact + "。" + paragraph(rng, 50, 150)
    question = f"根据材料，{subject}适用的税率为多少？"
    return {
        "query": (
            "请阅读以下材料，根据材料内容回答问题，答案须直接摘自材料原文，尽量简短。\n"
            f"材料：{text}\n问题：{question}\n答案："
        ),
        "text": text,
        "question": question,
        "answer": rate,
    }


def _calc(rng: random.Random, i: int) -> dict[str, Any]:
    company = rng.choice(COMPANIES)
    rate = rng.choice([0.13, 0.09, 0.06])
    price = rng.randrange(100_000, 9_000_000, 1000)
    input_tax = round(price / (1 + rate) * rate * rng.uniform(0.1, 0.7), 2)
    payable = round(price / (1 + rate) * rate - input_tax, 2)
    text = (
        f"{company}为增值税一般纳税人，2024年{rng.randint(1, 12)}月取得含税销售额{price:,}元；"
        f"当月取得增值税专用发票，经认证可抵扣的进项税额为{input_tax:,.2f}元，无上期留抵税额。"
    )
    return {
        "query": (
            f"请根据以下资料和计算规则完成税额计算。\n资料：{text}\n"
            f"计算规则：适用{rate:.0%}的增值税税率；不含税销售额=含税销售额÷(1+税率)；"
            "应纳增值税=销项税额-可抵扣进项税额。\n问题：该公司当月应缴纳增值税多少元？\n"
            "请给出最终计算结果，单位为元，保留两位小数，只输出一个数值。答案："
        ),
        "text": text,
        "answer": payable,
    }


def _options(rng: random.Random, n: int) -> list[str]:
    seen: list[str] = []
    while len(seen) < n:
        option = f"{rng.choice(CATEGORIES)}{rng.choice(['应当', '可以', '不得'])}{rng.choice(TAXES)}" + rng.choice(
            ["按月申报", "享受减免", "抵扣进项税额", "适用简易计税", "由扣缴义务人代扣代缴", "在次年汇算清缴"]
        )
        if option not in seen:
            seen.append(option)
    return seen


def _scq(rng: random.Random, i: int) -> dict[str, Any]:
    choices = _options(rng, 4)
    gold = rng.randrange(4)
    question = tax_sentence(rng).rstrip("。；") + "，下列说法正确的是（ ）。"
    shown = "\n".join(f"{'ABCD'[k]}. {c}" for k, c in enumerate(choices))
    return {
        "query": (
            f"以下是中国税法考试中的单项选择题，请选出唯一正确的选项。\n题目：{question}\n{shown}\n"
            "请直接输出正确选项的字母（A、B、C或D）。答案："
        ),
        "answer": choices[gold],
        "choices": choices,
        "gold": gold,
    }


def _mcq(rng: random.Random, i: int) -> dict[str, Any]:
    options = _options(rng, 5)
    letters = "".join(sorted(rng.sample("ABCDE", rng.randint(2, 4))))
    question = tax_sentence(rng).rstrip("。；") + "，下列各项中正确的有（ ）。"
    shown = "\n".join(f"{'ABCDE'[k]}. {c}" for k, c in enumerate(options))
    return {
        "query": (
            "以下是中国税法考试中的多项选择题，每题有两个或两个以上正确选项，请选出全部正确选项。\n"
            f"题目：{question}\n{shown}\n请直接输出所有正确选项的字母，例如“ABD”。答案："
        ),
        "answer": letters,
        "options": options,
    }


def _qa(rng: random.Random, i: int) -> dict[str, Any]:
    question = tax_sentence(rng).rstrip("。；") + "，应当如何进行税务处理？"
    return {
        "query": f"你是一名专业的税务顾问，请准确、完整地回答下面的税务问题。\n问题：{question}\n回答：",
        "answer": paragraph(rng, 150, 400),
    }


def _board(rng: random.Random, i: int) -> dict[str, Any]:
    title = f"关于{rng.choice(TAXES)}{rng.choice(['申报', '退税', '优惠', '发票'])}的咨询"
    text = paragraph(rng, 80, 250) + "请问应该怎么办？"
    return {
        "query": (
            "你是12366纳税缴费服务平台的工作人员，请以税务机关的口吻回复纳税人在留言板上的提问，"
            f"回复应准确引用相关政策。\n留言标题：{title}\n留言内容：{text}\n回复："
        ),
        "text": text,
        "title": title,
        "answer": "您好！" + paragraph(rng, 120, 380) + "感谢您的支持！",
    }


def _crime(rng: random.Random, i: int) -> dict[str, Any]:
    gold = rng.randrange(len(CRIMES))
    text = f"被告人{rng.choice('赵钱孙李周吴郑王')}某系{rng.choice(COMPANIES)}实际控制人。" + paragraph(rng, 150, 400)
    return {
        "query": (
            f"请根据以下刑事案件的案情事实，判断被告人（被告单位）的行为构成何种涉税犯罪。可选罪名：{'、'.join(CRIMES)}。\n"
            f"案情：{text}\n请从可选罪名中选择一项作答。罪名："
        ),
        "text": text,
        "answer": CRIMES[gold],
        "choices": CRIMES,
        "gold": gold,
    }


def _opinion(rng: random.Random, i: int) -> dict[str, Any]:
    text = f"{rng.choice(COMPANIES)}为{rng.choice(CATEGORIES)}，" + paragraph(rng, 100, 250)
    return {
        "query": (
            "请以注册税务师的身份，就以下涉税事项出具专业的税务意见，说明涉及的税种、政策依据、"
            f"税务处理及建议。\n事项：{text}\n税务意见："
        ),
        "text": text,
        "answer": paragraph(rng, 250, 500),
    }


def _risk(rng: random.Random, i: int) -> dict[str, Any]:
    text = f"{rng.choice(COMPANIES)}为{rng.choice(CATEGORIES)}，" + paragraph(rng, 100, 250)
    return {
        "query": (
            "请以税务风险管理专家的身份，分析以下企业案例中存在的税务风险，分别从风险识别、法律依据、"
            f"防范建议三个方面作答。\n案例：{text}\n请严格按照以下JSON格式输出：\n"
            '{"风险识别": "", "法律依据": "", "防范建议": ""}'
        ),
        "text": text,
        "answer": {
            "风险识别": paragraph(rng, 60, 150),
            "法律依据": paragraph(rng, 60, 150),
            "防范建议": paragraph(rng, 60, 150),
        },
    }


def _inspect(rng: random.Random, i: int) -> dict[str, Any]:
    hidden = rng.randrange(100_000, 5_000_000, 1000)
    rate = rng.choice([0.13, 0.09, 0.06])
    days = rng.randint(30, 900)
    times = rng.choice([0.5, 1.0, 1.5, 2.0])
    tax = round(hidden / (1 + rate) * rate, 2)
    text = (
        f"稽查局对{rng.choice(COMPANIES)}2023年度纳税情况进行检查，发现该公司隐匿含税销售收入{hidden:,}元，"
        f"适用{rate:.0%}的增值税税率，滞纳天数为{days}天，稽查局决定处少缴税款{times}倍的罚款。"
        + paragraph(rng, 50, 200)
    )
    return {
        "query": (
            "你是一名资深税务稽查人员。请阅读以下税务稽查案例，判断违法行为的性质，计算应补缴的少缴税款、"
            f"滞纳金和罚款，并说明分析理由。\n案例：{text}\n要求：违法性质从“偷税”“虚开发票”“未按规定申报”"
            "“逃避追缴欠税”中选择一项；滞纳金=少缴税款×0.05%×滞纳天数；金额单位为元，保留两位小数。\n"
            '请严格按照以下JSON格式输出：\n{"违法性质": "", "少缴税款": 0.00, "滞纳金": 0.00, "罚款": 0.00, "分析理由": ""}'
        ),
        "text": text,
        "answer": {
            "违法性质": rng.choice(VIOLATIONS),
            "少缴税款": tax,
            "滞纳金": round(tax * 0.0005 * days, 2),
            "罚款": round(tax * times, 2),
            "分析理由": paragraph(rng, 80, 200),
        },
    }


def _plan(rng: random.Random, i: int) -> dict[str, Any]:
    one, two = money(rng, 10_000, 900_000), money(rng, 10_000, 900_000)
    text = f"{rng.choice(COMPANIES)}现有两种经营方案可供选择。" + paragraph(rng, 150, 350)
    return {
        "query": (
            "你是一名税务筹划顾问。请根据以下案例，分别计算两个方案的税负，推荐税负较低的方案，计算节税金额，"
            f"并说明筹划理由。\n案例：{text}\n要求：税负和节税金额单位为元，保留两位小数；推荐方案填写“方案一”或“方案二”。\n"
            '请严格按照以下JSON格式输出：\n{"方案一税负": 0.00, "方案二税负": 0.00, "推荐方案": "", "节税金额": 0.00, "筹划理由": ""}'
        ),
        "text": text,
        "answer": {
            "方案一税负": one,
            "方案二税负": two,
            "推荐方案": "方案一" if one <= two else "方案二",
            "节税金额": round(abs(one - two), 2),
            "筹划理由": paragraph(rng, 80, 200),
        },
    }


MAKERS: dict[str, Callable[[random.Random, int], dict[str, Any]]] = {
    "TaxRecite": _recite, "TaxSum": _summary, "TaxTopic": _topic, "TaxRead": _read,
    "TaxCalc": _calc, "TaxSCQ": _scq, "TaxMCQ": _mcq, "TaxQA": _qa, "TaxBoard": _board,
    "TaxCrime": _crime, "TaxOpinion": _opinion, "TaxRisk": _risk, "TaxInspect": _inspect,
    "TaxPlan": _plan,
}  # fmt: skip


def sizes(scale: float = 1.0) -> dict[str, int]:
    return {task: max(1, round(n * scale)) for task, n in SIZES.items()}


def records(task: str, n: int, seed: int) -> Iterator[dict[str, Any]]:
    """The ``n`` records of ``task`` (each task has its own stream, so sizes are independent)."""
    rng = random.Random(f"{seed}:{task}")
    for i in range(n):
        yield {"id": str(i + 1), **MAKERS[task](rng, i)}


def write_data(out: Path, *, seed: int = 0, scale: float = 1.0) -> dict[str, int]:
    """Write one ``TASK.jsonl`` per dataset into ``out``; returns the record counts."""
    out.mkdir(parents=True, exist_ok=True)
    counts = sizes(scale)
    for task, n in counts.items():
        with open(out / f"{task}.jsonl", "w", encoding="utf-8") as fh:
            for rec in records(task, n, seed):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return counts


# ---------------------------------------------------------------------------- predictions


def _fmt_amount(rng: random.Random, value: float) -> str:
    return rng.choice([f"{value:.2f}", f"{value:,.2f}", f"{value:,.2f}元", f"{value / 10000:.4f}万元"])


def _wrong(rng: random.Random) -> bool:
    return rng.random() < 0.25


def _fields_text(rng: random.Random, fields: dict[str, Any]) -> str:
    """A mixed-task answer as models write it: JSON (fenced or not), or 字段：值 lines."""
    shape = rng.random()
    if shape < 0.55:
        return json.dumps(fields, ensure_ascii=False)
    if shape < 0.8:
        return "分析如下：\n```json\n" + json.dumps(fields, ensure_ascii=False, indent=2) + "\n```"
    if shape < 0.95:
        return "\n".join(f"{k}：{v}" for k, v in fields.items())
    return '{"' + next(iter(fields)) + '": '  # truncated: a format failure


def predict(task: str, rec: dict[str, Any], rng: random.Random) -> str:
    """One model-like prediction for a record (right about 3 times in 4)."""
    answer = rec["answer"]
    if rng.random() < 0.03:
        return rng.choice(["抱歉，我无法回答这个问题。", "", "根据现有资料无法判断。"])
    think = f"<think>{tax_sentence(rng)}</think>\n" if rng.random() < 0.1 else ""
    if task in ("TaxTopic", "TaxCrime", "TaxSCQ"):
        choices = rec["choices"]
        k = rng.randrange(len(choices)) if _wrong(rng) else rec["gold"]
        if task == "TaxSCQ" and rng.random() < 0.7:
            return think + rng.choice([f"答案：{'ABCD'[k]}", f"{'ABCD'[k]}", f"正确答案是{'ABCD'[k]}。{tax_sentence(rng)}"])
        return think + rng.choice([f"答案：{choices[k]}", f"{tax_sentence(rng)}因此属于{choices[k]}。", json.dumps({"答案": choices[k]}, ensure_ascii=False)])
    if task == "TaxMCQ":
        letters = "".join(sorted(rng.sample("ABCDE", 2))) if _wrong(rng) else answer
        return think + rng.choice([letters, "、".join(letters), f"答案：{','.join(letters)}"])
    if task == "TaxCalc":
        value = answer * rng.choice([0.9, 1.1, 1.0 / 1.13]) if _wrong(rng) else answer
        return think + f"{tax_sentence(rng)}经计算，应纳增值税为{_fmt_amount(rng, value)}。"
    if task == "TaxRead":
        span = rng.choice(["3%", "5%", "10%"]) if _wrong(rng) else answer
        return think + rng.choice([span, f"答案：{span}", f"根据材料，税率为{span}。"])
    if task in ("TaxInspect", "TaxPlan", "TaxRisk"):
        fields = dict(answer)
        for key, value in fields.items():
            if isinstance(value, float) and _wrong(rng):
                fields[key] = round(value * 1.05, 2)
            elif isinstance(value, str) and len(value) > 20:
                fields[key] = value[: len(value) // 2] + paragraph(rng, 20, 80)
        return think + _fields_text(rng, fields)
    # generation: half of the gold's text plus some of the model's own
    half = answer[: len(answer) // 2] if rng.random() < 0.6 else ""
    return think + half + paragraph(rng, 60, 300)


def write_predictions(data: Path, path: Path, *, runs: int = 5, seed: int = 0, model: str = "synthetic") -> int:
    """Predictions for every record of ``data`` (as written by :func:`write_data`) and run.

    A later run repeats run 0's prediction for about half the items (as temperature-0 runs
    do) and writes a fresh one otherwise.
    """
    n = 0
    with open(path, "w", encoding="utf-8") as out:
        for task in SIZES:
            file = data / f"{task}.jsonl"
            if not file.exists():
                continue
            rng = random.Random(f"{seed}:{task}:predictions")
            recs = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
            first = [predict(task, rec, rng) for rec in recs]
            for run in range(runs):
                for rec, base in zip(recs, first, strict=True):
                    text = base if run == 0 or rng.random() < 0.5 else predict(task, rec, rng)
                    line = {"task": task, "id": rec["id"], "run": run, "prediction": text, "model": model}
                    out.write(json.dumps(line, ensure_ascii=False) + "\n")
                    n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="data directory to write")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scale", type=float, default=1.0, help="fraction of the real sizes (default 1)")
    p.add_argument("--predictions", type=Path, help="also write model-like predictions here")
    p.add_argument("--runs", type=int, default=5, help="runs of predictions (default 5)")
    args = p.parse_args(argv)
    counts = write_data(args.out, seed=args.seed, scale=args.scale)
    chars = sum(f.stat().st_size for f in args.out.glob("*.jsonl"))
    print(f"{sum(counts.values())} records in {len(counts)} datasets -> {args.out} ({chars / 2**20:.1f} MiB)")
    if args.predictions:
        n = write_predictions(args.out, args.predictions, runs=args.runs, seed=args.seed)
        print(f"{n} predictions ({args.runs} runs) -> {args.predictions}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

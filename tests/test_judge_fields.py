"""The judge on the answer-bearing fields of the mixed tasks (issue 21): which fields of an
item are asked, the prompt's JSON answer form, the reply merged by the task's own reader,
the score recomputed by the task's own metric, the audit, low confidence; against the mock."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from helpers.cli_data import write_data
from helpers.mock_openai_server import MockConfig, MockServerThread
from taxpraben.data.loader import load_data
from taxpraben.judge import NO_ANSWER, fill_prompt, load_prompt
from taxpraben.judge.field_judge import (
    JUDGE,
    asked_fields,
    field_disagreements,
    fields_form,
    fields_to_ask,
    merge_fields,
)
from taxpraben.judge.prompt import answer_form, parse_prompt
from taxpraben.judge.reading import (
    judged_task,
    low_confidence_outputs,
    read_outputs,
    read_reply,
    same_reading,
    unanswered_reader,
    unread_outputs,
)
from taxpraben.judge.stage import JudgeStage, capped_asks, records_by_id
from taxpraben.kinds.profiles import scoring_rules
from taxpraben.models.factory import create_backend
from taxpraben.records import Record
from taxpraben.report.markdown import render_markdown
from taxpraben.report.tables import judge_lines, judge_pairs
from taxpraben.report.view import view_of
from taxpraben.results import Results, Sample
from taxpraben.results.predictions import Prediction
from taxpraben.run.runner import RunnerSettings
from taxpraben.scoring import Hooks, ScoringSettings, score_predictions
from taxpraben.scoring.items import prepare_item
from taxpraben.scoring.semantic import SemanticScorers
from taxpraben.tasks import load_registry

REGISTRY = load_registry(())
RULES = scoring_rules("taxpraben")
INSPECT = REGISTRY["TaxInspect"]
EXACT = ["违法性质", "少缴税款", "滞纳金", "罚款"]

QUERY = ("请阅读以下税务稽查案例，判断违法行为的性质（从“偷税”“虚开发票”“未按规定申报”中选择一项），计算少缴税款、"
         "滞纳金和罚款，并说明分析理由。案例{n}。金额单位为元。\n请严格按照以下JSON格式输出：\n"
         '{{"违法性质": "", "少缴税款": 0.00, "滞纳金": 0.00, "罚款": 0.00, "分析理由": ""}}')  # fmt: skip


def inspect_row(id_: str, nature: str, tax: int, late: int, fine: int) -> dict[str, Any]:
    gold = {"违法性质": nature, "少缴税款": tax, "滞纳金": late, "罚款": fine, "分析理由": f"隐匿收入少缴税款{id_}"}
    return {"id": id_, "query": QUERY.format(n=id_), "answer": gold}


ROWS = [
    inspect_row("a", "偷税", 260000, 47450, 130000),
    inspect_row("b", "偷税", 100000, 5000, 50000),
    inspect_row("c", "虚开发票", 30000, 1500, 30000),
    inspect_row("d", "偷税", 80000, 4000, 40000),
    inspect_row("e", "未按规定申报", 20000, 1000, 10000),
]
GOLD = {row["id"]: row["answer"] for row in ROWS}


def as_json(fields: dict[str, Any]) -> str:
    return json.dumps(fields, ensure_ascii=False)


def quoted(answer: dict[str, Any] | None, quote: dict[str, Any] | None = None) -> str:
    """The judge's reply: the fields it reads and, for each, the passage of the output it quotes."""
    return as_json({"answer": answer, "quote": quote})


def json_quotes(values: dict[str, Any]) -> dict[str, str]:
    """Quotes of fields an output writes as JSON (as_json): each one's '"key": value'."""
    return {k: f'"{k}": {json.dumps(v, ensure_ascii=False)}' for k, v in values.items()}


#: a: every field read; b: 滞纳金 and 罚款 missing (a note after its JSON states them, which the
#: rules do not read as fields); c: prose, nothing read (a format failure); d: a generation
#: error; e: every field read (other values than a's).
OUTPUTS = {
    "a": as_json(GOLD["a"]),
    "b": as_json({k: GOLD["b"][k] for k in ("违法性质", "少缴税款", "分析理由")}) + "\n另：滞纳金5000元，罚款99999元。",
    "c": "该公司开具与实际经营不符的发票，构成虚开发票，少缴税款3万元，滞纳金1500元，并处罚款。",
    "d": "",
    "e": as_json(GOLD["e"]),
}


def predictions(runs: int = 2, outputs: dict[str, str] = OUTPUTS) -> list[Prediction]:
    return [Prediction("TaxInspect", i, r, text, error="timeout" if i == "d" else None)
            for r in range(runs) for i, text in outputs.items()]  # fmt: skip


@dataclass(frozen=True)
class _F1:
    f1: float


class ExactTextBert:
    """A stand-in for BERTScore: 1 for the gold's own text, 0.5 for any other (the tests
    check the merge and the score formula, not the semantic model)."""

    def score(self, candidates: list[str], references: list[str]) -> list[_F1]:
        return [_F1(1.0 if c == r else 0.5) for c, r in zip(candidates, references, strict=True)]

    def describe(self) -> dict[str, Any]:
        return {"model": "exact-text"}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_data(tmp_path / "data", {"TaxInspect": ROWS})


def judge_score(data: Path, url: str, log: Path, *, audit: int = 0, cache: Path | None = None, runs: int = 2,
                outputs: dict[str, str] = OUTPUTS, max_items: int | None = None,
                ) -> tuple[dict[str, Any], dict[tuple[str, int], dict[str, Any]], JudgeStage]:  # fmt: skip
    """Score ``outputs`` with a judge at ``url``; results, samples by (id, run), the stage."""
    loaded = load_data(str(data), REGISTRY, None, None)
    backend = create_backend("openai:mock", base_url=url)
    stage = JudgeStage(backend, load_prompt(), REGISTRY, audit=audit, cache_path=cache, max_items=max_items,
                       runner=RunnerSettings(max_retries=0, progress=False),
                       console=Console(file=log.open("a", encoding="utf-8"), width=400))  # fmt: skip
    scored = score_predictions(loaded, predictions(runs, outputs), REGISTRY, ScoringSettings(bootstrap=0),
                               hooks=Hooks(scorers=SemanticScorers(bert=ExactTextBert()), second_reader=stage))
    samples = {(s["id"], s["run"]): s for s in scored.samples}
    return scored.results, samples, stage


def answer_block(body: dict[str, Any]) -> str:
    """The answer form of the item a judge request asks about (after the worked examples)."""
    text = body["messages"][0]["content"]
    item = text[text.rindex("现在请处理") :]
    return item[item.index("答案形式：") : item.index("考生回答：")]


def body_for(bodies: list[dict[str, Any]], output: str) -> dict[str, Any]:
    return next(b for b in bodies if f"<<<\n{output}\n>>>\n输出：" in b["messages"][0]["content"])


# ---------------------------------------------------------------------------- hand-written items


def record(answer: dict[str, Any], query: str = "金额单位为元。") -> Record:
    return Record("TaxInspect", "h1", query, answer)


#: The output of the hand-written items (the quotes of their replies come from it).
HAND_OUTPUT = "经查属于偷税，少缴税款26万元，滞纳金47,450元，罚款13万元（一说罚款13元）。"


#: The gold and the record of the hand-written items.
HAND_GOLD = {"违法性质": "偷税", "少缴税款": 260000, "滞纳金": 47450, "罚款": 130000, "分析理由": "隐匿收入。"}
HAND_RECORD = record(HAND_GOLD)


def field_item(states: dict[str, tuple[str, str, Any]], status: str = "ok") -> Sample:
    """An item whose fields are written by hand: name -> (status, matched_by, pred)."""
    gold = HAND_GOLD
    fields = {}
    for name, (state, how, pred) in states.items():
        kind = "text" if name == "分析理由" else ("category" if name == "违法性质" else "number")
        fields[name] = {"kind": kind, "pred": pred, "gold": gold[name], "status": state, "matched_by": how,
                        "inferred": False, "score": None if kind == "text" else float(pred == gold[name])}  # fmt: skip
    extracted = {n: i["pred"] for n, i in fields.items() if i["pred"] is not None}
    blank = Sample.of("TaxInspect", "h1", 0, Prediction("TaxInspect", "h1", 0, HAND_OUTPUT), gold=HAND_RECORD.gold_label)
    return blank.evolve(status=status, extracted=extracted, fields=fields)  # a sample is frozen: a new one


PARTLY = {
    "违法性质": ("ok", "exact", "偷税"),
    "少缴税款": ("missing", "missing", None),
    "滞纳金": ("ok", "fuzzy", 47450),
    "罚款": ("ok", "synonym", 99),
    "分析理由": ("missing", "missing", None),
}
ALL_READ = {
    "违法性质": ("ok", "exact", "偷税"),
    "少缴税款": ("ok", "normalized", "26万元"),
    "滞纳金": ("ok", "exact", 47450),
    "罚款": ("ok", "synonym", 130000),
    "分析理由": ("ok", "exact", "隐匿收入。"),
}


def test_the_mixed_tasks_are_judged_and_the_aspects_of_taxrisk_never() -> None:
    assert judged_task(REGISTRY["TaxInspect"]) and judged_task(REGISTRY["TaxPlan"])
    assert judged_task(REGISTRY["TaxCalc"]) and judged_task(REGISTRY["TaxSCQ"])
    # TaxRisk's fields are aspects, all text (BERTScore): nothing to extract.
    assert not judged_task(REGISTRY["TaxRisk"]) and not judged_task(REGISTRY["TaxQA"])


def test_asked_fields_are_the_unread_and_low_confidence_exact_ones() -> None:
    partly = field_item(PARTLY)
    # 少缴税款 unread, 滞纳金 read by a fuzzy key; the rationale (text) is never asked.
    assert asked_fields(partly) == fields_to_ask(partly) == ["少缴税款", "滞纳金"]
    full = field_item(ALL_READ)
    assert asked_fields(full) == [] and fields_to_ask(full) == EXACT  # only the audit asks it: all fields
    fuzzy_only = field_item({**ALL_READ, "罚款": ("ok", "fuzzy", 130000)})
    assert asked_fields(fuzzy_only) == ["罚款"]
    error = field_item({n: ("missing", "missing", None) for n in ALL_READ}, status="error")
    assert asked_fields(error) == []
    items = [partly, full, fuzzy_only, error]
    keys = lambda outputs: [its[0] for its in outputs.values()]  # noqa: E731
    assert keys(unread_outputs(items)) == [partly]
    assert keys(low_confidence_outputs(items)) == [fuzzy_only]
    assert keys(read_outputs(items)) == [full]  # a low-confidence item is not an audit candidate


def test_an_item_read_whole_or_all_text_is_never_asked() -> None:
    rec = Record("TaxInspect", "w", "问", "一段没有字段的参考答案。")
    whole = prepare_item(INSPECT, rec, 0, "  ", profile=RULES)  # a blank answer to a gold without fields
    assert whole.status == "format_failure" and list(whole.fields or {}) == ["全文"]
    read = prepare_item(INSPECT, rec, 0, "我的回答。", profile=RULES)
    assert read.status == "ok" and unread_outputs([whole, read]) == {} and read_outputs([whole, read]) == {}


def test_the_reply_is_merged_field_by_field() -> None:
    partly = field_item(PARTLY)
    # Read by the task's own reader: 少缴税款 in 万元 compares by value; 罚款 was not asked.
    reply = prepare_item(INSPECT, HAND_RECORD, 0, '{"少缴税款": "26万元", "滞纳金": null, "罚款": 130000}', profile=RULES)
    merge = merge_fields(partly, reply, asked_fields(partly))
    assert (merge.adopted, merge.declined, merge.unreadable) == (("少缴税款",), ("滞纳金",), ())
    merged = merge.item
    assert merged is not None and merged.status == "ok"
    assert merged.fields is not None and partly.fields is not None
    assert (merged.fields["少缴税款"]["matched_by"], merged.fields["少缴税款"]["score"]) == (JUDGE, 1.0)
    # The fuzzy 滞纳金 the judge declined keeps the rules' reading; 罚款 (not asked) too.
    assert merged.fields["滞纳金"] == partly.fields["滞纳金"] and merged.fields["罚款"]["pred"] == 99
    assert merged.extracted == {"违法性质": "偷税", "少缴税款": "26万元", "滞纳金": 47450, "罚款": 99}
    assert partly.fields["少缴税款"]["status"] == "missing"  # the rules' item is not changed
    # A value where a number is due, an empty one or a missing key: not read, never adopted.
    bad = prepare_item(INSPECT, HAND_RECORD, 0, '{"少缴税款": "很多", "滞纳金": ""}', profile=RULES)
    merge = merge_fields(partly, bad, asked_fields(partly))
    assert (merge.item, merge.adopted, merge.unreadable) == (None, (), ("少缴税款", "滞纳金"))


def test_reply_outcomes_for_fields() -> None:
    partly = field_item(PARTLY)
    fenced = "```json\n" + quoted({"少缴税款": 260000.00, "滞纳金": "很多"}, {"少缴税款": "少缴税款26万元", "滞纳金": "很多"}) + "\n```"
    answered = read_reply(INSPECT, HAND_RECORD, partly, fenced, RULES)
    assert answered.outcome == "answer" and answered.unreadable == ("滞纳金",)
    assert answered.item is not None and answered.item.fields is not None
    assert answered.item.fields["少缴税款"]["matched_by"] == JUDGE
    assert answered.item.fields["滞纳金"]["matched_by"] == "fuzzy"  # unread in the reply: the rules' stays
    # The evidence: the quote's place in the raw output, for the item and for the field.
    start, end = answered.evidence or (0, 0)
    assert HAND_OUTPUT[start:end] == "少缴税款26万元" and answered.item.fields["少缴税款"]["evidence"] == [start, end]
    assert read_reply(INSPECT, HAND_RECORD, partly, quoted({"少缴税款": None, "滞纳金": None}, {"少缴税款": None, "滞纳金": None}),
                      RULES).outcome == "no_answer"  # fmt: skip
    assert read_reply(INSPECT, HAND_RECORD, partly, NO_ANSWER, RULES).outcome == "no_answer"
    broken = read_reply(INSPECT, HAND_RECORD, partly, quoted({"少缴税款": "很多", "滞纳金": ""}, {}), RULES)
    assert (broken.outcome, broken.unreadable) == ("malformed", ("少缴税款", "滞纳金"))
    assert read_reply(INSPECT, HAND_RECORD, partly, "我看不出金额。", RULES).outcome == "malformed"
    assert read_reply(INSPECT, HAND_RECORD, partly, '{"少缴税款": , "滞纳金": }', RULES).outcome == "malformed"  # no reply object
    # Each field's quote must be the output's: one not in it, or reading another value, is rejected.
    absent = read_reply(INSPECT, HAND_RECORD, partly, quoted({"少缴税款": 260000}, {"少缴税款": "少缴税款30万元"}), RULES)
    assert (absent.outcome, absent.rejected) == ("not_grounded", {"少缴税款": "quote not in output"})
    other = read_reply(INSPECT, HAND_RECORD, partly, quoted({"少缴税款": 260000, "滞纳金": 47450},
                                               {"少缴税款": "滞纳金47,450元", "滞纳金": "滞纳金47,450元"}), RULES)  # fmt: skip
    assert (other.outcome, other.rejected) == ("answer", {"少缴税款": "quote reads another value"})
    assert other.item is not None and other.item.fields is not None
    assert [other.item.fields[n]["matched_by"] for n in ("少缴税款", "滞纳金")] == ["missing", JUDGE]


def test_same_reading_of_fields_is_every_asked_field_by_value() -> None:
    full = field_item(ALL_READ)
    quotes = {"违法性质": "属于偷税", "少缴税款": "少缴税款26万元", "滞纳金": "滞纳金47,450元", "罚款": "罚款13万元"}
    same = read_reply(INSPECT, HAND_RECORD, full, quoted({"违法性质": "偷税", "少缴税款": 260000, "滞纳金": "47,450.00",
                                             "罚款": "13万元"}, quotes), RULES).item  # fmt: skip
    assert same_reading(full, same) and field_disagreements(full, same) == {}
    other = read_reply(INSPECT, HAND_RECORD, full, quoted({"违法性质": "偷税", "少缴税款": 260000, "滞纳金": 47450, "罚款": 13},
                                             {**quotes, "罚款": "罚款13元"}), RULES).item  # fmt: skip
    assert not same_reading(full, other)
    assert field_disagreements(full, other) == {"罚款": {"rule": 130000, "judge": 13}}
    # A field the judge leaves out is no agreement, even though the merged item keeps the rules' value.
    short = read_reply(INSPECT, HAND_RECORD, full, quoted({"违法性质": "偷税", "少缴税款": 260000, "滞纳金": 47450}, quotes),
                       RULES).item  # fmt: skip
    assert not same_reading(full, short) and field_disagreements(full, short) == {"罚款": {"rule": 130000, "judge": None}}


def test_who_read_an_item_the_judge_gave_nothing_for() -> None:
    assert unanswered_reader(field_item(PARTLY)) == "rule"  # the rules read some of its fields
    assert unanswered_reader(field_item({n: ("missing", "missing", None) for n in ALL_READ}, "format_failure")) == "none"


# ---------------------------------------------------------------------------- the prompt


def test_the_answer_form_asks_the_named_fields_in_their_form_never_the_gold() -> None:
    rec = Record("TaxInspect", "h1", "单位：万元。", {"违法性质": "偷税", "少缴税款": "17.14万元", "滞纳金": 4.75,
                                                 "税率": "9%", "分析理由": "隐匿收入。"})  # fmt: skip
    form = answer_form(INSPECT, rec)
    lines = form.split("\n")
    assert lines[0] == "一个JSON对象，只含下列4个键（键名照写，不加其他键）：" and lines[-1] == "考生回答没有给出的字段，值写 null。"
    assert lines[1].startswith('"违法性质"：一个类别词')
    # A gold written with 万元 compares by value in 元; a bare one in the unit the question asks.
    assert lines[2] == '"少缴税款"：一个数字（阿拉伯数字，以元为单位，不写单位，不用千分位）'
    assert lines[3] == '"滞纳金"：一个数字（阿拉伯数字，以万元为单位，不写单位，不用千分位）'
    assert lines[4].startswith('"税率"：一个百分数')  # a key no spec rule names, inferred a number
    assert "分析理由" not in form and not any(v in form for v in ("17.14", "4.75", "9%", "偷税"))
    assert fields_form(INSPECT, rec, ["滞纳金"]).count("\n") == 2


def test_the_builtin_prompt_is_zh3_with_a_fields_example_in_the_generated_form() -> None:
    prompt = load_prompt()
    assert prompt.version == "zh-3" and prompt.template.count("\n示例") == 5
    # Example five's answer form is what fields_form writes for such a record.
    rec = record({"违法性质": "偷税", "少缴税款": 1.0, "滞纳金": 1.0, "罚款": 1.0, "分析理由": "x"}, "金额单位为元。")
    assert "答案形式：" + fields_form(INSPECT, rec) + "\n考生回答：" in prompt.template
    assert ('输出：{"answer": {"违法性质": "偷税", "少缴税款": 130000, "滞纳金": 6500, "罚款": null}, "quote": '
            '{"违法性质": "属于偷税行为", "少缴税款": "应补缴增值税13万元", "滞纳金": "共计6,500元", "罚款": null}}') in prompt.template


def test_the_prompt_asks_what_this_output_lacks_and_a_file_template_still_works() -> None:
    own = parse_prompt("#version: mine\nQ={question}|F={answer_form}|A={output}")
    rec = Record("TaxInspect", "b", QUERY.format(n="b"), GOLD["b"])
    text = fill_prompt(own, INSPECT, rec, OUTPUTS["b"])
    form = text[text.index("|F=") + 3 : text.index("|A=")]
    assert '"滞纳金"' in form and '"罚款"' in form and '"违法性质"' not in form and '"少缴税款"' not in form
    assert fill_prompt(own, INSPECT, rec, OUTPUTS["b"], fields=["违法性质"]).count('"违法性质"：') == 1


# ---------------------------------------------------------------------------- against the mock

#: The judge's replies: for b only 滞纳金 (gold 5000) and 罚款 (gold 50000) are asked, read from its
#: note; for c all four (gold 虚开发票, 30000, 1500, 30000): its 滞纳金 5000 quotes c's 1500 and its
#: 罚款 a passage with no amount, so those two are not grounded (c keeps them unread).
REPLY_B = quoted({"滞纳金": 5000, "罚款": 99999}, {"滞纳金": "滞纳金5000元", "罚款": "罚款99999元"})
REPLY_C = quoted({"违法性质": "虚开发票", "少缴税款": 30000, "滞纳金": 5000, "罚款": 99999},
                 {"违法性质": "构成虚开发票", "少缴税款": "少缴税款3万元", "滞纳金": "滞纳金1500元", "罚款": "并处罚款"})


def judge_b_c(body: dict[str, Any]) -> str:
    return REPLY_C if asked_output(body) == OUTPUTS["c"] else REPLY_B


def test_only_unread_fields_are_asked_adopted_and_scored_by_the_tasks_metric(data: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig(reply_of=judge_b_c)) as judge:
        results, samples, _ = judge_score(data, judge.base_url, tmp_path / "log.txt", cache=tmp_path / "c.sqlite")
        # b and c, each once for both runs; a and e were read whole, d is a generation error.
        assert judge.stats.requests == 2
        bodies = list(judge.stats.bodies)
        # A rerun (same judge, same cache): every reply from the cache, the same readings.
        again, again_samples, stage = judge_score(data, judge.base_url, tmp_path / "log.txt", cache=tmp_path / "c.sqlite")
        assert judge.stats.requests == 2 and (stage.from_cache, stage.sent) == (2, 0)
    form_b = answer_block(body_for(bodies, OUTPUTS["b"]))
    assert ('"滞纳金"：' in form_b, '"罚款"：' in form_b, '"违法性质"：' in form_b, '"少缴税款"：' in form_b) == (
        True, True, False, False)  # fmt: skip
    form_c = answer_block(body_for(bodies, OUTPUTS["c"]))
    assert all(f'"{name}"：' in form_c for name in EXACT) and '"分析理由"' not in form_c
    assert not any(str(GOLD["b"][k]) in form_b for k in ("滞纳金", "罚款"))  # the gold is never shown

    for run in (0, 1):
        b = samples[("b", run)]
        fields = b["fields"]
        assert b["extracted_by"] == "judge" and b["judge_reply"] == REPLY_B
        # Asked and adopted: 滞纳金 right (5000), 罚款 wrong (99999), each with its quote's place.
        assert [fields[n]["matched_by"] for n in EXACT] == ["exact", "exact", JUDGE, JUDGE]
        start, end = fields["滞纳金"]["evidence"]
        assert OUTPUTS["b"][start:end] == "滞纳金5000元" and "judge_rejected" not in b
        assert [fields[n]["score"] for n in EXACT] == [1.0, 1.0, 1.0, 0.0]
        assert fields["违法性质"]["pred"] == "偷税"
        # (EM 3/4 + BERTScore 1 of the gold's own rationale) / 2
        assert b["scores"]["em"] == pytest.approx(0.75) and b["score"] == pytest.approx((0.75 + 1.0) / 2)
        c = samples[("c", run)]
        assert (c["status"], c["extracted_by"]) == ("ok", "judge")
        assert [c["fields"][n]["score"] for n in EXACT] == [1.0, 1.0, 0.0, 0.0]
        assert [c["fields"][n]["matched_by"] for n in EXACT] == [JUDGE, JUDGE, "missing", "missing"]
        assert c["judge_rejected"] == "滞纳金: quote reads another value; 罚款: quote reads another value"
        assert c["fields"]["分析理由"]["status"] == "missing"  # the rationale is never asked
        assert c["score"] == pytest.approx((0.5 + 0.0) / 2)
        assert samples[("a", run)]["extracted_by"] == "rule" and samples[("a", run)]["score"] == pytest.approx(1.0)
        assert samples[("d", run)]["extracted_by"] == "none" and samples[("d", run)]["score"] == 0.0
    task = results["tasks"]["TaxInspect"]
    entry = task["judge"]
    assert (entry["asked"], entry["read_by_judge"], entry["read_by_rule"], entry["unread"]) == (2, 4, 4, 0)
    assert (entry["not_grounded"], entry["not_grounded_whys"]) == (1, {"quote reads another value": 1})
    assert (entry["format_failure_rate_before"], entry["format_failure_rate_after"]) == (0.2, 0.0)
    # a 1, b 0.875, c 0.25, d 0 (an error), e 1 in each run
    assert task["score"]["mean"] == pytest.approx((1.0 + 0.875 + 0.25 + 0.0 + 1.0) / 5)
    assert results["meta"]["judge"]["prompt_version"] == "zh-3"
    assert again_samples[("b", 1)]["fields"] == samples[("b", 1)]["fields"]
    assert again["tasks"]["TaxInspect"]["judge"] == entry


@pytest.mark.parametrize("reply", ["这个回答里我看不出各项金额。", '{"滞纳金": , "罚款": }'], ids=["prose", "broken-json"])
def test_a_malformed_reply_warns_and_the_fields_stay_format_failures(data: Path, tmp_path: Path, reply: str) -> None:
    with MockServerThread(MockConfig(fixed_reply=reply)) as judge:
        results, samples, _ = judge_score(data, judge.base_url, tmp_path / "log.txt")
        assert judge.stats.requests == 2
    entry = results["tasks"]["TaxInspect"]["judge"]
    assert (entry["asked"], entry["malformed"], entry["read_by_judge"]) == (2, 2, 0)
    assert any("TaxInspect: the judge's reply to 2 output(s) could not be read" in w for w in results["meta"]["warnings"])
    assert "could not be read by the task's reader" in (tmp_path / "log.txt").read_text(encoding="utf-8")
    b, c = samples[("b", 0)], samples[("c", 0)]
    assert [b["fields"][n]["status"] for n in EXACT] == ["ok", "ok", "missing", "missing"]
    assert b["scores"]["em"] == pytest.approx(0.5)
    assert (c["status"], c["extracted_by"], c["score"]) == ("format_failure", "none", 0.0)
    per_field = results["tasks"]["TaxInspect"]["fields"]
    # 滞纳金: missing in b, c and d (an error) of the 5 records: a format-failure rate of 3/5
    assert per_field["滞纳金"]["format_failure_rate"]["mean"] == pytest.approx(3 / 5)
    assert per_field["违法性质"]["format_failure_rate"]["mean"] == pytest.approx(2 / 5)


def test_the_no_answer_reply_leaves_the_fields_unread(data: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig(fixed_reply=NO_ANSWER)) as judge:
        results, samples, _ = judge_score(data, judge.base_url, tmp_path / "log.txt", runs=1)
        assert judge.stats.requests == 2
    entry = results["tasks"]["TaxInspect"]["judge"]
    assert (entry["no_answer"], entry["malformed"], entry["read_by_judge"]) == (2, 0, 0)
    assert [samples[("b", 0)]["fields"][n]["matched_by"] for n in EXACT] == ["exact", "exact", "missing", "missing"]
    assert samples[("c", 0)]["status"] == "format_failure" and samples[("c", 0)]["extracted_by"] == "none"
    assert not any("could not be read" in w for w in results["meta"]["warnings"])


#: e with a reviewer's note after its JSON that states a's values (the rules read e's JSON).
E_NOTED = OUTPUTS["e"] + "\n（复核意见：应定性为偷税，少缴税款260000元，滞纳金47450元，罚款130000元）"
A_VALUES = {k: GOLD["a"][k] for k in EXACT}
#: a's own values, quoted from a's JSON; from e's note for e.
A_QUOTES = {"a": json_quotes(A_VALUES), "e": {"违法性质": "应定性为偷税", "少缴税款": "少缴税款260000元",
                                              "滞纳金": "滞纳金47450元", "罚款": "罚款130000元"}}


def judge_a_values(body: dict[str, Any]) -> str:
    """The judge reads a's values everywhere, quoting a's JSON or e's note (b and c: unread, quoted nowhere)."""
    output = asked_output(body)
    which = "a" if output == OUTPUTS["a"] else "e" if output == E_NOTED else None
    return quoted(A_VALUES, A_QUOTES[which] if which else {})


def test_the_audit_asks_every_field_of_outputs_the_rules_read(data: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig(reply_of=judge_a_values)) as judge:
        results, samples, _ = judge_score(data, judge.base_url, tmp_path / "log.txt", audit=5,
                                          outputs={**OUTPUTS, "e": E_NOTED})  # fmt: skip
        # b and c (unread) + the audit's candidates: a and e (read whole), nothing else.
        assert judge.stats.requests == 4
        bodies = list(judge.stats.bodies)
    assert all(f'"{name}"：' in answer_block(body_for(bodies, OUTPUTS["a"])) for name in EXACT)
    audit = results["tasks"]["TaxInspect"]["judge"]["audit"]
    assert (audit["audited"], audit["agreed"], audit["not_grounded"]) == (2, 1, 0)
    (wrong,) = audit["disagreements"]
    assert wrong["id"] == "e"
    # Per field, the rules' reading and the judge's.
    assert {n: (wrong["rule"][n], wrong["judge"][n]) for n in EXACT} == {n: (GOLD["e"][n], GOLD["a"][n]) for n in EXACT}
    a, e = samples[("a", 0)], samples[("e", 1)]
    assert (a["judge_agrees"], e["judge_agrees"]) == (True, False)
    assert e["extracted_by"] == "rule" and e["score"] == pytest.approx(1.0)  # the audit never changes a score
    assert e["fields"]["罚款"]["matched_by"] == "exact"


# ---------------------------------------------------------------------------- low confidence

#: f: every field read, but 滞纳金 only by a fuzzy key: "滞纳金天数" (the days, 100) aligned to
#: 滞纳金 (gold 5000, which the rationale states); g: the same fallback on a key that holds
#: the right value ("滞纳金额": 4000).
LOW_ROWS = [*ROWS, inspect_row("f", "偷税", 100000, 5000, 50000)]
G_ROW = inspect_row("g", "偷税", 80000, 4000, 40000)
F_OUTPUT = as_json({"违法性质": "偷税", "少缴税款": 100000, "滞纳金天数": 100, "罚款": 50000,
                    "分析理由": "隐匿收入少缴税款，按日加收万分之五滞纳金5000元"})  # fmt: skip
G_OUTPUT = as_json({"违法性质": "偷税", "少缴税款": 80000, "滞纳金额": 4000, "罚款": 40000, "分析理由": "隐匿收入少缴税款g"})
LOW_OUTPUTS = {**OUTPUTS, "f": F_OUTPUT}


@pytest.fixture
def low_data(tmp_path: Path) -> Path:
    return write_data(tmp_path / "low-data", {"TaxInspect": LOW_ROWS})


def asked_output(body: dict[str, Any]) -> str:
    """The model output a judge request asks about (the last <<< >>> block: the examples come first)."""
    text = body["messages"][0]["content"]
    return text[text.rindex("<<<\n") + 4 : text.rindex("\n>>>")]


def low_record(key: str) -> Record:
    row = next(r for r in [*LOW_ROWS, G_ROW] if r["id"] == key)
    return Record("TaxInspect", key, row["query"], row["answer"])


def low_item(key: str) -> Sample:
    output = {"f": F_OUTPUT, "g": G_OUTPUT}.get(key) or OUTPUTS[key]
    return prepare_item(INSPECT, low_record(key), 0, output, profile=RULES)


#: The records of the low-confidence items, by id (what the judge's stage looks them up in).
LOW_RECORDS = {key: low_record(key) for key in ("a", "b", "c", "e", "f", "g")}


def test_the_fuzzy_example_is_read_with_low_confidence_only() -> None:
    f, g = low_item("f"), low_item("g")
    assert f.fields is not None and g.fields is not None
    assert [f.fields[n]["matched_by"] for n in EXACT] == ["exact", "exact", "fuzzy", "exact"]
    assert (f.fields["滞纳金"]["pred"], f.fields["滞纳金"]["score"]) == (100, 0.0)
    assert (g.fields["滞纳金"]["matched_by"], g.fields["滞纳金"]["pred"]) == ("fuzzy", 4000)
    assert asked_fields(f) == asked_fields(g) == ["滞纳金"]
    assert list(low_confidence_outputs([f, g])) == [("TaxInspect", "f", F_OUTPUT), ("TaxInspect", "g", G_OUTPUT)]


def low_judge(body: dict[str, Any]) -> str:
    """The judge's replies: f's 滞纳金 read from its rationale; c read but for 罚款; b as REPLY."""
    output = asked_output(body)
    if output == F_OUTPUT:
        return F_REPLY
    if output == OUTPUTS["c"]:
        return quoted({"违法性质": "虚开发票", "少缴税款": 30000, "滞纳金": 1500},
                      {"违法性质": "构成虚开发票", "少缴税款": "少缴税款3万元", "滞纳金": "滞纳金1500元"})
    return REPLY_B


F_REPLY = quoted({"滞纳金": 5000}, {"滞纳金": "滞纳金5000元"})


def test_a_low_confidence_item_is_asked_apart_and_its_field_replaced_where_the_judge_reads_it(
    low_data: Path, tmp_path: Path
) -> None:
    with MockServerThread(MockConfig(reply_of=low_judge)) as judge:
        results, samples, stage = judge_score(low_data, judge.base_url, tmp_path / "log.txt", outputs=LOW_OUTPUTS)
        # b and c (unread) and f (low confidence), each once for both runs.
        assert judge.stats.requests == 3 and stage.requests == 3
        bodies = list(judge.stats.bodies)
    form_f = answer_block(body_for(bodies, F_OUTPUT))
    assert ['"滞纳金"：' in form_f] + [f'"{n}"：' in form_f for n in ("违法性质", "少缴税款", "罚款")] == [
        True, False, False, False]  # fmt: skip
    for run in (0, 1):
        f = samples[("f", run)]
        assert (f["extracted_by"], f["judge_reply"]) == ("judge", F_REPLY)
        assert [f["fields"][n]["matched_by"] for n in EXACT] == ["exact", "exact", JUDGE, "exact"]
        assert (f["fields"]["滞纳金"]["pred"], f["fields"]["滞纳金"]["score"]) == (5000, 1.0)
        # EM 4/4 (the rules' reading: 3/4); the rationale is not the gold's own text: BERTScore 0.5
        assert f["scores"]["em"] == pytest.approx(1.0) and f["score"] == pytest.approx((1.0 + 0.5) / 2)
        c = samples[("c", run)]  # read but for 罚款 (its key left out): the rules' missing 罚款 stays
        assert [c["fields"][n]["matched_by"] for n in EXACT] == [JUDGE, JUDGE, JUDGE, "missing"]
        assert c["score"] == pytest.approx((0.75 + 0.0) / 2)
    entry = results["tasks"]["TaxInspect"]["judge"]
    assert (entry["asked"], entry["low_confidence"], entry["no_answer"], entry["malformed"]) == (2, 1, 0, 0)
    assert (entry["read_by_judge"], entry["read_by_rule"], entry["unread"]) == (6, 4, 0)  # b, c, f | a, e
    assert any("TaxInspect: the judge's reply to 1 output(s) did not read every field it was asked for "
               "(first: id c: 罚款)" in w for w in results["meta"]["warnings"])  # fmt: skip
    # a 1, b 0.875, c 0.375, d 0 (an error), e 1, f 0.75
    mean = (1.0 + 0.875 + 0.375 + 0.0 + 1.0 + 0.75) / 6
    assert results["tasks"]["TaxInspect"]["score"]["mean"] == pytest.approx(mean)
    lines = judge_lines(view_of(Results.model_validate(results)))
    # Format failures: c in both runs before the judge (d is an error), none after.
    assert lines[0] == ("Judge openai:mock (prompt zh-3): decided the reading of 6 items (format failures: 2 before "
                        "it, 0 after); 3 requests (0 from the cache).")  # fmt: skip
    assert lines[1] == ("Low confidence: 1 output(s) the rules read only by a fallback (a field matched by a fuzzy key) "
                        "were asked as well, the judge's reading kept where it read a value (TaxInspect 1).")  # fmt: skip
    assert "- Low confidence: 1 output(s)" in render_markdown(Results.model_validate(results))
    # The HTML configuration table labels each line by what it is about.
    assert [label for label, _ in judge_pairs(view_of(Results.model_validate(results)))] == [
        "Judge", "Judge low confidence"]  # fmt: skip


@pytest.mark.parametrize("reply", [NO_ANSWER, "这个回答里我看不出各项金额。"], ids=["no-answer", "prose"])
def test_a_reply_without_a_value_leaves_the_rules_reading(low_data: Path, tmp_path: Path, reply: str) -> None:
    with MockServerThread(MockConfig(fixed_reply=reply)) as judge:
        results, samples, _ = judge_score(low_data, judge.base_url, tmp_path / "log.txt", outputs=LOW_OUTPUTS)
        assert judge.stats.requests == 3
    for run in (0, 1):
        f = samples[("f", run)]
        assert (f["status"], f["extracted_by"], f["judge_reply"]) == ("ok", "rule", reply)
        assert (f["fields"]["滞纳金"]["matched_by"], f["fields"]["滞纳金"]["pred"]) == ("fuzzy", 100)
        assert f["scores"]["em"] == pytest.approx(0.75)
        # b, read by the rules but for two fields, stays theirs; c, read not at all, nobody's
        assert samples[("b", run)]["extracted_by"] == "rule" and samples[("c", run)]["extracted_by"] == "none"
    entry = results["tasks"]["TaxInspect"]["judge"]
    outcome = "no_answer" if reply == NO_ANSWER else "malformed"
    assert (entry["asked"], entry[outcome], entry["low_confidence"], entry["read_by_judge"]) == (2, 2, 1, 0)
    assert (entry["read_by_rule"], entry["unread"]) == (8, 2)  # a, b, e, f | c
    low_warning = [w for w in results["meta"]["warnings"] if "low-confidence output(s) could not be read" in w]
    assert len(low_warning) == (0 if reply == NO_ANSWER else 1)


def test_the_cap_keeps_unread_then_low_confidence_then_audit() -> None:
    """The per-task asks, and what a cap keeps of them over two tasks, in that order."""
    stage = JudgeStage(create_backend("openai:judge", base_url="http://127.0.0.1:9/v1"), load_prompt(), REGISTRY,
                       audit=10)  # fmt: skip
    inspect = [low_item(k) for k in ("a", "b", "c", "e", "f", "g")]
    calc_spec = REGISTRY["TaxCalc"]
    calc_records = [Record("TaxCalc", str(k), f"第{k}题：应纳税额是多少元？", "130") for k in range(3)]
    calc = [prepare_item(calc_spec, rec, 0, text, profile=RULES)
            for rec, text in zip(calc_records, ["应纳税额130元。", "这道题我不会。", "答案：130"], strict=True)]  # fmt: skip
    ids = lambda asks: [ask.key[1] for ask in asks]  # noqa: E731
    asks = stage.task_asks("TaxInspect", inspect, LOW_RECORDS)
    # Every candidate drawn (audit 10 > 2), yet neither low-confidence output is audited.
    assert (ids(asks.unread), ids(asks.low), ids(asks.audit)) == (["b", "c"], ["f", "g"], ["a", "e"])
    assert all(ask.low_confidence and not ask.audit for ask in asks.low)
    per_task = [stage.task_asks("TaxCalc", calc, records_by_id(calc_records)), asks]
    assert [ids(part) for part in per_task[0]] == [["1"], [], ["0", "2"]]
    everything = ["1", "b", "c", "f", "g", "0", "2", "a", "e"]  # unread of both, low, then the audits
    cases = [(None, []), (9, []), (6, []), (5, []), (4, ["g"]), (2, ["c", "f", "g"]), (0, ["1", "b", "c", "f", "g"])]
    for cap, left_out in cases:
        kept, capped = capped_asks(per_task, cap)
        assert (ids(kept), ids(capped)) == (everything[: 9 if cap is None else cap], left_out), cap


def test_a_capped_low_confidence_output_keeps_the_rules_reading_with_a_line(low_data: Path, tmp_path: Path) -> None:
    with MockServerThread(MockConfig(reply_of=low_judge)) as judge:
        results, samples, _ = judge_score(low_data, judge.base_url, tmp_path / "log.txt", outputs=LOW_OUTPUTS,
                                          max_items=2)  # fmt: skip
        assert judge.stats.requests == 2  # b and c; f not
        assert F_OUTPUT not in [asked_output(body) for body in judge.stats.bodies]
    entry = results["tasks"]["TaxInspect"]["judge"]
    assert (entry["asked"], entry["low_confidence"], entry["capped"]) == (2, 0, 0)
    f = samples[("f", 0)]
    assert (f["extracted_by"], f["fields"]["滞纳金"]["matched_by"]) == ("rule", "fuzzy") and "judge_reply" not in f
    assert "--judge-max-items 2: 1 low-confidence output(s) were not sent to the judge and keep the rules' reading" in (
        results["meta"]["warnings"])
    assert not any(line.startswith("Low confidence") for line in judge_lines(view_of(Results.model_validate(results))))


def test_the_prompt_under_the_default_profile_is_the_outputs_own() -> None:
    """The stage asks the fields of its own reading; under the default profile that is the
    prompt of (record, output) alone, so the cache keys of earlier scorings still match."""
    stage = JudgeStage(create_backend("openai:judge", base_url="http://127.0.0.1:9/v1"), load_prompt(), REGISTRY,
                       audit=10)  # fmt: skip
    asks = stage.task_asks("TaxInspect", [low_item(k) for k in ("a", "b", "c", "e", "f", "g")], LOW_RECORDS)
    for ask in asks.unread + asks.low + asks.audit:
        first = ask.items[0]
        own = fill_prompt(load_prompt(), INSPECT, LOW_RECORDS[first.id], first.text)
        assert stage.request_of(ask).messages[0]["content"] == own, ask.key
    # Under --profile taxben a copy of the prompt is read as its template's values (违法性质 "" unread,
    # the amounts 0.00): the stage asks for 违法性质 alone, what its reading lacks, where the
    # output's own prompt (this project's rules: nothing read) asks for all four.
    taxben = JudgeStage(stage.backend, load_prompt(), REGISTRY, profile="taxben")
    row = ROWS[1]
    rec = Record("TaxInspect", row["id"], row["query"], row["answer"])
    copy_item = prepare_item(INSPECT, rec, 0, row["query"], profile=scoring_rules("taxben"))
    (ask,) = taxben.task_asks("TaxInspect", [copy_item], records_by_id([rec])).unread
    form = answer_block({"messages": taxben.request_of(ask).messages})
    assert [f'"{n}"：' in form for n in EXACT] == [True, False, False, False]
    default_form = answer_block({"messages": [{"content": fill_prompt(load_prompt(), INSPECT, rec, row["query"])}]})
    assert all(f'"{n}"：' in default_form for n in EXACT)


def test_an_audit_disagreement_names_the_asked_fields_only(data: Path, tmp_path: Path) -> None:
    # a's note states a fine of 1 (its JSON 130000): the judge reads that, a grounded disagreement on 罚款;
    # e differs on every field, quoting e's note.
    noted = OUTPUTS["a"] + "\n（复核意见：罚款应为1元）"

    def judge(body: dict[str, Any]) -> str:
        output = asked_output(body)
        if output == noted:
            return quoted({**A_VALUES, "罚款": 1}, {**A_QUOTES["a"], "罚款": "罚款应为1元"})
        return quoted(A_VALUES, A_QUOTES["e"] if output == E_NOTED else {})

    with MockServerThread(MockConfig(reply_of=judge)) as server:
        results, _, _ = judge_score(data, server.base_url, tmp_path / "log.txt", audit=5,
                                    outputs={**OUTPUTS, "a": noted, "e": E_NOTED})  # fmt: skip
    disagreements = {d["id"]: d for d in results["tasks"]["TaxInspect"]["judge"]["audit"]["disagreements"]}
    a = disagreements["a"]
    assert list(a["rule"]) == list(a["judge"]) == EXACT  # no rationale
    assert a["fields"] == {"罚款": {"rule": GOLD["a"]["罚款"], "judge": 1}}
    assert set(disagreements["e"]["fields"]) == set(EXACT)
    assert disagreements["e"]["fields"]["违法性质"] == {"rule": "未按规定申报", "judge": "偷税"}

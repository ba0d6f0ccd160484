"""A review figure says what it covers and a verdict belongs to the reading it judged
(issue 45, items 3 and 4, and the review parts of item 9).

- a verdict records what it judged; after a rescore a verdict whose reading changed is stale:
  left out of every figure, counted and listed, offered again on the page; `score` into the
  directory keeps the review block and says how many verdicts still apply;
- the draw is of distinct outputs, interleaved across tasks and strata; results.json and
  report.md say what was drawn, reviewed and not yet, and which tasks no verdict reached;
- the stratified estimate and its interval against a hand computation; a clean review of the
  default size raises no banner; the corrected score's interval is never narrower for a
  review stopped early;
- review.jsonl's torn last line, a directory without samples.jsonl, an answer in 万元.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.review_fixtures import copy_of, first_choice_run
from taxpraben.cli import app
from taxpraben.jobs.review import build_session
from taxpraben.report.load import iter_samples, read_results
from taxpraben.report.review import (
    DEFAULT_DRAW,
    REVIEW_TRUST_BOUND,
    attach_review,
    review_block,
    review_cell,
)
from taxpraben.review.answers import same_answer
from taxpraben.review.draw import STRATA, all_readings, distinct, draw
from taxpraben.review.estimate import Size, Unit, stratified, wilson
from taxpraben.review.store import (
    REVIEW_FILE,
    ReviewFileError,
    Verdict,
    append_verdict,
    read_verdicts,
)

Z = 1.959963984540054


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return first_choice_run(tmp_path_factory.mktemp("coverage") / "fc")


@pytest.fixture
def out(base_run: Path, tmp_path: Path) -> Path:
    return copy_of(base_run, tmp_path / "out")


def _rewrite_samples(out: Path, change) -> None:
    path = out / "samples.jsonl"
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(change(x), ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")


def _review_all(out: Path, n: int, verdict: str = "right", stop_after: int | None = None, seed: int = 0) -> list:
    session = build_session(out, n, seed, "ann")
    for index in range(len(session.readings) if stop_after is None else stop_after):
        session.record(index, verdict, None)
    return session.readings


# ---------------------------------------------------------------------------- item 3: stale verdicts


def test_a_verdict_records_what_it_judged(out: Path) -> None:
    readings = _review_all(out, 6, stop_after=1)
    line = json.loads((out / REVIEW_FILE).read_text(encoding="utf-8").splitlines()[0])
    first = readings[0]
    assert line["judged"]["read"] == first.read and line["judged"]["read_by"] == first.read_by
    import hashlib

    assert line["judged"]["output"] == hashlib.sha256(first.prediction.encode("utf-8")).hexdigest()
    assert line["draw"] == {"seed": 0, "size": 6}


def test_a_changed_readings_old_verdict_is_stale_left_out_and_offered_again(out: Path) -> None:
    readings = _review_all(out, 20)
    scq = next(r for r in readings if r.task == "TaxSCQ")
    drawn_scq = sum(r.task == "TaxSCQ" for r in readings)
    before = review_block(out, read_results(out))
    assert (before.stale, before.overall.reviewed, before.tasks["TaxSCQ"].reviewed) == (0, 20, drawn_scq)
    assert drawn_scq >= 2

    def rescored(x: dict) -> dict:  # the output of one reviewed item changed: another answer is read
        if (x["task"], x["id"], x["run"]) == (scq.task, scq.id, scq.run):
            x.update(prediction="B", extracted="另一个选项", evidence=[0, 1])
        return x

    _rewrite_samples(out, rescored)
    after = review_block(out, read_results(out))
    assert after.stale == 1 and after.applying == 19
    assert after.stale_readings == [{"task": "TaxSCQ", "id": scq.id, "run": 0, "field": None, "reviewer": "ann"}]
    assert after.overall.reviewed == 19 and after.tasks["TaxSCQ"].reviewed == drawn_scq - 1  # left out everywhere
    assert after.not_yet == 1 and after.partial
    session = build_session(out, 20, 0, "ann")  # the page offers it again
    assert session.stale == 1 and session.graded == 19
    assert session.readings[session.next_open()].key == scq.key
    state = session.state()
    assert state["stale"] == 1 and state["verdicts"][session.next_open()] is None


def test_report_says_how_many_verdicts_are_stale(out: Path) -> None:
    readings = _review_all(out, 10)
    scq = next(r for r in readings if r.task == "TaxSCQ")
    _rewrite_samples(out, lambda x: {**x, "prediction": "C"} if (x["task"], x["id"]) == ("TaxSCQ", scq.id) else x)
    result = CliRunner().invoke(app, ["report", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "1 verdict(s) are stale: their readings changed since they were given" in md
    assert "Human review (ann): 9 of 9 readings agree" in result.output


def test_a_line_without_what_it_judged_is_legacy_and_counted_so(out: Path) -> None:
    append_verdict(out / REVIEW_FILE, Verdict("TaxSCQ", "3", 0, "ann", "right"))
    block = review_block(out, read_results(out))
    assert block.legacy == 1 and block.stale == 0 and block.overall.reviewed == 1 and block.draw is None
    result = CliRunner().invoke(app, ["report", str(out)], env={"COLUMNS": "200"})
    assert "1 verdict(s) do not record what they judged" in result.output
    assert "Draw: not recorded" in (out / "report.md").read_text(encoding="utf-8")


def test_score_into_a_reviewed_directory_keeps_the_review_and_says_how_many_still_apply(out: Path) -> None:
    readings = _review_all(out, 10)
    scq = next(r for r in readings if r.task == "TaxSCQ")
    predictions = out / "predictions.jsonl"
    lines = [json.loads(x) for x in predictions.read_text(encoding="utf-8").splitlines()]
    for p in lines:
        if (p["task"], p["id"]) == ("TaxSCQ", scq.id):
            p["prediction"] = "D"  # another output: the verdict on it no longer applies
    predictions.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in lines), encoding="utf-8")
    scored = CliRunner().invoke(app, ["score", "--data", "sample", "--predictions", str(predictions), "--out",
                                      str(out), "--no-semantic", "--tasks", "TaxSCQ,TaxCalc,TaxMCQ,TaxRead,TaxInspect"],
                                env={"COLUMNS": "300"})
    assert scored.exit_code == 0, scored.output
    text = " ".join(scored.output.split())
    assert "9 of 10 verdict(s) still apply to the new readings" in text and "1 are stale" in text
    raw = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert raw["review"]["stale"] == 1 and raw["review"]["overall"]["reviewed"] == 9
    assert "Human review" in (out / "report.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------- item 4: the draw and its figure


def test_the_draw_interleaves_tasks_and_strata(out: Path) -> None:
    types = {name: task.type for name, task in read_results(out).tasks.items()}
    readings = all_readings(iter_samples(out), types)
    strata = {(r.task, r.stratum) for r in readings}
    drawn = draw(readings, 30, seed=3)
    head = drawn[: len(strata)]
    assert {(r.task, r.stratum) for r in head} == strata  # stopped after one round: every task and stratum seen
    tasks = sorted({r.task for r in readings})
    assert sorted({r.task for r in drawn[: len(tasks)]}) == tasks  # the first readings are of every task


def test_a_reading_shared_by_runs_is_one_draw_weighted_by_its_runs(out: Path) -> None:
    # A second run with the same outputs: every reading is one distinct reading of two runs.
    path = out / "samples.jsonl"
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in [*lines, *({**x, "run": 1}
                    for x in lines)]), encoding="utf-8")  # fmt: skip
    types = {name: task.type for name, task in read_results(out).tasks.items()}
    readings = all_readings(iter_samples(out), types)
    unique = distinct(readings)
    assert len(unique) * 2 == len(readings) and all(r.runs == (0, 1) for r in unique)
    drawn = draw(readings, 200, seed=0)
    assert len(drawn) == len(unique)  # each once
    # TaxSCQ 1 (read 有形动产租赁服务, gold 信息技术服务): wrong, the gold; it withholds a point in each run.
    append_verdict(out / REVIEW_FILE, Verdict("TaxSCQ", "1", 0, "ann", "wrong", "信息技术服务"))
    block = review_block(out, read_results(out))
    assert block.tasks["TaxSCQ"].withheld == 2.0 and block.tasks["TaxSCQ"].reviewed == 1
    assert block.overall.readings == len(readings)


def test_the_stratified_estimate_and_interval_match_a_hand_computation() -> None:
    # Stratum A: 80 readings in 80 outputs, 4 reviewed (1, 1, 1, 0); stratum B: 20 in 20, 4 reviewed (1, 0, 0, 1).
    units = [Unit("A", 1, v) for v in (1, 1, 1, 0)] + [Unit("B", 1, v) for v in (1, 0, 0, 1)]
    est = stratified(units, {"A": Size(80, 80), "B": Size(20, 20)})
    # W = 0.8, 0.2; means 0.75, 0.5 -> 0.8 * 0.75 + 0.2 * 0.5 = 0.7 (the plain share of 8 would be 5/8).
    assert est.mean == pytest.approx(0.7)
    # var_A = (1 - 4/80) * s2 / 4, s2 = (3 * 0.25^2 + 0.75^2) / 3 = 0.25 -> 0.059375
    # var_B = (1 - 4/20) * s2 / 4, s2 = 4 * 0.5^2 / 3 = 1/3 -> 0.0666667
    # var = 0.64 * 0.059375 + 0.04 * 0.0666667 = 0.0406667
    assert est.variance == pytest.approx(0.64 * 0.059375 + 0.04 * (0.8 / 12), rel=1e-9)
    # Kish: weights 0.2 (A) and 0.05 (B): 1 / (4 * 0.04 + 4 * 0.0025) = 5.882; p(1-p)/var = 0.21/0.0406667 = 5.164.
    n_eff = 0.21 / (0.64 * 0.059375 + 0.04 * (0.8 / 12))
    assert est.n_eff == pytest.approx(n_eff) and est.n == 8 and est.covered == 1.0
    centre = (0.7 + Z * Z / (2 * n_eff)) / (1 + Z * Z / n_eff)
    half = Z * math.sqrt(0.21 / n_eff + Z * Z / (4 * n_eff * n_eff)) / (1 + Z * Z / n_eff)
    assert est.ci95 == pytest.approx((centre - half, centre + half))
    assert est.ci95 == pytest.approx((0.3035, 0.9259), abs=1e-4)  # [30.3, 92.6]


def test_an_output_of_several_runs_weighs_as_its_runs_and_uncovered_strata_are_said() -> None:
    # One stratum: an output of 3 runs agreed, one of 1 run did not: 3/4. Stratum C has no verdict.
    est = stratified([Unit("A", 3, 1.0), Unit("A", 1, 0.0)], {"A": Size(40, 20), "C": Size(10, 10)})
    assert est.mean == pytest.approx(0.75) and est.covered == pytest.approx(0.8)
    # Kish: weights 3/4 and 1/4 -> 1 / (9/16 + 1/16) = 1.6 readings' worth.
    assert est.n_eff <= 1.6 + 1e-9


def test_a_simple_random_draw_has_the_textbook_wilson_interval() -> None:
    est = stratified([Unit("A", 1, 1.0)] * 10, {"A": Size(1000, 1000)})
    assert est.ci95 == pytest.approx((10 / (10 + Z * Z), 1.0))
    assert wilson(1.0, 60)[0] == pytest.approx(60 / (60 + Z * Z)) and wilson(1.0, 60)[0] > REVIEW_TRUST_BOUND


def test_a_clean_review_of_the_default_size_raises_no_banner(out: Path) -> None:
    assert DEFAULT_DRAW == 60
    readings = _review_all(out, DEFAULT_DRAW)
    assert len(readings) == DEFAULT_DRAW
    block = review_block(out, read_results(out))
    assert block.overall.agreed == block.overall.reviewed == DEFAULT_DRAW
    assert block.banner is None and block.overall.ci95[0] >= REVIEW_TRUST_BOUND
    assert not block.partial and block.not_yet == 0 and block.unreviewed_tasks == []
    assert block.draw.drawn == DEFAULT_DRAW and block.draw.seeds == [0] and block.draw.size == DEFAULT_DRAW


def test_a_review_stopped_half_way_says_so_in_results_json_and_report_md(out: Path) -> None:
    readings = _review_all(out, 20, stop_after=3)  # three readings, three tasks; two tasks never reached
    assert attach_review(out)
    raw = json.loads((out / "results.json").read_text(encoding="utf-8"))["review"]
    reached = {r.task for r in readings[:3]}
    missing = sorted({r.task for r in readings} - reached)
    assert raw["partial"] is True and raw["not_yet"] == 17 and raw["overall"]["reviewed"] == 3
    assert raw["draw"]["drawn"] == 20 and raw["draw"]["seeds"] == [0] and "stratified" in raw["draw"]["method"]
    assert sorted(raw["unreviewed_tasks"]) == missing and raw["overall"]["covered"] < 1
    CliRunner().invoke(app, ["report", str(out)], env={"COLUMNS": "200"})
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "Draw: 20 readings drawn (--n 20, seed 0; stratified by task" in md and "3 reviewed, 17 not yet" in md
    assert "The review is partial" in md and all(name in md.split("Tasks not reviewed")[1] for name in missing)
    assert review_cell(read_results(out)).endswith(", partial")


def test_the_corrected_interval_is_never_narrower_for_a_review_stopped_early(base_run: Path, tmp_path: Path) -> None:
    early, done = copy_of(base_run, tmp_path / "early"), copy_of(base_run, tmp_path / "done")
    _review_all(early, 40, stop_after=4)  # 4 readings, of 4 tasks
    _review_all(done, 40)

    def width(out: Path) -> float:
        low, high = review_block(out, read_results(out)).corrected_overall[1:]
        return high - low

    assert width(early) > width(done)
    block = review_block(early, read_results(early))
    estimate, low, high = block.corrected_overall
    assert low <= estimate <= high


# ---------------------------------------------------------------------------- item 9: smaller


def test_a_torn_last_line_is_cut_at_the_start_and_verdicts_after_it_read_back(out: Path) -> None:
    path = out / REVIEW_FILE
    append_verdict(path, Verdict("TaxSCQ", "1", 0, "ann", "right"))
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"task": "TaxSCQ", "id": "2", "ru')
    session = build_session(out, 6, 0, "ann")
    assert session.repaired == '{"task": "TaxSCQ", "id": "2", "ru'
    assert path.read_text(encoding="utf-8").endswith("\n")
    session.record(0, "right", None)
    assert len(read_verdicts(path)) == 2  # the file stays readable: the review can be stopped and reported
    assert attach_review(out)


def test_a_torn_line_inside_the_file_is_refused_with_the_repair(out: Path) -> None:
    (out / REVIEW_FILE).write_text('{"task": "TaxSCQ", "id": "2", "ru\n' + json.dumps(
        {"task": "TaxSCQ", "id": "1", "run": 0, "reviewer": "ann", "verdict": "right"}) + "\n", encoding="utf-8")
    with pytest.raises(ReviewFileError, match=r"review.jsonl:1: not JSON .*delete line 1"):
        read_verdicts(out / REVIEW_FILE)
    result = CliRunner().invoke(app, ["review", str(out), "--no-browser"], env={"COLUMNS": "300"})
    assert result.exit_code == 2 and "delete line 1" in " ".join(result.output.split())


def test_review_without_samples_exits_2_naming_the_file(out: Path) -> None:
    (out / "samples.jsonl").unlink()
    result = CliRunner().invoke(app, ["review", str(out), "--no-browser"], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert f"{out / 'samples.jsonl'}: not found" in " ".join(result.output.split())


@pytest.mark.parametrize(("a", "b", "same"), [
    ("3.62万元", 36200.0, True), ("3.62万元", "36200", True), ("三万六千二百", 36200, True),
    ("3.62万元", 36201.0, False), ("60%", "60", False), ("１２００", 1200, True),
])
def test_an_answer_is_read_with_the_projects_number_rules(a, b, same: bool) -> None:
    assert same_answer(a, b) is same


def test_an_answer_in_wan_yuan_earns_the_gold_point(out: Path) -> None:
    session = build_session(out, 60, 0, "ann")
    calc = next(i for i, r in enumerate(session.readings) if r.task == "TaxCalc")
    gold = float(session.readings[calc].gold)
    typed = f"{gold / 10000:g}万元"
    session.record(calc, "wrong", typed)
    block = review_block(out, read_results(out))
    assert block.tasks["TaxCalc"].withheld == 1.0  # the reviewer's answer is the gold: a point withheld


def test_a_run_with_no_review_shows_not_reviewed_beside_one_with(out: Path, base_run: Path, tmp_path: Path) -> None:
    _review_all(out, 10, stop_after=2)
    board = tmp_path / "board"
    result = CliRunner().invoke(app, ["report", str(out), str(base_run), "--out", str(board), "--allow-partial"],
                                env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    md = (board / "leaderboard.md").read_text(encoding="utf-8")
    rows = [row for row in md.splitlines() if re.match(r"^\| \d \| baseline:first-choice", row)]
    assert len(rows) == 2 and sum("| not reviewed |" in row for row in rows) == 1
    html = (board / "leaderboard.html").read_text(encoding="utf-8")
    assert '<td class="review">not reviewed</td>' in html


def test_strata_are_named_in_the_order_the_page_offers_them() -> None:
    assert STRATA == ("high", "low", "judge", "none")

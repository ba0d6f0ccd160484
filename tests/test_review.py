"""`taxpraben review`: the draw, review.jsonl, the answers, the session, the server, and the
human figure (Wilson interval, points given and withheld, corrected score) in every report.

The browser test of the page is tests/test_review_browser.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.review_fixtures import copy_of, first_choice_run, serving
from taxpraben.cli import app
from taxpraben.jobs.review import build_session
from taxpraben.report.load import iter_samples, read_results
from taxpraben.report.review import consensus, review_block
from taxpraben.review.answers import same_answer
from taxpraben.review.draw import all_readings, allocate, draw, stratum
from taxpraben.review.server import page
from taxpraben.review.store import (
    REVIEW_FILE,
    ReviewFileError,
    Verdict,
    append_verdict,
    latest,
    read_verdicts,
)

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return first_choice_run(tmp_path_factory.mktemp("review") / "fc")


@pytest.fixture
def out(base_run: Path, tmp_path: Path) -> Path:
    return copy_of(base_run, tmp_path / "out")


def write_review(out: Path, lines: list[dict]) -> None:
    (out / REVIEW_FILE).write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
                                   encoding="utf-8")


def line(task: str, id_: str, verdict: str, answer: str | None = None, reviewer: str = "ann", **extra) -> dict:
    return {"task": task, "id": id_, "run": 0, "reviewer": reviewer, "verdict": verdict, "answer": answer,
            "at": "2026-12-04T10:00:00Z", **extra}


# ---------------------------------------------------------------------------- the draw


def test_stratum_says_how_a_reading_was_made() -> None:
    assert stratum("rule:choice.bare-answer", "high", True) == "high"
    assert stratum("rule:span.whole-output", "low", True) == "low"
    assert stratum("judge:openai:gpt", None, True) == "judge"
    assert stratum(None, None, False) == "none"


def test_allocate_gives_every_stratum_one_then_shares_by_size() -> None:
    assert allocate({"a": 90, "b": 9, "c": 1}, 10) == {"a": 8, "b": 1, "c": 1}
    assert allocate({"a": 90, "b": 9, "c": 1}, 2) == {"a": 1, "b": 1, "c": 0}
    assert allocate({"a": 3, "b": 2}, 50) == {"a": 3, "b": 2}  # never more than a stratum holds
    assert sum(allocate({"a": 7, "b": 7, "c": 7}, 11).values()) == 11


def test_the_draw_is_seeded_stratified_and_leaves_generation_and_errors_out(out: Path) -> None:
    types = {name: task.type for name, task in read_results(out).tasks.items()}
    readings = all_readings(iter_samples(out), types)
    assert {r.task for r in readings} == {"TaxSCQ", "TaxCalc", "TaxMCQ", "TaxRead", "TaxInspect"}
    inspect = [r for r in readings if r.task == "TaxInspect"]
    assert inspect and all(r.field in ("违法性质", "少缴税款", "滞纳金", "罚款") for r in inspect)  # not 分析理由 (text)
    first, again, other = draw(readings, 12, seed=1), draw(readings, 12, seed=1), draw(readings, 12, seed=2)
    assert [r.key for r in first] == [r.key for r in again] and len(first) == 12
    assert [r.key for r in first] != [r.key for r in other]
    strata = {(r.task, r.stratum) for r in readings}
    assert {(r.task, r.stratum) for r in first} == strata  # every (task, how read) is seen
    assert all_readings(iter_samples(out), {**types, "TaxSCQ": "generation"}) != readings


# ---------------------------------------------------------------------------- review.jsonl


def test_verdicts_append_read_back_and_the_last_one_wins(tmp_path: Path) -> None:
    path = tmp_path / REVIEW_FILE
    append_verdict(path, Verdict("TaxSCQ", "1", 0, "ann", "wrong", "B", "t1"))
    append_verdict(path, Verdict("TaxSCQ", "1", 0, "ann", "right", None, "t2"))
    append_verdict(path, Verdict("TaxSCQ", "1", 0, "bob", "wrong", None, "t3"))
    append_verdict(path, Verdict("TaxInspect", "2", 0, "ann", "unsure", None, "t4", field="罚款"))
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert lines[0] == {"task": "TaxSCQ", "id": "1", "run": 0, "reviewer": "ann", "verdict": "wrong",
                        "answer": "B", "at": "t1"}
    assert lines[3]["field"] == "罚款"
    kept = latest(read_verdicts(path))
    assert kept[(("TaxSCQ", "1", 0, None), "ann")].verdict == "right"
    assert kept[(("TaxSCQ", "1", 0, None), "bob")].verdict == "wrong"


def test_a_line_cut_by_a_kill_is_left_out_and_the_next_starts_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / REVIEW_FILE
    append_verdict(path, Verdict("TaxSCQ", "1", 0, "ann", "right"))
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"task": "TaxSCQ", "id": "2", "ru')
    assert [v.id for v in read_verdicts(path)] == ["1"]
    append_verdict(path, Verdict("TaxSCQ", "3", 0, "ann", "right"))
    with pytest.raises(ReviewFileError, match=r"review.jsonl:2: not JSON"):  # no longer the last line
        read_verdicts(path)


@pytest.mark.parametrize(("raw", "message"), [
    ({"task": "T", "id": "1", "run": 0, "reviewer": "a"}, "key 'verdict' is missing"),
    ({"task": "T", "id": "1", "run": 0, "reviewer": "a", "verdict": "maybe"}, "verdict 'maybe' is not one of"),
    ({"task": "T", "id": "1", "run": -1, "reviewer": "a", "verdict": "right"}, "run -1 is not a run index"),
    ({"task": "T", "id": "1", "run": 0, "reviewer": "a", "verdict": "right", "answer": "B"}, "answer 'B' is given with verdict 'right' \\(only with 'wrong'\\)"),
])
def test_a_bad_verdict_names_the_file_line_and_key(tmp_path: Path, raw: dict, message: str) -> None:
    path = tmp_path / REVIEW_FILE
    path.write_text(json.dumps(raw) + "\n", encoding="utf-8")
    with pytest.raises(ReviewFileError, match=f"review.jsonl:1: {message}"):
        read_verdicts(path)


# ---------------------------------------------------------------------------- answers


@pytest.mark.parametrize(("a", "b", "same"), [
    ("104000", "104000.00", True), ("104,000元", 104000.0, True), ("104000", "104000.01", False),
    ("CA", "AC", True), ("acd", "ACD", True), ("AB", "ABC", False),
    ("信息技术服务", " 信息技术服务 ", True), ("1％", "1%", True), ("偷税", "虚开发票", False),
    (None, None, True), (None, "A", False),
])
def test_same_answer(a, b, same: bool) -> None:
    assert same_answer(a, b) is same


def test_consensus_majority_tie_is_wrong_and_a_wrong_that_is_the_reading_is_right() -> None:
    right, wrong_b = Verdict("T", "1", 0, "ann", "right"), Verdict("T", "1", 0, "bob", "wrong", "B")
    assert consensus([right, wrong_b], "A", False) == ("wrong", "B")
    assert consensus([right, right, wrong_b], "A", False) == ("right", None)
    assert consensus([Verdict("T", "1", 0, "ann", "wrong", "A")], "A", False) == ("right", None)
    assert consensus([Verdict("T", "1", 0, "ann", "wrong", None)], None, True) == ("right", None)
    assert consensus([Verdict("T", "1", 0, "ann", "unsure")], "A", False) == ("unsure", None)


# ---------------------------------------------------------------------------- the figure


def test_the_figure_against_hand_computed_wilson_bounds_and_correction(out: Path) -> None:
    # TaxSCQ (first-choice): 14 items, ids 3, 7 and 13 score 1 (score 3/14). The reviewer reads
    # ids 1 and 2 as their golds (the readings withheld 2 points) and agrees with the other 12.
    lines = [line("TaxSCQ", "1", "wrong", "信息技术服务"), line("TaxSCQ", "2", "wrong", "60000元")]
    lines += [line("TaxSCQ", str(i), "right") for i in range(3, 15)]
    lines += [line("TaxSCQ", "4", "wrong", "万分之五"), line("TaxSCQ", "4", "right")]  # the last line wins
    lines += [line("TaxMCQ", "1", "unsure")]
    write_review(out, lines)
    results = read_results(out)
    block = review_block(out, results)
    scq = block.tasks["TaxSCQ"]
    assert (scq.reviewed, scq.agreed, scq.given, scq.withheld, scq.unsure) == (14, 12, 0.0, 2.0, 0)
    # Wilson, z = 1.959964: 12 of 14 -> [0.6006, 0.9599] (1 - the bounds of 2 of 14, below).
    assert scq.ci95 == pytest.approx([0.600588, 0.959904], abs=1e-5)
    # Corrected: 3/14 + 2/14 = 5/14; low = 3/14 + W(2,14).low - W(0,14).high
    # = 0.214286 + 0.040096 - 3.841459/17.841459 (0.215309) = 0.039073; high = 0.214286 + 0.399412.
    assert scq.corrected == pytest.approx([5 / 14, 0.039073, 0.613698], abs=1e-5)
    assert block.tasks["TaxMCQ"].reviewed == 0 and block.tasks["TaxMCQ"].unsure == 1
    assert block.overall.reviewed == 14 and block.overall.unsure == 1
    scores = [results.tasks[t].score.mean for t in results.overall.tasks]
    expected = (sum(scores) + 2 / 14) / len(scores)
    assert block.corrected_overall[0] == pytest.approx(expected, abs=1e-6)
    assert [d["id"] for d in block.disagreements] == ["1", "2"]
    assert block.disagreements[0] == {"task": "TaxSCQ", "id": "1", "run": 0, "field": None,
                                      "read": "有形动产租赁服务", "answer": "信息技术服务", "gold": "信息技术服务"}
    # 1 - 12/14 agree: the lower bound 60.1% is below 95%: a banner.
    assert block.banner and "12 of 14" in block.banner


def test_perfect_agreement_on_ten_has_the_textbook_bounds_and_no_banner_only_when_high(out: Path) -> None:
    write_review(out, [line("TaxSCQ", str(i), "right") for i in range(1, 11)])
    block = review_block(out, read_results(out))
    assert block.overall.ci95 == pytest.approx([0.722467, 1.0], abs=1e-5)  # 10 of 10: 10 / (10 + z^2)
    assert block.banner is not None  # 72.2% < 95%: ten agreeing readings do not yet make the reading trusted


def test_two_reviewers_and_a_field_of_a_mixed_task(out: Path) -> None:
    write_review(out, [line("TaxSCQ", "3", "right"), line("TaxSCQ", "3", "right", reviewer="bob"),
                       line("TaxSCQ", "5", "right"), line("TaxSCQ", "5", "wrong", "60%", reviewer="bob"),
                       line("TaxInspect", "1", "wrong", None, field="罚款")])
    block = review_block(out, read_results(out))
    assert block.reviewers == ["ann", "bob"]
    assert block.inter_reviewer == {"items": 2, "agreed": 1}
    # TaxSCQ 5: a tie counts as wrong, with bob's answer (the gold: a withheld point).
    assert block.tasks["TaxSCQ"].withheld == 1.0 and block.tasks["TaxSCQ"].agreed == 1
    # TaxInspect 1 read nothing (a copy of the prompt): "no answer" agrees with it.
    assert block.tasks["TaxInspect"].agreed == 1 and block.tasks["TaxInspect"].corrected is None


def test_a_review_of_an_item_the_run_does_not_hold_is_named(out: Path) -> None:
    write_review(out, [line("TaxSCQ", "999", "right")])
    with pytest.raises(ReviewFileError, match="reviews TaxSCQ id 999 run 0"):
        review_block(out, read_results(out))


def test_report_shows_the_figure_everywhere(out: Path) -> None:
    lines = [line("TaxSCQ", "1", "wrong", "信息技术服务<script>window.__x=1</script>")]
    lines += [line("TaxSCQ", str(i), "right") for i in range(2, 15)]
    write_review(out, lines)
    result = CliRunner().invoke(app, ["report", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Human review (ann): 13 of 14 readings agree, 92.9% [68.5, 98.7] (95% Wilson interval)" in result.output
    assert "Corrected Overall Average" in result.output
    assert "  TaxSCQ: 13 of 14 readings agree" in result.output
    raw = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert raw["review"]["overall"]["agreed"] == 13 and raw["review"]["tasks"]["TaxSCQ"]["reviewed"] == 14
    assert list(raw)[:3] == ["schema_version", "meta", "tasks"]  # the rest of the file as it was
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "- Human review: 13 of 14 readings agree, 92.9% [68.5, 98.7]" in md
    assert "## Human review" in md and "| TaxSCQ | 14 | 13 | 92.9% [68.5, 98.7] |" in md
    assert "> **Warning:** Human review: 13 of 14" in md  # 68.5% < 95%
    assert "<script>" not in md
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="review-figure"' in html and 'value="review_wrong"' in html and 'id="review-banner"' in html
    assert "<script>window.__x" not in html


def test_report_with_a_bad_review_file_names_it(out: Path) -> None:
    (out / REVIEW_FILE).write_text('{"task": "TaxSCQ"}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["report", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "review.jsonl:1: key 'id' is missing" in result.output


def test_leaderboard_and_diff_show_the_review_beside_the_overall(out: Path, base_run: Path, tmp_path: Path) -> None:
    write_review(out, [line("TaxSCQ", str(i), "right") for i in range(1, 11)])
    board = tmp_path / "board"
    result = CliRunner().invoke(app, ["report", str(out), str(base_run), "--out", str(board), "--allow-partial"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    md = (board / "leaderboard.md").read_text(encoding="utf-8")
    assert "| Overall Average | Human review |" in md and "10/10 agree [72.2, 100.0]" in md
    assert "Human review" in (board / "leaderboard.html").read_text(encoding="utf-8")
    assert not (out / "results.json").read_text(encoding="utf-8").count('"review"')  # inputs untouched
    diff = CliRunner().invoke(app, ["diff", str(base_run), str(out), "--out", str(tmp_path / "d")],
                              env={"COLUMNS": "250"})
    assert diff.exit_code == 0, diff.output
    assert "| A | not reviewed |" in diff.output and "| B | 10/10 agree [72.2, 100.0], partial |" in diff.output


# ---------------------------------------------------------------------------- the session and server


def test_the_session_records_verdicts_as_meant_and_hides_the_gold_until_then(out: Path) -> None:
    session = build_session(out, 30, 0, "ann")
    scq = next(i for i, r in enumerate(session.readings) if r.task == "TaxSCQ")
    shown = session.reading(scq)
    assert "gold" not in shown and [key for key, _ in shown["options"]][:4] == ["A", "B", "C", "D"]
    reading = session.readings[scq]
    assert session.record(scq, "wrong", "b")["answer"] == dict(shown["options"])["B"]
    assert "gold" in session.reading(scq)
    assert session.record(scq, "wrong", "A")["verdict"] == "right"  # option A is what was read
    none = next(i for i, r in enumerate(session.readings) if r.read is None)
    assert session.record(none, "wrong", None)["verdict"] == "right"  # no answer, as read
    mcq = next(i for i, r in enumerate(session.readings) if r.task == "TaxMCQ")
    assert session.record(mcq, "wrong", "c, a")["answer"] == "AC"
    kept = latest(read_verdicts(out / REVIEW_FILE))
    assert kept[(reading.key, "ann")].verdict == "right"
    again = build_session(out, 30, 0, "ann")  # started again: continues where it stopped
    assert again.graded == 3 and again.next_open() not in (scq, none, mcq)
    assert build_session(out, 30, 0, "bob").graded == 0  # another reviewer keeps their own lines


def _get(url: str, host: str | None = None) -> tuple[int, dict, dict]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read().decode("utf-8")
            return response.status, dict(response.headers), json.loads(body) if body.startswith("{") else {}
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read().decode("utf-8"))


def _post(url: str, payload: dict, content_type: str = "application/json") -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"),
                                     headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read().decode("utf-8"))


def test_the_server_answers_only_its_own_address_and_json_verdicts(out: Path) -> None:
    session = build_session(out, 5, 0, "ann")
    with serving(session) as url:
        assert url.startswith("http://127.0.0.1:")
        status, headers, _ = _get(url)
        csp = headers["Content-Security-Policy"]
        assert status == 200 and "script-src 'sha256-" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
        assert _get(url + "api/state", host="evil.example:80")[0] == 403
        assert _post(url + "api/verdict", {"index": 0, "verdict": "right"}, "text/plain")[0] == 415
        assert _post(url + "api/verdict", {"index": 99, "verdict": "right"})[0] == 400
        assert _post(url + "api/verdict", {"index": 0, "verdict": "maybe"})[0] == 400
        status, reply = _post(url + "api/verdict", {"index": 0, "verdict": "right"})
        assert status == 200 and reply["graded"] == 1 and reply["next"] == 1 and "gold" in reply
        assert _get(url + "api/state")[2]["graded"] == 1
    assert len(read_verdicts(out / REVIEW_FILE)) == 1


def test_the_page_escapes_the_label() -> None:
    text = page("<script>window.__x=1</script>{{script}}")
    assert "<script>window.__x" not in text and "&lt;script&gt;" in text and text.count("<script>") == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(out: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", "COLUMNS": "200"}
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    process = subprocess.Popen([sys.executable, "-m", "taxpraben", "review", str(out), "--n", "6", "--port", str(port),
                                "--reviewer", "ann"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)
    assert process.stdout is not None
    for _ in range(200):
        text = process.stdout.readline()
        if f"http://127.0.0.1:{port}/" in text:
            return process
        assert process.poll() is None, text
    raise AssertionError("the review server printed no URL")


def test_a_review_survives_a_kill_of_the_server(out: Path) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    process = _start(out, port)
    try:
        for index in (0, 1):
            assert _post(url + "api/verdict", {"index": index, "verdict": "right"})[0] == 200
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    process = _start(out, port)
    try:
        state = _get(url + "api/state")[2]
        assert state["graded"] == 2 and state["next"] == 2
        assert [v and v["verdict"] for v in state["verdicts"]][:3] == ["right", "right", None]
        _post(url + "api/verdict", {"index": 2, "verdict": "unsure"})
    finally:
        process.send_signal(signal.SIGTERM)  # stops as Ctrl-C does: the reports are written
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert "Human review (ann): 2 of 2 readings agree" in output
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["review"]["overall"]["unsure"] == 1
    assert [v.verdict for v in read_verdicts(out / REVIEW_FILE)] == ["right", "right", "unsure"]


def test_a_field_value_is_found_after_its_name() -> None:
    from taxpraben.review.draw import field_span

    text = '{"少缴税款": 310000.0, "滞纳金": 31000.0, "罚款": 31000}'
    start = text.index("31000.0")
    assert field_span(text, "滞纳金", 31000.0) == (start, start + len("31000.0"))
    assert field_span(text, "罚款", 31000.0) == (text.rindex("31000"), text.rindex("31000") + 5)
    assert field_span(text, "违法性质", "偷税") is None


def test_judge_and_person_side_by_side(out: Path, base_run: Path, tmp_path: Path) -> None:
    samples = out / "samples.jsonl"
    lines = [json.loads(x) for x in samples.read_text(encoding="utf-8").splitlines()]
    for sample in lines:  # the judge audited TaxSCQ 1 and 2, reading them otherwise than the rules
        if sample["task"] == "TaxSCQ" and sample["id"] in ("1", "2"):
            sample.update(judge_extracted="信息技术服务", judge_agrees=False)
    samples.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    write_review(out, [line("TaxSCQ", "1", "wrong", "信息技术服务"), line("TaxSCQ", "2", "right")])
    block = review_block(out, read_results(out))
    assert block.judge_and_person == {"items": 2, "agreed": 1}
    assert block.disagreements[0]["judge"] == "信息技术服务"
    diff = CliRunner().invoke(app, ["diff", str(base_run), str(out), "--out", str(tmp_path / "d")],
                              env={"COLUMNS": "250"})
    assert diff.exit_code == 0, diff.output
    assert "| B | 1/2 agree" in diff.output and "B TaxSCQ 1 run 0: rules '有形动产租赁服务', judge '信息技术服务'" in diff.output


def test_review_command_errors_speak_to_the_user(tmp_path: Path, out: Path) -> None:
    missing = CliRunner().invoke(app, ["review", str(tmp_path / "nowhere")], env={"COLUMNS": "200"})
    assert missing.exit_code == 2 and "results.json: not found" in missing.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = CliRunner().invoke(app, ["review", str(out), "--port", str(port)], env={"COLUMNS": "200"})
    assert busy.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in busy.output


def test_a_browser_opens_only_where_there_is_a_display(monkeypatch: pytest.MonkeyPatch) -> None:
    from taxpraben.commands.review import has_display

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert has_display() is False
    monkeypatch.setenv("DISPLAY", ":0")
    assert has_display() is True


def test_the_page_says_right_means_the_reading_whatever_the_gold() -> None:
    text = page("run")
    assert "Right means <strong>taxpraben read what the output answers</strong>, whatever the gold" in text

"""report.html in a real browser: headless Chromium driven by Playwright (sync API).

Needs the ``playwright`` Python package and Debian's ``chromium`` (Playwright's own browser
download is not used). Skipped, with the reason, when either is missing; CI installs both.
Set TAXPRABEN_CHROMIUM to use another Chromium binary.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.report_fixtures import XSS_GOLD, XSS_IMG, XSS_SCRIPT, build_result_dir
from taxpraben.report import write_leaderboard, write_reports
from taxpraben.report.html import render_html
from taxpraben.report.load import load_results, load_samples

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)
CHROMIUM = (
    os.environ.get("TAXPRABEN_CHROMIUM")
    or shutil.which("chromium")
    or shutil.which("chromium-browser")
)
if not CHROMIUM:
    pytest.skip("no chromium binary (apt-get install chromium)", allow_module_level=True)

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as playwright:
        try:
            context = playwright.chromium.launch_persistent_context(
                str(profile),
                executable_path=CHROMIUM,
                headless=True,
                args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 900},
            )
        except Exception as exc:  # a broken browser install is an environment problem
            pytest.skip(f"chromium did not start: {exc}")
        yield context
        context.close()


class Page:
    """A page with its console errors and uncaught exceptions recorded."""

    def __init__(self, context, url: str) -> None:
        self.errors: list[str] = []
        self.page = context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.goto(url)

    def ready(self) -> Page:
        self.page.wait_for_selector("body[data-ready]", timeout=15_000)
        return self

    def cards(self) -> list[dict]:
        return self.page.eval_on_selector_all(
            "#sample-list .card",
            "cards => cards.map(c => ({task: c.dataset.task, id: c.dataset.id,"
            " statuses: Array.from(c.querySelectorAll('.run')).map(r => r.dataset.status),"
            " text: c.textContent}))",
        )

    def search(self, text: str) -> None:
        self.page.fill("#f-search", text)
        self.page.dispatch_event("#f-search", "search")


@pytest.fixture(scope="module")
def report_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = build_result_dir(tmp_path_factory.mktemp("browser") / "out", not_computed=("TaxRisk",))
    return write_reports(out)[1].as_uri()


def test_loads_without_errors_and_nothing_injected_runs(browser_context, report_url: str):
    page = Page(browser_context, report_url).ready()
    assert page.page.evaluate("typeof window.__xss") == "undefined"
    assert page.page.text_content("#p-count").startswith("140 of 140 items (700 samples)")
    assert (
        page.page.eval_on_selector_all("#sample-list script, #sample-list img", "n => n.length")
        == 0
    )
    assert page.page.locator("svg").count() >= 4
    page.page.wait_for_timeout(100)
    assert page.errors == []
    page.page.close()


def test_hostile_text_is_shown_as_text(browser_context, report_url: str):
    page = Page(browser_context, report_url).ready()
    page.search("window.__xss=1")
    page.page.wait_for_function("document.querySelectorAll('#sample-list .card').length === 1")
    cards = page.cards()
    assert [c["task"] for c in cards] == ["TaxQA"]
    predictions = page.page.eval_on_selector_all(
        ".card .prediction", "ps => ps.map(p => p.textContent)"
    )
    assert any(XSS_SCRIPT in p for p in predictions)  # the literal text, not markup
    assert any(XSS_IMG in p for p in predictions)
    page.search("__xss=3")
    page.page.wait_for_function(
        "document.querySelector('#sample-list .card[data-task=TaxRead]') !== null"
    )
    assert XSS_GOLD in page.cards()[0]["text"]
    assert page.page.evaluate("typeof window.__xss") == "undefined"
    assert page.errors == []
    page.page.close()


def test_filters(browser_context, report_url: str):
    page = Page(browser_context, report_url).ready()
    p = page.page
    p.select_option("#f-task", "TaxCalc")
    cards = page.cards()
    assert len(cards) == 10 and {c["task"] for c in cards} == {"TaxCalc"}
    assert p.text_content("#p-count").startswith("10 of 140 items")

    p.select_option("#f-task", "")
    p.select_option("#f-status", "format_failure")
    cards = page.cards()
    assert cards and all("format_failure" in c["statuses"] for c in cards)

    p.select_option("#f-status", "")
    p.fill("#f-min", "0.9")
    p.dispatch_event("#f-min", "change")
    means = p.eval_on_selector_all(
        ".card .head span:nth-child(2)",
        "s => s.map(x => parseFloat(x.textContent.split(' ').pop()))",
    )
    assert means and all(m >= 0.9 for m in means)

    p.click("#f-reset")
    assert p.text_content("#p-count").startswith("140 of 140")
    page.search("税额计算不存在的文本")
    p.wait_for_selector("#sample-list .empty")

    p.click("#f-reset")
    first_page = [c["id"] for c in page.cards()]
    p.click("#p-next")
    assert p.text_content("#p-info") == "page 2 of 6"
    assert [c["id"] for c in page.cards()] != first_page

    p.click("a.task-link[data-task=TaxMCQ]")
    assert p.input_value("#f-task") == "TaxMCQ"
    assert {c["task"] for c in page.cards()} == {"TaxMCQ"}
    assert page.errors == []
    p.close()


def test_format_failures_say_why_beside_the_status(browser_context, tmp_path: Path):
    out = build_result_dir(tmp_path / "out", items_per_task=20, runs=2, hostile=False)
    path = out / "samples.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    failed = [line for line in lines if line["status"] == "format_failure"]
    assert failed
    for line in failed:
        line["failure"] = "hedges between options"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    page = Page(browser_context, write_reports(out)[1].as_uri()).ready()
    p = page.page
    p.select_option("#f-status", "format_failure")
    heads = p.eval_on_selector_all(
        ".run[data-status=format_failure] .rh",
        "hs => hs.map(h => Array.from(h.children).map(c => c.className + ':' + c.textContent))",
    )
    assert heads and all(h[1:3] == ["badge f:format_failure", "why:hedges between options"] for h in heads)
    assert p.eval_on_selector_all(".run[data-status=ok] .why", "n => n.length") == 0
    page.search("hedges between")  # the reason is searchable
    p.wait_for_function("document.querySelector('#sample-list .card') !== null")
    shown = len({(x["task"], x["id"]) for x in failed})
    assert p.text_content("#p-count").startswith(f"{shown} of ")
    assert page.errors == []
    p.close()


def test_compressed_report_works(browser_context, tmp_path: Path, report_url: str):
    out = Path(report_url.removeprefix("file://")).parent
    html = render_html(load_results(out), load_samples(out), compress_above=0)
    path = tmp_path / "compressed.html"
    path.write_text(html, encoding="utf-8")
    page = Page(browser_context, path.as_uri()).ready()
    assert page.page.text_content("#p-count").startswith("140 of 140 items (700 samples)")
    page.page.select_option("#f-task", "TaxQA")
    assert {c["task"] for c in page.cards()} == {"TaxQA"}
    assert page.page.evaluate("typeof window.__xss") == "undefined"
    assert page.errors == []
    page.page.close()


def test_leaderboard_page_loads(browser_context, tmp_path: Path):
    dirs = [
        build_result_dir(
            tmp_path / name, model=f"m-{name}", quality=q, seed=s, items_per_task=4, runs=2
        )
        for name, q, s in (("a", 0.2, 1), ("b", 0.0, 2))
    ]
    paths = write_leaderboard(dirs, tmp_path / "board", resamples=500)
    page = Page(browser_context, paths[1].as_uri())
    page.page.wait_for_selector("#table-leaderboard")
    assert page.page.locator("#table-leaderboard tbody tr").count() == 2
    assert page.errors == []
    page.page.close()


def test_the_evidence_is_marked_in_the_prediction_with_its_rule(browser_context, tmp_path: Path):
    out = build_result_dir(tmp_path / "out", items_per_task=4, runs=1, hostile=False)
    path = out / "samples.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    target = next(line for line in lines if line["status"] == "ok" and line["task"] == "TaxSCQ")
    prediction = "分析：<b>不动产</b>适用9%。\n答案：C"
    start = prediction.index("答案：C")
    target.update(prediction=prediction, read_by="rule:final.answer-statement", confidence="high",
                  evidence=[start, start + 4])
    vetoed = next(line for line in lines if line["status"] == "format_failure")
    vetoed.update(veto="veto.hedge", read_by=None, evidence=None)
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    page = Page(browser_context, write_reports(out)[1].as_uri()).ready()
    p = page.page
    page.search(target["id"])
    card = f"#sample-list .card[data-task=TaxSCQ][data-id='{target['id']}']"
    p.wait_for_selector(card)
    assert p.text_content(f"{card} mark.evidence") == "答案：C"
    assert p.text_content(f"{card} .text.prediction") == prediction  # markup shown as text
    assert p.eval_on_selector_all(f"{card} .text.prediction b", "n => n.length") == 0
    assert "rule final.answer-statement (high)" in p.text_content(f"{card} .rh")
    page.search("")
    p.select_option("#f-status", "format_failure")
    p.wait_for_selector(".run[data-status=format_failure] .badge.veto")
    assert "veto.hedge" in p.text_content(".run[data-status=format_failure] .badge.veto")
    assert page.errors == []
    p.close()


def _echo_run(out: Path) -> Path:
    """A run whose every answer is the prompt itself (baseline:echo): generation tasks score
    it as text, and TaxInspect (mixed) reads no field from it."""
    import subprocess
    import sys

    # A process of its own: the browser's driver holds an event loop in this thread.
    done = subprocess.run([sys.executable, "-m", "taxpraben", "run", "--model", "baseline:echo", "--data", "sample",
                           "--tasks", "TaxQA,TaxCalc", "--limit", "2", "--runs", "1", "--no-semantic", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return out / "report.html"


def test_a_copy_of_the_prompt_scored_as_text_has_no_ok_badge(browser_context, tmp_path: Path):
    page = Page(browser_context, _echo_run(tmp_path / "echo").as_uri()).ready()
    p = page.page
    p.select_option("#f-task", "TaxQA")
    badges = p.eval_on_selector_all(".card .run .rh .badge:not(.rule)", "bs => bs.map(b => b.textContent)")
    assert badges == ["copy of the prompt (scored as text)"] * 2
    p.select_option("#f-task", "TaxCalc")  # read exactly: a copy is a format failure, as before
    assert p.eval_on_selector_all(".card .run .rh .badge:not(.rule)", "bs => bs.map(b => b.textContent)") == ["format_failure"] * 2
    assert page.errors == []
    p.close()


GENERATION_AND_MIXED = ("TaxRecite", "TaxSum", "TaxQA", "TaxBoard", "TaxOpinion", "TaxRisk", "TaxInspect", "TaxPlan")


def test_every_table_fits_at_1400_px_and_scorer_errors_are_folded(browser_context, tmp_path: Path):
    """Eight tasks not computed make the group tables' task lists long: the list wraps, no
    table scrolls sideways (its interval column stays in view), and why the scorer was
    unavailable is one folded <details>, not paragraphs amid the results."""
    out = build_result_dir(tmp_path / "out", items_per_task=5, runs=2, hostile=False, not_computed=GENERATION_AND_MIXED)
    page = Page(browser_context, write_reports(out)[1].as_uri()).ready()
    p = page.page
    assert p.evaluate("window.innerWidth") == 1400
    widths = p.eval_on_selector_all(
        ".table-wrap", "ws => ws.map(w => [w.firstElementChild.id, w.scrollWidth, w.clientWidth])")
    assert widths and [(key, scroll) for key, scroll, client in widths if scroll > client] == []
    last = p.eval_on_selector("#table-groups-type", "t => t.querySelector('tbody tr td:last-child').getBoundingClientRect().right")
    assert last <= 1400
    folded = p.eval_on_selector_all("details.scorer-errors", "ds => ds.map(d => [d.open, d.querySelector('summary').textContent])")
    assert folded == [[False, "1 scorer(s) unavailable: why, and how to get them"]]
    loose = p.eval_on_selector_all("#tasks > p.note", "ns => ns.filter(n => n.textContent.startsWith('Scorer unavailable')).length")
    assert loose == 0
    assert page.errors == []
    p.close()


def test_a_fields_tasks_evidence_is_each_fields_span(browser_context, tmp_path: Path):
    """A fields task marks where each field was read (fields.NAME.evidence), not one stretch
    from the first value to a rationale that repeats it (issue 45 item 8)."""
    out = build_result_dir(tmp_path / "out", items_per_task=4, runs=1, hostile=False)
    path = out / "samples.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    target = next(line for line in lines if line["status"] == "ok" and line.get("fields"))
    prediction = '{"少缴税款": 260000, "罚款": 130000}\n分析：少缴税款260000元，罚款130000元。'
    spans = {"少缴税款": [9, 15], "罚款": [23, 29]}  # the JSON's values, not the analysis's
    assert [prediction[s:e] for s, e in spans.values()] == ["260000", "130000"]
    target.update(prediction=prediction, evidence=[9, 29],
                  fields={name: {"pred": int(prediction[s:e]), "gold": 1, "score": 0.0, "status": "ok",
                                 "kind": "number", "evidence": [s, e]} for name, (s, e) in spans.items()})
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    page = Page(browser_context, write_reports(out)[1].as_uri()).ready()
    p = page.page
    page.search(target["id"])
    card = f"#sample-list .card[data-task={target['task']}][data-id='{target['id']}']"
    p.wait_for_selector(card)
    assert p.eval_on_selector_all(f"{card} mark.evidence", "ns => ns.map(n => n.textContent)") == ["260000", "130000"]
    assert p.text_content(f"{card} .text.prediction") == prediction
    assert page.errors == []
    p.close()

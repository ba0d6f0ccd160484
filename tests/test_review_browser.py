"""The review page in a real browser: headless Chromium driven by Playwright (as
tests/test_report_browser.py: Debian's ``chromium``, skipped with the reason when missing).

A reviewer grades readings with the keyboard, the server is stopped and started again, the
page continues where it stopped; review.jsonl holds every verdict and the report shows the
figure. Outputs with markup are shown as text and never run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.review_fixtures import copy_of, first_choice_run, serving
from taxpraben.jobs.review import build_session
from taxpraben.report import write_reports
from taxpraben.report.review import attach_review
from taxpraben.review.draw import Reading
from taxpraben.review.session import Session
from taxpraben.review.store import REVIEW_FILE, read_verdicts

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
CHROMIUM = os.environ.get("TAXPRABEN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    pytest.skip("no chromium binary (apt-get install chromium)", allow_module_level=True)

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
XSS_SCRIPT = "<script>window.__xss=1</script>"
XSS_IMG = '<img src=x onerror="window.__xss=2">'


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Made before the browser starts: Playwright's sync API holds an event loop that `run` cannot share.
    return first_choice_run(tmp_path_factory.mktemp("review-browser") / "fc")


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory, base_run: Path) -> Iterator[object]:
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch_persistent_context(
                str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1200, "height": 900})
        except Exception as exc:  # a broken browser install is an environment problem
            pytest.skip(f"chromium did not start: {exc}")
        yield browser
        browser.close()


def open_page(context, url: str) -> tuple[object, list[str]]:
    errors: list[str] = []
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.goto(url)
    page.wait_for_selector("body[data-ready]", timeout=15_000)
    return page, errors


def graded(page, k: int, n: int) -> None:
    # expect() polls without evaluating strings (the page's CSP forbids eval, as it should).
    sync_api.expect(page.locator("#progress-text")).to_have_text(f"{k} of {n} graded", timeout=10_000)


def expected(reading: Reading, key: str, typed: str | None = None) -> tuple[str, str | None]:
    """The verdict and answer review.jsonl should hold for ``key`` pressed on ``reading``."""
    if key == "y":
        return "right", None
    if key == "u":
        return "unsure", None
    if key == "n":
        return ("right", None) if reading.read is None else ("wrong", None)
    return "wrong", typed


def test_grading_by_keyboard_survives_a_restart_and_reaches_the_report(context, base_run: Path, tmp_path: Path) -> None:
    out = copy_of(base_run, tmp_path / "out")
    n = 6
    session = build_session(out, n, 0, "ann")
    readings = session.readings
    with serving(session) as url:
        page, errors = open_page(context, url)
        assert page.text_content("#where").startswith(f"1 of {n} · {readings[0].task}")
        assert page.is_hidden("#gold")  # not before the verdict
        page.keyboard.press("y")
        graded(page, 1, n)
        sync_api.expect(page.locator("#where")).to_have_text(re.compile(rf"^2 of {n}"))  # polled: it moves after
        assert "Previous:" in page.text_content("#previous") and "gold:" in page.text_content("#previous")
        page.keyboard.press("w")
        page.wait_for_selector("#answer", state="visible")
        page.keyboard.type("99999")
        page.keyboard.press("Enter")
        graded(page, 2, n)
        page.keyboard.press("n")  # pressed at once: it waits for the saved verdict, never lands in the field
        graded(page, 3, n)
        # The next reading has loaded (#where is set on its answer) before the server stops: a fetch cut
        # off is a console error.
        sync_api.expect(page.locator("#where")).to_have_text(re.compile(rf"^4 of {n}"))
    # The server is stopped; a new one (another process in real life) reads review.jsonl back.
    assert len(read_verdicts(out / REVIEW_FILE)) == 3
    session = build_session(out, n, 0, "ann")
    with serving(session) as url:
        page.goto(url)
        page.wait_for_selector("body[data-ready]", timeout=15_000)
        assert page.text_content("#progress-text") == f"3 of {n} graded"
        assert page.text_content("#where").startswith(f"4 of {n}")  # continues where it stopped
        page.keyboard.press("ArrowLeft")  # back: a graded reading shows its gold and the verdict
        sync_api.expect(page.locator("#where")).to_have_text(re.compile(r"^3 of"))
        assert page.is_visible("#gold") and page.text_content("#verdict").startswith("Your verdict:")
        page.keyboard.press("ArrowRight")  # skip
        sync_api.expect(page.locator("#where")).to_have_text(re.compile(r"^4 of"))
        for key in ("u", "y", "y"):  # typed fast: keys wait while a verdict is saved, none is lost
            page.keyboard.press(key)
        graded(page, n, n)
        page.wait_for_selector("#done", state="visible")
        assert page.text_content("#done").startswith(f"All {n} readings are graded")
        assert errors == []
        page.close()
    lines = [json.loads(x) for x in (out / REVIEW_FILE).read_text(encoding="utf-8").splitlines()]
    keys = [("y", None), ("w", "99999"), ("n", None), ("u", None), ("y", None), ("y", None)]
    assert [(x["task"], x["id"], x["run"], x.get("field")) for x in lines] == [r.key for r in readings]
    assert [(x["verdict"], x["answer"]) for x in lines] == [expected(r, k, t) for r, (k, t) in zip(readings, keys,
                                                                                                    strict=True)]
    assert all(x["reviewer"] == "ann" and x["at"].endswith("Z") for x in lines)
    # The report's figure, in the browser.
    assert attach_review(out)
    html = write_reports(out)[1]
    agreed = sum(x["verdict"] == "right" for x in lines)
    decided = sum(x["verdict"] != "unsure" for x in lines)
    report = context.new_page()
    report.goto(html.as_uri())
    report.wait_for_selector("body[data-ready]", timeout=15_000)
    assert report.text_content("#review-figure").startswith(f"{agreed} of {decided} readings agree")
    assert report.locator("#table-review").count() == 1
    report.select_option("#f-status", "review_wrong")
    wrong = {(x["task"], x["id"]) for x in lines if x["verdict"] == "wrong"}
    report.wait_for_function(f"document.querySelectorAll('#sample-list .card').length === {len(wrong)}")
    report.close()


def test_outputs_with_markup_are_shown_as_text_and_never_run(context, tmp_path: Path) -> None:
    hostile = f"答案：{XSS_SCRIPT} 选 {XSS_IMG} A"
    reading = Reading("TaxSCQ", "<b>1</b>", 0, None, "high", "classification", hostile, XSS_IMG,
                      "rule:choice.bare-answer", "high", (3, 3 + len(XSS_SCRIPT)), None, None, XSS_SCRIPT)
    session = Session(tmp_path, [reading], XSS_IMG, label=XSS_SCRIPT, kinds={"TaxSCQ": "label"},
                      queries={("TaxSCQ", "<b>1</b>"): f"题目 {XSS_SCRIPT}"},
                      choices={("TaxSCQ", "<b>1</b>"): (XSS_IMG, "B")})
    with serving(session) as url:
        page, errors = open_page(context, url)
        assert page.evaluate("typeof window.__xss") == "undefined"
        assert page.text_content("#output") == hostile  # the literal text
        assert page.text_content("#output mark") == XSS_SCRIPT
        assert page.locator("main script, main img, main b").count() == 0
        assert XSS_IMG in page.text_content("#options") and XSS_IMG in page.text_content("#reading")
        assert XSS_SCRIPT in page.text_content("h1")
        page.keyboard.press("y")
        page.wait_for_selector("#done", state="visible")
        assert XSS_SCRIPT in page.text_content("#previous")  # the gold, as text
        assert page.evaluate("typeof window.__xss") == "undefined"
        assert errors == []
        page.close()


def test_the_page_says_what_right_means_and_an_empty_answer_gets_feedback(context, base_run: Path, tmp_path: Path) -> None:
    out = copy_of(base_run, tmp_path / "out")
    session = build_session(out, 3, 0, "ann")
    with serving(session) as url:
        page, errors = open_page(context, url)
        assert "Right means taxpraben read what the output answers, whatever the gold" in page.text_content("#meaning")
        page.keyboard.press("w")
        page.wait_for_selector("#answer", state="visible")
        page.keyboard.press("Enter")  # nothing typed: said so, nothing recorded
        sync_api.expect(page.locator("#error")).to_have_text(re.compile(r"^Type the answer the output gives"))
        assert page.is_visible("#answer") and page.text_content("#progress-text") == "0 of 3 graded"
        page.keyboard.press("Escape")
        page.keyboard.press("y")
        graded(page, 1, 3)
        assert errors == []
        page.close()
    assert len(read_verdicts(out / REVIEW_FILE)) == 1

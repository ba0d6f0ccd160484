"""report.md, report.html and the terminal summary, rendered from fixture result directories."""

from __future__ import annotations

import html as htmllib
import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from helpers.report_fixtures import XSS_GOLD, XSS_IMG, XSS_SCRIPT, build_result_dir
from taxpraben.report import ReportError, load_results, print_summary, write_reports
from taxpraben.report import format as fmt
from taxpraben.report.html import render_html
from taxpraben.report.load import load_samples
from taxpraben.report.samples import browser_payload, embedded_samples, script_json
from taxpraben.results import Sample, Stat


@pytest.fixture(scope="module")
def result_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = build_result_dir(tmp_path_factory.mktemp("run") / "out", not_computed=("TaxRisk",))
    write_reports(out)
    return out


@pytest.fixture(scope="module")
def full_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = build_result_dir(tmp_path_factory.mktemp("full") / "out")
    write_reports(out)
    return out


def _results(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def _stat(figure: dict, metric: str = "score") -> str:
    """A figure of results.json as the reports write it."""
    return fmt.stat(Stat.model_validate(figure), metric)


# --- formatting: one place ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("figure", "metric", "text"),
    [
        ({"mean": 0.81234, "std": 0.01021}, "score", "81.23 ± 1.02"),
        ({"mean": 0.5, "std": None}, "score", "50.00"),
        ({"mean": -3.2145, "std": 0.0321}, "bartscore_raw", "-3.215 ± 0.032"),
        ({"mean": 0.0833, "std": 0.05}, "format_failure_rate", "8.3% ± 5.0"),
        (None, "score", "n/c"),
        ({"mean": None}, "em", "n/c"),
    ],
)
def test_stat_formatting(figure, metric, text):
    assert fmt.stat(None if figure is None else Stat.model_validate(figure), metric) == text


def test_mean_formatting():
    assert fmt.mean(Stat(mean=0.0833, std=0.05), "format_failure_rate") == "8.3%"
    assert fmt.mean(Stat(mean=None), "error_rate") == fmt.mean(None) == "n/c"


def test_interval_and_p_value_formatting():
    assert fmt.interval([0.4476, 0.4945]) == "[44.76, 49.45]"
    assert fmt.interval(None) == "n/a"
    assert fmt.p_value(0.0001) == "< 0.001"
    assert fmt.p_value(0.3549) == "0.355"
    assert fmt.signed_points(0.0132) == "+1.32"


# --- report.md ----------------------------------------------------------------------------


def test_write_reports_returns_both_paths(tmp_path: Path):
    out = build_result_dir(tmp_path / "out", items_per_task=3, runs=2)
    paths = write_reports(out)
    assert paths == [out / "report.md", out / "report.html", out / "summary.csv"]
    assert all(p.stat().st_size > 0 for p in paths)


def test_markdown_paper_table_in_bloom_order(result_dir: Path):
    md = (result_dir / "report.md").read_text(encoding="utf-8")
    results = _results(result_dir)
    table = md.split("## Results by task", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "Task" not in line]
    names = [line.split("|")[2].strip().strip("*") for line in rows]
    assert names == [
        "TaxRecite",
        "TaxSum",
        "TaxTopic",
        "TaxRead",
        "TaxCalc",
        "TaxSCQ",
        "TaxMCQ",
        "TaxQA",
        "TaxBoard",
        "TaxCrime",
        "TaxOpinion",
        "TaxRisk",
        "TaxInspect",
        "TaxPlan",
    ]
    # the Bloom level heads each group once
    assert [line.split("|")[1].strip() for line in rows if line.split("|")[1].strip()] == [
        "**Remember**",
        "**Understand**",
        "**Apply**",
        "**Analyze**",
        "**Evaluate**",
        "**Create**",
    ]
    calc = results["tasks"]["TaxCalc"]["score"]
    calc_row = next(line for line in rows if "TaxCalc" in line)
    expected = f"{calc['mean'] * 100:.2f} ± {calc['std'] * 100:.2f}"
    assert calc_row.rstrip(" |").endswith(expected)
    raw = results["tasks"]["TaxQA"]["metrics"]["bartscore_raw"]
    assert f"{raw['mean']:.3f} ± {raw['std']:.3f}" in next(line for line in rows if "TaxQA" in line)


def test_markdown_overall_groups_and_intervals(result_dir: Path):
    md = (result_dir / "report.md").read_text(encoding="utf-8")
    overall = _results(result_dir)["overall"]
    assert f"**{overall['mean'] * 100:.2f} ± {overall['std'] * 100:.2f}**" in md
    low, high = overall["ci95"]
    assert f"95% interval over runs (t): [{low * 100:.2f}, {high * 100:.2f}]" in md
    blow, bhigh = overall["bootstrap_ci95"]
    assert f"95% bootstrap interval over items: [{blow * 100:.2f}, {bhigh * 100:.2f}]" in md
    assert "### By output type" in md and "### By Bloom level" in md
    apply_group = _results(result_dir)["groups"]["bloom"]["apply"]
    assert f"| Apply | TaxCalc, TaxSCQ, TaxMCQ, TaxQA, TaxBoard | {_stat(apply_group)} |" in md


def test_markdown_marks_not_computed_and_partial(result_dir: Path):
    md = (result_dir / "report.md").read_text(encoding="utf-8")
    risk_row = next(
        line for line in md.splitlines() if line.startswith("| ") and "*TaxRisk*" in line
    )
    assert "*not computed*" in risk_row
    assert "Not computed (TaxRisk): BERTScore model hfl/chinese-xlnet-base unavailable" in md
    assert ("The Overall Average is partial: 13 of 14 tasks of the benchmark; missing: TaxRisk (not computed: "
            "scorer unavailable)") in md  # fmt: skip
    assert "· **partial: 13 of 14** (mean ± std over runs" in md  # beside the Overall Average
    assert "TaxRisk (not computed)" in md  # in its groups
    assert "UNAVAILABLE (no network and no local copy)" in md


def test_markdown_failures_and_configuration(result_dir: Path):
    md = (result_dir / "report.md").read_text(encoding="utf-8")
    results = _results(result_dir)
    crime = results["tasks"]["TaxCrime"]
    row = next(
        line
        for line in md.split("## Format failures and errors")[1].splitlines()
        if "TaxCrime" in line
    )
    assert _stat(crime["format_failure_rate"], "format_failure_rate") in row
    assert _stat(crime["metrics"]["missing_rate"], "missing_rate") in row
    for text in (
        "**Model**: openai:deepseek-chat",
        "**Endpoint**: https://api.deepseek.com/v1",
        "temperature=0, top_p=default, max_tokens=1024",
        "**Scoring profile**: taxpraben",
        f"**Data hash**: {results['meta']['data_hash']}",
        "hfl/chinese-xlnet-base, layer=5",
        "facebook/bart-large-cnn",
        "| TaxInspect | 少缴税款 | number | EM |",
        "bootstrap",
    ):
        assert text in md, text


def test_markdown_full_run_is_not_partial(full_dir: Path):
    md = (full_dir / "report.md").read_text(encoding="utf-8")
    assert "Partial" not in md and "not computed" not in md.split("## Run configuration")[
        0
    ].replace('"not computed" could not', "")


def test_markdown_escapes_cells(tmp_path: Path):
    out = build_result_dir(tmp_path / "out", model="evil|<b>model</b>", items_per_task=2, runs=2)
    write_reports(out)
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "evil\\|&lt;b&gt;model&lt;/b&gt;" in md
    assert "<b>" not in md


def test_one_run_shows_means_without_spread(tmp_path: Path):
    out = build_result_dir(tmp_path / "out", items_per_task=4, runs=1)
    results = _results(out)
    for task in results["tasks"].values():
        task["score"]["std"], task["score"]["ci95"] = None, None
    results["overall"].update(std=None, ci95=None)
    (out / "results.json").write_text(json.dumps(results), encoding="utf-8")
    write_reports(out)
    md = (out / "report.md").read_text(encoding="utf-8")
    assert f"**{results['overall']['mean'] * 100:.2f}**" in md
    assert "95% interval over runs (t): n/a" in md


def test_missing_results_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ReportError, match=r"results\.json: not found"):
        write_reports(tmp_path)
    (tmp_path / "results.json").write_text('{"schema_version": 9, "tasks": {}}', encoding="utf-8")
    with pytest.raises(ReportError, match="schema_version 9 is not supported"):
        write_reports(tmp_path)


# --- report.html --------------------------------------------------------------------------


def _embedded(html: str) -> dict:
    match = re.search(
        r'<script type="application/json" id="sample-data">(.*?)</script>', html, re.S
    )
    assert match
    return json.loads(match.group(1))


def test_html_is_self_contained(result_dir: Path):
    html = (result_dir / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html)
    assert "@import" not in html and "url(http" not in html
    policy = htmllib.unescape(
        re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)[1]
    )
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy
    assert html.count("<svg") >= 4  # task bars, radar, failures, distributions
    assert html.count("<script") == 2  # the data block and the page's own script


def test_html_tables_match_markdown(result_dir: Path):
    html = (result_dir / "report.html").read_text(encoding="utf-8")
    results = _results(result_dir)
    for name in ("TaxCalc", "TaxQA", "TaxPlan"):
        assert _stat(results["tasks"][name]["score"]) in html
    assert _stat(results["overall"]) in html
    assert 'id="partial-warning"' in html
    assert "not computed" in html
    assert "95% bootstrap interval over items" in html


def test_html_escapes_hostile_text(result_dir: Path):
    html = (result_dir / "report.html").read_text(encoding="utf-8")
    for hostile in (XSS_SCRIPT, XSS_IMG, XSS_GOLD, "window.__xss=1</script>"):
        assert hostile not in html
    assert "onerror=" not in html.replace("\\u003cimg src=x onerror=", "")
    data = _embedded(html)
    predictions = [run.get("p") for item in data["items"] for run in item["r"]]
    assert any(isinstance(p, str) and XSS_SCRIPT in p for p in predictions)
    assert any(isinstance(p, str) and XSS_IMG in p for p in predictions)
    assert any(XSS_GOLD in item["g"] for item in data["items"])


def test_html_escapes_results_fields(tmp_path: Path):
    out = build_result_dir(
        tmp_path / "out", model='<img src=x onerror="alert(1)">', items_per_task=2
    )
    write_reports(out)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert '<img src=x onerror="alert(1)">' not in html
    assert "&lt;img src=x onerror=" in html


def test_script_json_cannot_close_its_element():
    text = str(script_json({"a": "</script><!-- & \u2028"}))
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028"}


def test_browser_payload_dedupes_and_cuts():
    long = "税" * 2500
    lines = [
        {
            "task": "TaxQA",
            "id": "2",
            "run": r,
            "status": "ok",
            "prediction": long if r < 2 else "短",
            "gold": "金" * 10,
            "extracted": None,
            "scores": {"bertscore": 0.7123456},
            "score": 0.5,
            "error": None,
        }
        for r in range(3)
    ]
    lines.append(dict(lines[0], id="10"))
    payload = browser_payload(map(Sample.model_validate, lines), ["TaxQA"])
    first, second = payload["items"]
    assert [first["i"], second["i"]] == ["2", "10"]  # natural order of ids
    runs = first["r"]
    assert len(runs[0]["p"]) == 2000 and runs[0]["pc"] == 500
    assert runs[1]["p"] == 0  # same text as run 0: a reference, not a copy
    assert runs[2]["p"] == "短"
    assert runs[0]["sc"] == {"bertscore": 0.7123}
    assert "g" in first and all("g" not in run for run in runs)  # gold once per item


def _line(run: int, status: str, **extra: object) -> dict:
    return {"task": "TaxSCQ", "id": "7", "run": run, "status": status, "prediction": "A", "gold": "B",
            "extracted": None, "scores": {"accuracy": 0.0}, "score": 0.0, "error": None, **extra}


def test_browser_says_why_a_format_failure_was_not_read():
    """A format failure's reason (``item.failure``) travels as the run's "w", only where there
    is one: an ok run, or a failure with no reason, adds no key."""
    items = [
        Sample.model_validate(_line(0, "format_failure", failure="copy of the prompt", query="问题？")),
        Sample.model_validate(_line(1, "format_failure", failure="several different answers")),
        Sample.model_validate(_line(2, "format_failure")),
        Sample.model_validate(_line(3, "ok", failure="a stale reason")),  # not a failure: not shown
    ]
    (entry,) = browser_payload(reversed(items), ["TaxSCQ"])["items"]
    assert [run.get("w") for run in entry["r"]] == ["copy of the prompt", "several different answers", None, None]
    assert [run["st"] for run in entry["r"]] == ["f", "f", "f", "o"]
    assert entry["q"] == "问题？"  # the first run's line carries the prompt
    assert set(entry["r"][2]) == {"n", "st", "p", "s", "sc"}  # nothing added without a reason


def test_report_html_shows_failure_reasons_from_samples_jsonl(tmp_path: Path):
    """Read back from samples.jsonl into items, the reasons reach the page's data and the
    page's script renders them beside the status."""
    out = build_result_dir(tmp_path / "out", items_per_task=20, runs=2, hostile=False)
    path = out / "samples.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    failed = [line for line in lines if line["status"] == "format_failure"]
    assert failed
    for line in failed:
        line["failure"] = "answers another question"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    items = load_samples(out)
    assert all(isinstance(item, Sample) for item in items)
    assert sum(item.failure == "answers another question" for item in items) == len(failed)
    write_reports(out)
    html = (out / "report.html").read_text(encoding="utf-8")
    runs = [run for item in _embedded(html)["items"] for run in item["r"]]
    assert [run["w"] for run in runs if "w" in run] == ["answers another question"] * len(failed)
    assert all(run["st"] == "f" for run in runs if "w" in run)
    assert 'el("span", "why", run.w)' in html and ".why {" in html


def test_large_data_is_embedded_compressed(result_dir: Path):
    results, samples = load_results(result_dir), load_samples(result_dir)
    plain = render_html(results, samples, compress_above=None)
    packed = render_html(results, samples, compress_above=0)
    envelope = _embedded(packed)
    assert set(envelope) == {"gzip_base64", "bytes"}
    import base64
    import gzip

    inflated = json.loads(gzip.decompress(base64.b64decode(envelope["gzip_base64"])))
    assert inflated == _embedded(plain)
    assert embedded_samples({"items": []}, compress_above=10**9) == '{"items":[]}'


def test_missing_samples_leave_an_empty_browser(tmp_path: Path):
    out = build_result_dir(tmp_path / "out", items_per_task=2, runs=2)
    (out / "samples.jsonl").unlink()
    write_reports(out)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "samples.jsonl was not found" in html


# --- terminal summary ---------------------------------------------------------------------


def test_print_summary(result_dir: Path):
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None)
    print_summary(load_results(result_dir), [result_dir / "report.md", result_dir / "report.html"], console)
    text = buffer.getvalue()
    results = _results(result_dir)
    assert "Overall Average" in text and _stat(results["overall"]) in text
    assert fmt.interval(results["overall"]["ci95"]) in text
    assert "not computed" in text
    assert "The Overall Average is partial: 13 of 14 tasks of the benchmark; missing: TaxRisk" in text
    assert _stat(results["tasks"]["TaxCalc"]["score"]) in text
    assert "By Bloom level:" in text
    assert str(result_dir / "report.html") in text


@pytest.mark.parametrize("compress_above", [None, 0])
def test_streamed_browser_data_is_the_in_memory_payload_byte_for_byte(full_dir: Path, compress_above: int | None):
    """write_reports streams the samples (BrowserData, one task at a time): the page's data
    must be exactly embedded_samples(browser_payload(...)), plain or gzip + base64, whatever
    the order of the lines in samples.jsonl."""
    import io
    import random

    from taxpraben.report.load import ordered_tasks
    from taxpraben.report.samples import BrowserData, write_embedded

    results, samples = load_results(full_dir), load_samples(full_dir)
    order = [row.name for row in ordered_tasks(results)]
    expected = str(embedded_samples(browser_payload(samples, order), compress_above=compress_above))
    shuffled = list(samples)
    random.Random(7).shuffle(shuffled)  # tasks interleaved: not the order the pipeline writes
    for lines in (samples, shuffled):
        out = io.StringIO()
        with BrowserData(iter(lines), order) as data:
            assert data.n_samples == len(samples)
            write_embedded(out, data, compress_above=compress_above)
        assert out.getvalue() == expected

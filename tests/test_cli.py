"""The command line as a user meets it: tasks, score (oracle and imperfect files), errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taxpraben import __version__
from taxpraben.cli import app
from taxpraben.data.loader import load_data
from taxpraben.tasks import load_registry

REG = load_registry(use_env=False)
runner = CliRunner()


def test_version_and_help() -> None:
    out = runner.invoke(app, ["--version"])
    assert out.exit_code == 0 and __version__ in out.output
    for cmd in ("tasks", "validate", "run", "score", "report"):
        res = runner.invoke(app, [cmd, "--help"])
        assert res.exit_code == 0, (cmd, res.output)


def test_tasks_lists_the_14_datasets() -> None:
    res = runner.invoke(app, ["tasks"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for name in REG:
        assert name in res.output
    assert "classification" in res.output and "create" in res.output


def _write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def exact_tasks() -> str:
    return ",".join(n for n, s in REG.items() if s.type in ("classification", "structured"))


def test_score_oracle_gives_one_on_exact_tasks(tmp_path: Path, exact_tasks: str) -> None:
    data = load_data("sample", REG, exact_tasks.split(","))
    rows = [
        {"task": t, "id": r.id, "run": run, "prediction": r.gold_label if REG[t].type == "classification" else r.answer_text}
        for run in range(2) for t, recs in data.records.items() for r in recs
    ]
    preds = _write(tmp_path / "p.jsonl", rows)
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(preds), "--tasks", exact_tasks, "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    results = json.loads((tmp_path / "o/results.json").read_text(encoding="utf-8"))
    assert results["overall"]["mean"] == 1.0
    assert results["meta"]["runs"] == 2
    for name in ("results.json", "samples.jsonl", "report.md", "report.html"):
        assert (tmp_path / "o" / name).is_file()


def test_score_imperfect_file_known_values(tmp_path: Path) -> None:
    data = load_data("sample", REG, ["TaxMCQ"])
    recs = data.records["TaxMCQ"]
    rows = []
    for i, r in enumerate(recs):
        if i % 2 == 0:
            text = f"正确答案：{'、'.join(r.answer)}"  # right, other format
        elif i % 3 == 0:
            text = "我认为这道题无法判断。"  # no letters: format failure
        else:
            text = f"答案：{r.answer[0]}"  # a strict subset: wrong (gold has 2+ letters)
        rows.append({"task": "TaxMCQ", "id": r.id, "run": 0, "prediction": text})
    preds = _write(tmp_path / "p.jsonl", rows)
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(preds), "--tasks", "TaxMCQ", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    task = json.loads((tmp_path / "o/results.json").read_text(encoding="utf-8"))["tasks"]["TaxMCQ"]
    n = len(recs)
    right = sum(1 for i in range(n) if i % 2 == 0)
    fails = sum(1 for i in range(n) if i % 2 == 1 and i % 3 == 0)
    assert task["metrics"]["em"]["mean"] == pytest.approx(right / n)
    assert task["format_failure_rate"]["mean"] == pytest.approx(fails / n)


def test_score_refuses_duplicates_and_bad_files(tmp_path: Path) -> None:
    dup = _write(tmp_path / "d.jsonl", [{"task": "TaxCalc", "id": "1", "run": 0, "prediction": "1"}] * 2)
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(dup), "--tasks", "TaxCalc", "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and "duplicate" in res.output
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"task": "TaxCalc", "id": "1", "run": 0, "prediction": "1"}\n{"task": \n', encoding="utf-8")
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(bad), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and any("b.jsonl:2" in line for line in res.output.splitlines())
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(dup), "--tasks", "TaxCalk"])
    assert res.exit_code == 2 and "did you mean 'TaxCalc'" in res.output  # a usage error (README: exit 2)
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(dup), "--profile", "helm"])
    assert res.exit_code == 2 and "unknown scoring profile" in res.output


def test_taxben_profile_differs_where_it_should(tmp_path: Path) -> None:
    data = load_data("sample", REG, ["TaxRead"])
    rows = [{"task": "TaxRead", "id": r.id, "run": 0, "prediction": f"根据材料，答案是{r.answer_text}，依据如上所述。"} for r in data.records["TaxRead"]]
    preds = _write(tmp_path / "p.jsonl", rows)
    scores = {}
    for profile in ("taxpraben", "taxben"):
        out = tmp_path / profile
        res = runner.invoke(app, ["score", "--data", "sample", "-p", str(preds), "--tasks", "TaxRead", "--profile", profile, "--out", str(out)])
        assert res.exit_code == 0, res.output
        scores[profile] = json.loads((out / "results.json").read_text(encoding="utf-8"))["tasks"]["TaxRead"]["metrics"]["em"]["mean"]
    assert scores["taxben"] == 1.0  # gold-in-output
    assert scores["taxpraben"] == 1.0  # the span after 答案 ends at the clause


def test_scorer_options_reach_the_scorers_and_results(tmp_path: Path, tiny_xlnet_dir: Path, tiny_bart_dir: Path) -> None:
    data = load_data("sample", REG, ["TaxSum"])
    rows = [{"task": "TaxSum", "id": r.id, "run": 0, "prediction": r.answer_text[: len(r.answer_text) // 2]}
            for r in data.records["TaxSum"]]
    preds = _write(tmp_path / "p.jsonl", rows)
    means = {}
    for idf in (False, True):
        out = tmp_path / f"idf{idf}"
        args = ["score", "--data", "sample", "-p", str(preds), "--tasks", "TaxSum", "--out", str(out),
                "--bertscore-model", str(tiny_xlnet_dir), "--bertscore-layer", "2", "--bertscore-batch-size", "4",
                "--bartscore-model", str(tiny_bart_dir), "--device", "cpu"]
        res = runner.invoke(app, args + (["--bertscore-idf"] if idf else []))
        assert res.exit_code == 0, res.output
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        bert = results["meta"]["scorers"]["bertscore"]
        assert bert["idf"] is idf and bert["layer"] == 2 and bert["available"] is True
        means[idf] = results["tasks"]["TaxSum"]["metrics"]["bertscore"]["mean"]
    assert means[True] != means[False]


def test_scorer_dtype_reaches_the_scorers_and_results(tmp_path: Path, tiny_xlnet_dir: Path, tiny_bart_dir: Path) -> None:
    data = load_data("sample", REG, ["TaxSum"])
    rows = [{"task": "TaxSum", "id": r.id, "run": 0, "prediction": r.answer_text[: len(r.answer_text) // 2]}
            for r in data.records["TaxSum"]]
    preds = _write(tmp_path / "p.jsonl", rows)
    scores = {}
    for dtype in ("float32", "bf16"):
        out = tmp_path / dtype
        args = ["score", "--data", "sample", "-p", str(preds), "--tasks", "TaxSum", "--out", str(out),
                "--bertscore-model", str(tiny_xlnet_dir), "--bertscore-layer", "2",
                "--bartscore-model", str(tiny_bart_dir), "--device", "cpu", "--scorer-dtype", dtype]
        res = runner.invoke(app, args)
        assert res.exit_code == 0, res.output
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        for metric in ("bertscore", "bartscore"):
            info = results["meta"]["scorers"][metric]
            assert info["dtype"] == dtype and info["exact"] is (dtype == "float32")
        scores[dtype] = results["tasks"]["TaxSum"]["metrics"]["bartscore_raw"]["mean"]
    assert scores["bf16"] != scores["float32"]
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(preds), "--scorer-dtype", "fp8"])
    assert res.exit_code == 2 and "unknown scorer dtype" in res.output


def test_score_refuses_a_file_that_is_not_a_result(tmp_path: Path) -> None:
    """An empty file, or one matching no item, exits 1 with what was expected; nothing is written."""
    loaded = load_data("sample", REG, ["TaxCalc", "TaxSum"])
    first_id = loaded.records["TaxCalc"][0].id
    out = tmp_path / "o"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(empty), "--tasks", "TaxCalc,TaxSum", "--out", str(out), "--no-semantic"])
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert f"{empty}: no predictions in the file" in lines
    assert "expected tasks: TaxCalc, TaxSum" in lines
    example = json.dumps({"task": "TaxCalc", "id": first_id, "run": 0, "prediction": "..."}, ensure_ascii=False)
    assert f"expected lines like: {example}" in lines
    assert not out.exists()

    wrong = _write(
        tmp_path / "wrong.jsonl",
        [
            {"task": "TaxCalcc", "id": first_id, "run": 0, "prediction": "1"},
            {"task": "TaxSum", "id": "no-such-id", "run": 0, "prediction": "1"},
            {"task": "Weather", "id": "1", "run": 0, "prediction": "1"},
        ],
    )
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(wrong), "--tasks", "TaxCalc,TaxSum", "--out", str(out), "--no-semantic"])
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert f"{wrong}: none of its 3 predictions is an item of the data" in lines
    assert "task 'TaxCalcc' (1 prediction(s)): not a known task; did you mean 'TaxCalc'?" in lines
    assert "task 'Weather' (1 prediction(s)): not a known task" in lines
    assert any(line.startswith("task 'TaxSum' (1 prediction(s)): ids such as 'no-such-id'") for line in lines)
    assert not out.exists()

    # One matching prediction is a result (the rest score 0 as missing): exit 0.
    one = _write(tmp_path / "one.jsonl", [{"task": "TaxCalc", "id": first_id, "run": 0, "prediction": "1"}])
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(one), "--tasks", "TaxCalc", "--out", str(out), "--no-semantic"])
    assert res.exit_code == 0, res.output


def test_reports_of_failed_items_carry_a_banner_and_no_false_zeros(tmp_path: Path) -> None:
    """Every item errored and the scorer models never loaded: the banner says so at the top of
    report.md, report.html and the terminal summary, and BERTScore reads n/c, not 0.00."""
    loaded = load_data("sample", REG, ["TaxCalc", "TaxQA"], 2)
    rows = [
        {"task": t, "id": r.id, "run": run, "prediction": "", "error": "HTTP 500: internal error"}
        for t, recs in loaded.records.items() for r in recs for run in (0, 1)
    ]  # fmt: skip
    preds = _write(tmp_path / "p.jsonl", rows)
    out = tmp_path / "o"
    res = runner.invoke(
        app,
        ["score", "--data", "sample", "-p", str(preds), "--tasks", "TaxCalc,TaxQA", "--limit", "2", "--out", str(out),
         "--bertscore-model", str(tmp_path / "no-bert"), "--bartscore-model", str(tmp_path / "no-bart")],
        env={"HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert res.exit_code == 6, res.output  # scorer models missing: a partial result nobody chose
    assert "partial: 1 of 14 tasks of the benchmark: TaxQA (not computed: scorer unavailable)" in res.output
    failed = "every prediction failed and score 0 as errors: the scores below measure no model output."
    # One line, its counts all of the benchmark's 14 tasks, with the label shown beside the Overall Average.
    skipped = ("The Overall Average is partial: 1 of 14 tasks of the benchmark computed; 1 scored but not computed "
               "(TaxQA); 12 not scored (TaxRecite, TaxSum, TaxTopic, TaxRead, TaxSCQ, TaxMCQ, TaxBoard, TaxCrime, "
               "TaxOpinion, TaxRisk, TaxInspect, TaxPlan (excluded (--tasks))).")  # fmt: skip
    lines = res.output.splitlines()
    runs = "runs: 2 (runs 0..1), as the predictions hold; --runs N checks them against N"  # said before scoring
    assert lines[:3] == [runs, f"Warning: {failed}", f"Warning: {skipped}"]
    md = (out / "report.md").read_text(encoding="utf-8")
    head = md.split("## Overall Average", 1)[0]
    assert f"> **Warning:** {failed}" in head and f"> **Warning:** {skipped}" in head
    qa = next(line for line in md.splitlines() if "TaxQA" in line and "Generation" in line)
    assert "0.00" not in qa and qa.count("n/c") == 3  # BERTScore, BARTScore, raw BARTScore
    html = (out / "report.html").read_text(encoding="utf-8")
    banner = html.index('id="problem-banner"')
    assert banner < html.index('id="overall-value"')
    assert failed in html[banner : html.index('id="overall-value"')]
    # results.json itself is left as the pipeline wrote it (the report layer decides what shows).
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["meta"]["scorers"]["bertscore"]["available"] is False


def test_clean_results_have_no_banner(tmp_path: Path) -> None:
    loaded = load_data("sample", REG, ["TaxCalc"], 2)
    rows = [{"task": "TaxCalc", "id": r.id, "run": 0, "prediction": str(r.answer)} for r in loaded.records["TaxCalc"]]
    out = tmp_path / "o"
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(_write(tmp_path / "p.jsonl", rows)), "--tasks", "TaxCalc", "--limit", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    # A subset of the benchmark (--tasks): the one banner says so, and nothing else is flagged.
    subset = ("Warning: The Overall Average is partial: 1 of 14 tasks of the benchmark computed; 13 not scored "
              "(TaxRecite, TaxSum, TaxTopic, TaxRead, TaxSCQ, TaxMCQ, TaxQA, TaxBoard, TaxCrime, TaxOpinion, TaxRisk, "
              "TaxInspect, TaxPlan (excluded (--tasks))).")  # fmt: skip
    assert [line for line in res.output.splitlines() if "Warning" in line] == [subset]
    head = (out / "report.md").read_text(encoding="utf-8").split("## Overall Average", 1)[0]
    assert [line for line in head.splitlines() if "Warning" in line] == ["> **" + subset.replace(":", ":**", 1)]


def test_unreachable_hub_is_said_at_once_and_marks_tasks_not_computed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scorer models named by hub id, no HF_HUB_OFFLINE, a hub that refuses connections:
    the command says so before scoring, and the generation tasks are not computed."""
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Set (empty) rather than deleted, so that monkeypatch removes what the command sets.
    monkeypatch.setenv("HF_HUB_OFFLINE", "")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    loaded = load_data("sample", REG, ["TaxQA"], 1)
    rows = [{"task": "TaxQA", "id": r.id, "run": 0, "prediction": "答：按规定申报。"} for r in loaded.records["TaxQA"]]
    out = tmp_path / "o"
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(_write(tmp_path / "p.jsonl", rows)), "--tasks", "TaxQA",
                              "--limit", "1", "--out", str(out)])  # fmt: skip
    assert res.exit_code == 6, res.output  # the scorer models could not be had: partial, nobody chose it
    lines = res.output.splitlines()
    assert any(
        line.startswith(f"The Hugging Face hub (http://127.0.0.1:{port}) did not answer within 3 s")
        and "hfl/chinese-xlnet-base" in line
        for line in lines
    ), res.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["tasks"]["TaxQA"]["status"] == "not_computed"
    assert "local Hugging Face cache" in results["meta"]["scorers"]["bertscore"]["reason"]

    # Already offline: no probe, no message.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(tmp_path / "p.jsonl"), "--tasks", "TaxQA", "--limit", "1", "--out", str(out),
                              "--allow-partial"])  # fmt: skip
    assert res.exit_code == 0 and "did not answer" not in res.output


def _calc_rows(run: int) -> list[dict]:
    data = load_data("sample", REG, ["TaxCalc"])
    return [{"task": "TaxCalc", "id": r.id, "run": run, "prediction": r.answer_text} for r in data.records["TaxCalc"]]


def test_score_reads_every_predictions_file_and_globs(tmp_path: Path) -> None:
    """Repeated --predictions are all read (not only the last), and a glob expands."""
    first = _write(tmp_path / "a" / "p.jsonl", _calc_rows(0))
    second = _write(tmp_path / "b" / "p.jsonl", _calc_rows(1))
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(first), "-p", str(second), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    results = json.loads((tmp_path / "o/results.json").read_text(encoding="utf-8"))
    assert results["meta"]["runs"] == 2
    assert results["meta"]["predictions_file"] == [str(first), str(second)]
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(tmp_path / "*" / "p.jsonl"), "--out", str(tmp_path / "g")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "g/results.json").read_text(encoding="utf-8"))["meta"]["runs"] == 2
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(tmp_path / "*" / "none.jsonl")])
    assert res.exit_code == 1 and "no predictions file matches" in res.output
    # the same item and run in two files is a duplicate, as within one file
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(first), "-p", str(first.with_name("q.jsonl"))])
    assert res.exit_code == 1
    copy = _write(tmp_path / "c" / "p.jsonl", _calc_rows(0))
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(first), "-p", str(copy), "--out", str(tmp_path / "d")])
    assert res.exit_code == 1 and "duplicate" in res.output


def test_a_one_task_file_scores_only_its_task(tmp_path: Path) -> None:
    preds = _write(tmp_path / "p.jsonl", _calc_rows(0))
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(preds), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "scoring TaxCalc" in res.output
    results = json.loads((tmp_path / "o/results.json").read_text(encoding="utf-8"))
    assert list(results["tasks"]) == ["TaxCalc"]
    assert results["tasks"]["TaxCalc"]["score"]["mean"] == 1.0
    # --tasks still decides: the others are scored, as missing
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(preds), "--tasks", "TaxCalc,TaxMCQ",
                              "--out", str(tmp_path / "t")])
    assert res.exit_code == 0, res.output
    tasks = json.loads((tmp_path / "t/results.json").read_text(encoding="utf-8"))["tasks"]
    assert tasks["TaxMCQ"]["error_rate"]["mean"] == 1.0


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["score", "--data", "sample", "-p", "x.jsonl", "--bertscore-layer", "-1"], "--bertscore-layer"),
        (["score", "--data", "sample", "-p", "x.jsonl", "--runs", "0"], "--runs"),
        (["run", "--model", "baseline:oracle", "--data", "sample", "--concurrency", "0"], "--concurrency"),
        (["run", "--model", "baseline:oracle", "--data", "sample", "--runs", "0"], "--runs"),
        (["run", "--model", "baseline:oracle", "--data", "sample", "--profile", "helm"], "--profile"),
        (["run", "--model", "baseline:oracle", "--data", "sample", "--scorer-dtype", "fp16"], "--scorer-dtype"),
        (["run", "--model", "baseline:oracle", "--data", "sample", "--shard", "3"], "--shard"),
        (["run", "--model", "baseline:oracle", "--data", "sample", "--gen-kwargs", "[1]"], "--gen-kwargs"),
        (["run", "--model", "baseline:oracle", "--data", "sample", "--device", "tpu"], "--device"),
        (["run", "--model", "baseline:oracle", "--data", "sample", "--top-p", "1.5"], "--top-p"),
        (["merge", "d", "--data", "sample", "--out", "o", "--bertscore-max-tokens", "0"], "--bertscore-max-tokens"),
    ],
)
def test_out_of_range_option_values_are_refused_when_parsed(argv: list[str], option: str) -> None:
    res = runner.invoke(app, argv, env={"COLUMNS": "200"})
    assert res.exit_code == 2, res.output
    assert option in res.output


@pytest.mark.parametrize(
    ("argv", "code", "said"),
    [
        (["--version"], 0, "taxpraben "),
        (["run", "--model", "baseline:oracle", "--data", "sample", "--runs", "0"], 2, "--runs"),
        (["score", "--data", "sample", "-p", "no-such-file.jsonl"], 1, "cannot read predictions"),
    ],
)
def test_the_executable_exits_with_the_command_s_status(argv: list[str], code: int, said: str, tmp_path: Path) -> None:
    """`python -m taxpraben` (the entry point) ends at once after the command, with its status
    and everything it printed."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "taxpraben", *argv], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, env={**os.environ, "COLUMNS": "200"})  # fmt: skip
    assert done.returncode == code, done.stdout + done.stderr
    assert said in done.stdout + done.stderr


def test_a_command_line_imports_only_the_command_it_names() -> None:
    """`taxpraben run ...` builds the app with `run` alone (its start-up does not import the
    other commands); the full app (help, tests) has every command."""
    import subprocess
    import sys

    from taxpraben.cli import COMMANDS, build_app, named_command

    assert named_command(["run", "--model", "x"]) == "run"
    assert named_command(["--version"]) is None and named_command(["rn"]) is None
    assert named_command([]) is None
    only = build_app("score")
    assert [c.name for c in only.registered_commands] == ["score"]
    assert [c.name for c in build_app().registered_commands] == list(COMMANDS)
    probe = (
        "import sys; from taxpraben.cli import build_app; build_app('run'); "
        "print(','.join(sorted(m for m in sys.modules if m.startswith('taxpraben.commands.'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split(",")
    assert "taxpraben.commands.run" in [m.strip() for m in loaded]
    assert not {"taxpraben.commands.report", "taxpraben.commands.merge", "taxpraben.commands.inspect_data"} & {
        m.strip() for m in loaded
    }


def test_the_first_request_of_run_needs_no_reader_scorer_or_report() -> None:
    """What `taxpraben run` imports before its first request (the command, the bundled specs,
    the first record read and checked, its request built) holds none of the readers (their
    patterns compile at import), the typed results, scoring, the reports or the numeric
    libraries: they load with the first answer, on the scoring thread (start-up, issue 24).
    Nor PyYAML (~10 ms: the bundled specs come from tasks/bundled_specs.json; config.yaml is
    written after generation). A structural check; the time itself is measured by benchmarks/fixed_costs.py."""
    from helpers.probes import probe

    code = (
        "import json, sys\n"
        "from taxpraben.cli import build_app\n"
        "build_app('run')\n"
        "from taxpraben.data.loader import DataStream\n"
        "from taxpraben.jobs.generate import stream_requests\n"
        "from taxpraben.models.base import GenerationConfig\n"
        "from taxpraben.tasks import load_registry\n"
        "registry = load_registry()\n"
        "first = next(stream_requests(DataStream('sample', registry), registry, GenerationConfig(), 1))\n"
        "print(json.dumps([first.record.task, sorted(sys.modules)]))\n"
    )
    task, loaded = probe(code)
    assert task == "TaxRecite"
    heavy = ("taxpraben.parsing.", "taxpraben.scoring.pipeline", "taxpraben.results", "taxpraben.report",
             "taxpraben.metrics.bertscore", "numpy", "cn2an", "sklearn", "torch", "transformers", "jinja2")
    assert [m for m in loaded if m.startswith(heavy)] == []
    assert [m for m in loaded if m == "yaml" or m.startswith("yaml.")] == []


def test_run_sends_its_first_request_before_pydantic_rich_or_importlib_metadata_is_imported(tmp_path: Path) -> None:
    """pydantic (its import and schema building, 0.1 s) loads after `taxpraben run` connects
    to the endpoint: the command line is parsed by typer without it (typer 0.29 coerces every
    option through a pydantic TypeAdapter: pyproject keeps typer below it) and the task specs
    are built without it, checked as the first answers come in. rich (30-40 ms) loads after
    the first request is handed to aiohttp: the consoles are made at their first use and the
    progress bar is shown once the first requests are written; importlib.metadata (10-15 ms)
    loads when the manifest reads the packages' versions (start-up, issue 24). Nor PyYAML
    (~10 ms) nor importlib.resources (~2 ms): the bundled specs are read from their snapshot,
    the package's files found by their path; config.yaml is written after generation. Nor is
    the token estimate's pattern compiled (~1.5 ms): no prompt is estimated before. A
    structural check on a real run against the mock; the time is benchmarks/fixed_costs.py's."""
    from helpers.mock_openai_server import MockConfig, MockServerThread
    from helpers.probes import probe

    code = (
        "import json, sys\n"
        "import aiohttp\n"
        "seen = {}\n"
        "def heavy():\n"
        "    tops = {m.split('.')[0] for m in sys.modules} & {'pydantic', 'pydantic_core', 'annotated_types', 'rich'}\n"
        "    tops |= {m.split('.')[0] for m in sys.modules} & {'yaml'}\n"
        "    return sorted(tops | ({'importlib.metadata', 'importlib.resources'} & set(sys.modules)))\n"
        "def audit(event, args):\n"
        "    if event == 'socket.connect' and 'at_connect' not in seen:\n"
        "        seen['at_connect'] = heavy()\n"
        "sys.addaudithook(audit)\n"
        "request = aiohttp.ClientSession._request\n"
        "async def recorded(self, method, *args, **kwargs):\n"
        "    if method == 'POST' and 'at_first_post' not in seen:\n"
        "        seen['at_first_post'] = heavy()\n"
        "        import taxpraben.costs.tokens as tokens\n"
        "        seen['token_classes_compiled'] = tokens._classes.cache_info().currsize\n"
        "    return await request(self, method, *args, **kwargs)\n"
        "aiohttp.ClientSession._request = recorded\n"
        "from taxpraben.cli import build_app\n"
        "try:\n"
        "    build_app('run')(['run', *sys.argv[1:]])\n"
        "except SystemExit as exc:\n"
        "    seen['exit'] = exc.code\n"
        "seen['at_exit'] = heavy()\n"
        "print(json.dumps(seen))\n"
    )
    with MockServerThread(MockConfig(latency=0.0)) as server:
        seen = probe(code, "--model", "openai:m", "--base-url", server.base_url, "--data", "sample", "--limit", "2",
                     "--runs", "1", "--no-semantic", "--no-cache", "--out", str(tmp_path / "out"))  # fmt: skip
    # Loaded after: the specs checked, the items typed, the bar shown and the summary printed.
    assert seen == {"at_connect": [], "at_first_post": [], "exit": 0, "token_classes_compiled": 0,
                    "at_exit": ["annotated_types", "importlib.metadata", "importlib.resources", "pydantic",
                                "pydantic_core", "rich", "yaml"]}  # fmt: skip


def test_the_tail_of_run_imports_nothing(tmp_path: Path) -> None:
    """What `taxpraben run` needs after its last answer without semantic scoring (scoring five
    runs, the reports, the summary) is imported on the scoring thread while requests go out:
    the tail loads no module (issue 24: scipy.special, 180 ms, and jinja2's compiling of the
    report's template were in it) and builds no validator of the typed results (Results'
    took 15-45 ms). A structural check; the time is benchmarks/fixed_costs.py's."""
    from helpers.probes import probe

    code = (
        "import json, sys\n"
        "import taxpraben.jobs.generate as generate\n"
        "from pydantic._internal._mock_val_ser import MockValSer\n"
        "import taxpraben.results as results\n"
        "def unbuilt():\n"
        "    return {n for n, c in vars(results).items() if isinstance(getattr(c, '__pydantic_validator__', None), MockValSer)}\n"
        "seen = {}\n"
        "score_and_report = generate.score_and_report\n"
        "def recorded(*args, **kwargs):\n"
        "    before, deferred = set(sys.modules), unbuilt()\n"
        "    try:\n"
        "        return score_and_report(*args, **kwargs)\n"
        "    finally:\n"
        "        seen['tail'] = sorted(set(sys.modules) - before)\n"
        "        seen['built'] = sorted(deferred - unbuilt())\n"
        "generate.score_and_report = recorded\n"
        "from taxpraben.cli import build_app\n"
        "try:\n"
        "    build_app('run')(['run', *sys.argv[1:]])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(seen))\n"
    )
    seen = probe(code, "--model", "baseline:first-choice", "--data", "sample", "--no-semantic", "--runs", "5",
                 "--no-cache", "--out", str(tmp_path / "out"))  # fmt: skip
    assert seen == {"tail": [], "built": []}  # nor builds a validator (TAIL_MODELS)
    assert (tmp_path / "out" / "report.html").is_file()


@pytest.mark.parametrize("command", ["score", "report", "tasks"])
def test_ctrl_c_in_any_command_is_said(command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """typer turns Ctrl-C into exit 130 and no word; every command says what happened."""
    from taxpraben.cli import build_app

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    targets = {
        "score": ("taxpraben.commands.score.score_job", ["--predictions", str(tmp_path / "p.jsonl"), "--data", "sample"]),
        "report": ("taxpraben.report.review.attach_review", [str(tmp_path)]),  # the first step of report
        "tasks": ("taxpraben.commands.inspect_data.registry_or_exit", []),
    }
    target, argv = targets[command]
    monkeypatch.setattr(target, interrupted)
    result = CliRunner().invoke(build_app(command), [command, *argv])
    assert result.exit_code == 130
    assert f"Interrupted (Ctrl-C): taxpraben {command} stopped before it finished" in result.output


def test_no_scorer_line_when_no_task_needs_a_scorer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scorers that cannot load are said only when a task scored needs them: exact tasks alone
    never load one (meta.scorers still records them as not available)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache: no scorer loads
    calc = _write(tmp_path / "calc.jsonl", _calc_rows(0))
    out = tmp_path / "exact"
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(calc), "--tasks", "TaxCalc", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]["scorers"]["bertscore"]["available"] is False
    assert "Scorer unavailable" not in res.output
    assert "Scorer unavailable" not in (out / "report.md").read_text(encoding="utf-8")
    loaded = load_data("sample", REG, ["TaxQA"], 1)
    qa = _write(tmp_path / "qa.jsonl", [{"task": "TaxQA", "id": r.id, "run": 0, "prediction": "答：按规定申报。"}
                                        for r in loaded.records["TaxQA"]])  # fmt: skip
    res = runner.invoke(app, ["score", "--data", "sample", "-p", str(qa), "--tasks", "TaxQA", "--limit", "1",
                              "--out", str(tmp_path / "gen")])  # fmt: skip
    # a scorer missing while semantic scoring is on: partial for a reason nobody chose (exit 6)
    assert res.exit_code == 6 and "Scorer unavailable: bertscore: BERTScore model" in res.output


def test_an_out_that_cannot_be_a_directory_is_said_plainly(tmp_path: Path) -> None:
    """--out naming a file, or a place under a file, or one that cannot be written: a
    sentence naming --out and what is wrong, exit 2 (not "[Errno 17] File exists")."""
    calc = _write(tmp_path / "calc.jsonl", _calc_rows(0))
    a_file = tmp_path / "a-file"
    a_file.write_text("", encoding="utf-8")
    for out, said in [
        (a_file, f"--out {a_file}: is a file, not a directory"),
        (a_file / "sub", f"--out {a_file / 'sub'}: {a_file} is a file, so no directory can be made under it"),
    ]:
        res = runner.invoke(app, ["score", "--data", "sample", "-p", str(calc), "--tasks", "TaxCalc", "--no-semantic",
                                  "--out", str(out)])  # fmt: skip
        assert res.exit_code == 2 and said in " ".join(res.output.split()) and "Errno" not in res.output, res.output


@pytest.mark.parametrize(("code", "strerror"), [(13, "Permission denied"), (30, "Read-only file system")])
def test_an_out_that_cannot_be_written_is_said_plainly(tmp_path: Path, code: int, strerror: str) -> None:
    from taxpraben.jobs.common import out_dir_problem

    out = tmp_path / "locked" / "out"
    said = out_dir_problem(out, OSError(code, strerror, str(tmp_path / "locked")))
    assert said == (f"--out {out}: cannot write to {tmp_path / 'locked'} ({strerror}); "
                    "choose a directory you can write to")  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["run", "--output_path", "x"], "No such option: --output_path: use --out DIR (or -o DIR)."),
        (["run", "--output-path", "x"], "No such option: --output-path: use --out DIR (or -o DIR)."),
        (["score", "--log_samples"], "--log_samples: no option needed: every item is always written to OUT/samples.jsonl"),
        (["run", "--batch_size", "8"], "--batch_size: use --concurrency N (requests in flight; hf: prompts per batch)"),
        (["run", "--apply_chat_template"], "--apply_chat_template: hf: the tokenizer's chat template is applied"),
        (["run", "--verbosity", "DEBUG"], "--verbosity: taxpraben has no log level"),
        (["run", "--max_tokens", "5"], "No such option: --max_tokens: use --max-tokens."),
    ],
)
def test_lm_eval_habits_are_answered_with_the_option_to_use(argv: list[str], said: str) -> None:
    res = runner.invoke(app, [*argv, "--model", "baseline:oracle"])
    assert res.exit_code == 2 and said in res.output, res.output
    assert "--top-p" not in res.output  # click's closest spelling of --output-path, dropped


def test_o_is_out_and_the_help_states_defaults_and_extras(tmp_path: Path) -> None:
    out = tmp_path / "o"
    res = runner.invoke(app, ["run", "--model", "baseline:oracle", "--data", "sample", "--limit", "1", "--runs", "1",
                              "--no-semantic", "--no-score", "-o", str(out)])  # fmt: skip
    assert res.exit_code == 0 and (out / "predictions.jsonl").exists(), res.output
    helped = " ".join(runner.invoke(app, ["run", "--help"], env={"COLUMNS": "300"}).output.split())
    assert "default: runs/MODEL-YYYYMMDD-HHMMSS" in helped
    assert "pip install 'taxpraben[wandb]' / 'taxpraben[mlflow]'" in helped


def test_errors_are_not_wrapped_when_piped() -> None:
    """stderr not a terminal: the usage error is one line, not typer's box wrapped at 80."""
    long = "--" + "x" * 150
    res = runner.invoke(app, ["run", long])
    assert res.exit_code == 2
    assert f"Error: No such option: {long}" in res.output.splitlines(), res.output

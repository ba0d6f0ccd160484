"""Sharded runs: the share each shard owns, the merge's checks, and 3 shards + merge = 1 run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from helpers.cli_data import quarterly_calc_rows, scq_rows, write_data
from helpers.mock_openai_server import MockConfig, MockServerThread
from taxpraben.commands.merge import merge
from taxpraben.commands.run import run
from taxpraben.commands.score import score
from taxpraben.results.predictions import Prediction
from taxpraben.run.shards import (
    Shard,
    compact_runs,
    describe_gaps,
    manifest_problems,
    merge_predictions,
    parse_shard,
    shard_of,
)

APP = typer.Typer()
APP.command("run")(run)
APP.command("merge")(merge)
APP.command("score")(score)

# ---------------------------------------------------------------------------- the share


def test_parse_shard_accepts_i_of_n_and_refuses_the_rest() -> None:
    assert parse_shard("2/3") == Shard(2, 3)
    assert parse_shard(" 0 / 1 ") == Shard(0, 1) and Shard(0, 1).whole
    for bad in ("3/3", "1", "-1/3", "0/0", "a/b", "1/2/3"):
        with pytest.raises(ValueError):
            parse_shard(bad)


@pytest.mark.parametrize("count", [2, 3, 7])
def test_every_record_has_exactly_one_shard_and_each_task_is_split_evenly(count: int) -> None:
    sizes = {"TaxCalc": 50, "TaxSCQ": 7, "TaxRead": 1, "TaxMCQ": 13}
    for task, n in sizes.items():
        owners = [[s for s in range(count) if Shard(s, count).owns(task, k)] for k in range(n)]
        assert all(len(o) == 1 for o in owners)  # a partition: no overlap, no gap
        per_shard = [sum(1 for o in owners if o == [s]) for s in range(count)]
        assert max(per_shard) - min(per_shard) <= 1, (task, per_shard)


def test_the_share_is_a_stable_digest_not_python_hash() -> None:
    # Recomputed here from the documented rule: blake2b(task, 8 bytes) big-endian mod N.
    offset = int.from_bytes(hashlib.blake2b(b"TaxCalc", digest_size=8).digest(), "big") % 5
    assert [shard_of("TaxCalc", k, 5) for k in range(5)] == [(k + offset) % 5 for k in range(5)]
    # Other processes, with other string-hash seeds, compute the same share.
    code = "from taxpraben.run.shards import shard_of; print([shard_of('TaxQA', k, 3) for k in range(9)])"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "random")
    }
    assert outputs == {str([shard_of("TaxQA", k, 3) for k in range(9)]) + "\n"}


# ---------------------------------------------------------------------------- the merge


def _p(task: str, item: str, run: int, text: str) -> Prediction:
    return Prediction(task=task, id=item, run=run, prediction=text)


def test_merge_finds_overlaps_gaps_and_keeps_identical_repeats_once() -> None:
    expected = {"TaxCalc": ["0", "1", "2", "3"], "TaxSCQ": ["a"]}
    a = [_p("TaxCalc", "0", 0, "x"), _p("TaxCalc", "1", 0, "y"), _p("TaxSCQ", "a", 0, "z")]
    b = [_p("TaxCalc", "1", 0, "y"), _p("TaxCalc", "0", 0, "other"), _p("TaxCalc", "3", 1, "w")]
    result = merge_predictions([("a", a), ("b", b)], expected, range(2))
    assert result.overlaps == {("TaxCalc", "0", 0): ["a", "b"]}
    assert result.repeated == 1
    assert [p.key for p in result.predictions] == [
        ("TaxCalc", "0", 0), ("TaxCalc", "1", 0), ("TaxSCQ", "a", 0), ("TaxCalc", "3", 1)
    ]  # fmt: skip
    assert result.gaps == [
        ("TaxCalc", "2", 0), ("TaxCalc", "3", 0),
        ("TaxCalc", "0", 1), ("TaxCalc", "1", 1), ("TaxCalc", "2", 1),
        ("TaxSCQ", "a", 1),
    ]  # fmt: skip


def test_gaps_are_listed_as_spans_of_records_missing_the_same_runs() -> None:
    expected = {"TaxCalc": [str(i) for i in range(10)], "TaxSCQ": ["a", "b"]}
    gaps = [("TaxCalc", str(i), r) for i in (2, 3, 4) for r in range(5)]
    gaps += [("TaxCalc", str(i), r) for i in (7, 9) for r in range(5)]
    gaps += [("TaxCalc", "5", 3), ("TaxSCQ", "b", 0), ("TaxSCQ", "b", 1)]
    assert describe_gaps(gaps, expected) == [
        "TaxCalc runs 0-4: 5 records: 2..4, 7, 9",
        "TaxCalc run 3: 1 record: 5",
        "TaxSCQ runs 0-1: 1 record: b",
    ]
    every_third = [("TaxCalc", str(i), 0) for i in range(0, 10, 3)]
    assert describe_gaps(every_third, expected, max_spans=3) == ["TaxCalc run 0: 4 records: 0, 3, 6, ..."]
    assert compact_runs([0, 1, 2, 4, 6, 7]) == "runs 0-2,4,6-7"


def test_manifests_name_missing_repeated_and_foreign_shards() -> None:
    def manifest(index: int, model: str = "openai:m") -> dict[str, object]:
        return {"shard": {"index": index, "count": 4}, "model": model, "runs": 2}

    problems = manifest_problems(
        {"s0": manifest(0), "s1": manifest(1), "s1b": manifest(1), "s3": manifest(3, "openai:n")}
    )
    assert problems == [
        "s3: model 'openai:n' differs from s0: 'openai:m'",
        "shard 1/4 given 2 times: s1, s1b",
        "shard(s) 2/4 not given: rerun them (same command, --shard I/4)",
    ]
    assert manifest_problems({f"s{i}": manifest(i) for i in range(4)}) == []


# ---------------------------------------------------------------------------- end to end

TAXCALC = quarterly_calc_rows(10)
TAXSCQ = scq_rows(5)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return write_data(tmp_path / "data", {"TaxCalc": TAXCALC, "TaxSCQ": TAXSCQ})


def invoke(*args: str) -> tuple[int, str]:
    # Wide, so that messages are not wrapped across the error box's lines (whatever COLUMNS is)
    result = CliRunner().invoke(APP, list(args), catch_exceptions=False, env={"COLUMNS": "200"})
    return result.exit_code, result.output


def _owned(index: int, count: int) -> set[tuple[str, str]]:
    """The records of shard ``index`` by the documented rule, recomputed here."""
    owned = set()
    for task, rows in (("TaxCalc", TAXCALC), ("TaxSCQ", TAXSCQ)):
        offset = int.from_bytes(hashlib.blake2b(task.encode(), digest_size=8).digest(), "big") % count
        owned |= {(task, row["id"]) for k, row in enumerate(rows) if (k + offset) % count == index}
    return owned


def _predictions(path: Path) -> list[tuple[str, str, int, str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [(r["task"], r["id"], r["run"], r["prediction"]) for r in rows]


def _scores(out: Path) -> dict[str, object]:
    """The figures, with each ledger's generations counted whether made here or taken from
    the cache (a shard rerun takes from the cache what the whole run made)."""
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    figures = {k: results[k] for k in ("tasks", "groups", "overall", "ledger")}
    for ledger in [figures["ledger"], *(t["ledger"] for t in figures["tasks"].values())]:
        made, cached = ledger.pop("generated"), ledger.pop("from_cache")
        ledger["all"] = {k: (made[k] or 0) + (cached[k] or 0) for k in made}
    return figures


def test_three_shards_then_merge_equal_one_unsharded_run(data_dir: Path, tmp_path: Path) -> None:
    runs = 3
    with MockServerThread(MockConfig()) as server:
        common = ["--model", "openai:m", "--base-url", server.base_url, "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ",
                  "--runs", str(runs), "--temperature", "0.7", "--no-semantic"]  # fmt: skip
        code, output = invoke("run", *common, "--out", str(tmp_path / "whole"),
                              "--cache", str(tmp_path / "whole.sqlite"))  # fmt: skip
        assert code == 0, output
        unsharded_requests = server.stats.requests

        server.stats.requests = 0
        shard_dirs = [tmp_path / f"shard{i}" for i in range(3)]
        for i, shard_dir in enumerate(shard_dirs):
            code, output = invoke("run", *common, "--shard", f"{i}/3", "--no-score",
                                  "--out", str(shard_dir), "--cache", str(tmp_path / f"c{i}.sqlite"))  # fmt: skip
            assert code == 0, output
            assert not (shard_dir / "results.json").exists()
        assert server.stats.requests == unsharded_requests == 15 * runs  # none paid twice

        # A shard rerun resumes from its cache: nothing is sent, the same predictions.
        before = _predictions(shard_dirs[1] / "predictions.jsonl")
        code, output = invoke("run", *common, "--shard", "1/3", "--out", str(shard_dirs[1]),
                              "--cache", str(tmp_path / "c1.sqlite"))  # fmt: skip
        assert code == 0, output
        assert server.stats.requests == unsharded_requests
        assert _predictions(shard_dirs[1] / "predictions.jsonl") == before
        partial = json.loads((shard_dirs[1] / "results.json").read_text(encoding="utf-8"))
        n1 = len(_owned(1, 3))
        assert partial["meta"]["shard"] == {"index": 1, "count": 3, "records": n1, "partial": True}
        assert sum(t["n"] for t in partial["tasks"].values()) == n1

    shares = [{(t, i) for t, i, _, _ in _predictions(d / "predictions.jsonl")} for d in shard_dirs]
    assert shares == [_owned(i, 3) for i in range(3)]
    for i, shard_dir in enumerate(shard_dirs):  # every run of each record it owns
        assert len(_predictions(shard_dir / "predictions.jsonl")) == runs * len(shares[i])

    merged = tmp_path / "merged"
    code, output = invoke("merge", *map(str, shard_dirs), "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ",
                          "--out", str(merged), "--no-semantic")  # fmt: skip
    assert code == 0, output
    whole = tmp_path / "whole"
    assert _predictions(merged / "predictions.jsonl") == _predictions(whole / "predictions.jsonl")
    assert _scores(merged) == _scores(whole)
    def samples(out: Path) -> list[dict[str, object]]:  # where each answer came from aside
        lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
        return [{k: v for k, v in json.loads(line).items() if k != "cached"} for line in lines]

    assert samples(merged) == samples(whole)
    meta = json.loads((merged / "results.json").read_text(encoding="utf-8"))["meta"]
    assert [s["index"] for s in meta["merged_from"]["shards"]] == [0, 1, 2]
    assert meta["runs"] == runs and meta["model"] == "openai:m"


def test_merge_prices_and_judges_as_score_does(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """merge takes --pricing and --judge as score does: merging the shards gives the cost,
    the judge's readings and the figures that scoring the whole run's predictions gives."""
    monkeypatch.setenv("TAXPRABEN_CACHE", str(tmp_path / "judge.sqlite"))  # where score and merge keep the judge's
    pricing = tmp_path / "prices.yaml"
    pricing.write_text("currency: USD\nmodels:\n  m: {input: 2.0, output: 8.0}\n", encoding="utf-8")

    def unread_scq(body: dict[str, object]) -> str | None:  # TaxSCQ unread by the rules: the judge's work
        text = "".join(str(m.get("content")) for m in body["messages"])  # type: ignore[attr-defined]
        return "这道题我不会。" if "增值税一般税率" in text else None

    with MockServerThread(MockConfig(reply_of=unread_scq)) as model, MockServerThread(MockConfig(fixed_reply="A")) as judge:
        common = ["--model", "openai:m", "--base-url", model.base_url, "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--runs", "2",
                  "--no-semantic", "--no-score"]  # fmt: skip
        code, output = invoke("run", *common, "--out", str(tmp_path / "whole"), "--cache", str(tmp_path / "w.sqlite"))
        assert code == 0, output
        dirs = [tmp_path / f"shard{i}" for i in range(2)]
        for i, shard_dir in enumerate(dirs):  # each with a cache of its own: paid for, as the whole was
            code, output = invoke("run", *common, "--shard", f"{i}/2", "--out", str(shard_dir),
                                  "--cache", str(tmp_path / f"s{i}.sqlite"))  # fmt: skip
            assert code == 0, output
        scoring = ["--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--no-semantic", "--pricing", str(pricing),
                   "--judge", "openai:mock", "--judge-base-url", judge.base_url,
                   "--judge-api-key-env", "JUDGE_KEY"]  # its own key: the generation's is not sent to its endpoint
        code, output = invoke("score", "--predictions", str(tmp_path / "whole" / "predictions.jsonl"),
                              "--out", str(tmp_path / "scored"), *scoring)  # fmt: skip
        assert code == 0, output
        asked = judge.stats.requests
        assert asked == len(TAXSCQ)  # one per TaxSCQ item: both runs gave the same answer
        code, output = invoke("merge", *map(str, dirs), "--out", str(tmp_path / "merged"), *scoring)
        assert code == 0, output
        assert judge.stats.requests == asked  # the same requests: from the cache
    scored, merged = (json.loads((tmp_path / d / "results.json").read_text(encoding="utf-8"))
                      for d in ("scored", "merged"))  # fmt: skip
    assert merged["meta"]["pricing"] == scored["meta"]["pricing"] and scored["meta"]["pricing"]["entry"] == "m"
    assert merged["ledger"]["generated"]["cost"] == scored["ledger"]["generated"]["cost"] > 0
    assert merged["meta"]["judge"]["requests"] == scored["meta"]["judge"]["requests"] == asked
    assert merged["meta"]["judge"]["from_cache"] == asked and scored["meta"]["judge"]["sent"] == asked
    for task in ("TaxCalc", "TaxSCQ"):
        assert merged["tasks"][task]["score"] == scored["tasks"][task]["score"]
        assert merged["tasks"][task].get("judge", {}).get("decided") == scored["tasks"][task].get("judge", {}).get("decided")
    assert merged["overall"] == scored["overall"]


def test_merge_refuses_gaps_and_overlaps_and_force_scores_gaps_as_errors(
    data_dir: Path, tmp_path: Path
) -> None:
    with MockServerThread(MockConfig()) as server:
        common = ["--model", "openai:m", "--base-url", server.base_url, "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ",
                  "--runs", "2", "--no-semantic", "--no-score"]  # fmt: skip
        dirs = [tmp_path / f"shard{i}" for i in range(3)]
        for i, d in enumerate(dirs[:2]):
            code, output = invoke("run", *common, "--shard", f"{i}/3", "--out", str(d),
                                  "--cache", str(tmp_path / f"c{i}.sqlite"))  # fmt: skip
            assert code == 0, output
    args = ["--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--no-semantic"]
    # Shard 2 never ran: refused, naming the shard and the records it owned.
    code, output = invoke("merge", str(dirs[0]), str(dirs[1]), *args, "--out", str(tmp_path / "m"))
    assert code == 1
    assert "shard(s) 2/3 not given" in output
    assert not (tmp_path / "m").exists()
    code, output = invoke("merge", str(dirs[0]), str(dirs[1]), *args, "--force", "--out", str(tmp_path / "m"))
    assert code == 0, output
    missing = len(_owned(2, 3))
    assert f"{missing * 2} of 30 items (data x 2 run(s)) have no prediction" in output
    samples = [json.loads(s) for s in (tmp_path / "m" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sum(1 for s in samples if s["status"] == "error") == missing * 2
    meta = json.loads((tmp_path / "m" / "results.json").read_text(encoding="utf-8"))["meta"]
    assert meta["merged_from"]["gaps"] == missing * 2 and meta["merged_from"]["forced"] is True

    # A merge of another selection than the shards' is refused.
    code, output = invoke("merge", str(dirs[0]), str(dirs[1]), *args, "--tasks", "TaxCalc", "--out", str(tmp_path / "t"))
    assert code == 1
    assert f"{dirs[0]} was run with tasks ['TaxCalc', 'TaxSCQ']; this merge has ['TaxCalc']" in output

    # A copy of shard 0 with one prediction changed overlaps it: refused even with --force.
    rogue = tmp_path / "rogue.jsonl"
    rows = [json.loads(line) for line in (dirs[0] / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[0]["prediction"] = "不同的答案"
    rogue.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    code, output = invoke("merge", str(dirs[0]), str(rogue), *args, "--force", "--out", str(tmp_path / "o"))
    assert code == 1
    assert "1 item(s) predicted differently by several sources" in output
    assert f"{rows[0]['task']}/{rows[0]['id']}/run {rows[0]['run']}: {dirs[0]}, {rogue}" in output


def test_a_bad_shard_is_refused_before_anything_runs(data_dir: Path, tmp_path: Path) -> None:
    code, output = invoke("run", "--model", "baseline:oracle", "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ",
                          "--shard", "3/3", "--out", str(tmp_path / "o"))  # fmt: skip
    assert code == 2 and "expected I/N with N >= 1 and 0 <= I < N" in output
    assert not (tmp_path / "o").exists()


def test_unsharded_run_writes_no_manifest_and_no_shard_meta(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    code, output = invoke("run", "--model", "baseline:oracle", "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ", "--runs", "1",
                          "--no-semantic", "--out", str(out))  # fmt: skip
    assert code == 0, output
    assert not (out / "shard.json").exists()
    assert "shard" not in json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]
    shutil.rmtree(out)


# ---------------------------------------------------------------------------- the Slurm scripts

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _sbatch_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a Slurm job: ``taxpraben`` on PATH (this tree's sources)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "taxpraben"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m taxpraben "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    src = str(Path(__file__).resolve().parent.parent / "src")
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
        **extra,
    }


def test_the_documented_slurm_scripts_shard_and_merge_a_run(data_dir: Path, tmp_path: Path) -> None:
    shard_script, merge_script = DOCS / "slurm" / "taxpraben-shard.sbatch", DOCS / "slurm" / "taxpraben-merge.sbatch"
    guide = (DOCS / "scaling.md").read_text(encoding="utf-8")
    for script in (shard_script, merge_script):  # the guide shows the scripts as they are
        assert script.read_text(encoding="utf-8") in guide
    assert "#SBATCH --array=0-2" in shard_script.read_text(encoding="utf-8")
    run_dir = tmp_path / "runs" / "m"
    with MockServerThread(MockConfig()) as server:
        common = {"MODEL": "openai:m", "BASE_URL": server.base_url, "DATA": str(data_dir),
                  "RUNS": "2", "RUN_DIR": str(run_dir), "OPENAI_API_KEY": "sk-test",
                  "EXTRA_ARGS": "--tasks TaxCalc,TaxSCQ"}  # fmt: skip
        # What Slurm does for --array=0-2: three tasks, with their index and the array's size.
        for i in range(3):
            env = _sbatch_env(tmp_path, **common, SLURM_ARRAY_TASK_ID=str(i), SLURM_ARRAY_TASK_COUNT="3")
            done = subprocess.run(["bash", str(shard_script)], env=env, capture_output=True, text=True, cwd=tmp_path)
            assert done.returncode == 0, done.stdout + done.stderr
        sent = server.stats.requests
        env = _sbatch_env(tmp_path, **common, DEVICE="cpu", MERGE_ARGS="--no-semantic --tasks TaxCalc,TaxSCQ")
        done = subprocess.run(["bash", str(merge_script)], env=env, capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        # One unsharded job with the same settings (its own cache), for comparison.
        code, output = invoke("run", "--model", "openai:m", "--base-url", server.base_url, "--data", str(data_dir), "--tasks", "TaxCalc,TaxSCQ",
                              "--runs", "2", "--no-semantic", "--out", str(tmp_path / "whole"),
                              "--cache", str(tmp_path / "whole.sqlite"))  # fmt: skip
        assert code == 0, output
    assert sent == 15 * 2  # every (record, run) sent once over the three shards
    assert _predictions(run_dir / "merged" / "predictions.jsonl") == _predictions(tmp_path / "whole" / "predictions.jsonl")
    assert _scores(run_dir / "merged") == _scores(tmp_path / "whole")
    assert sorted(p.name for p in (run_dir / "cache").iterdir() if p.suffix == ".sqlite") == [
        "shard-0.sqlite", "shard-1.sqlite", "shard-2.sqlite"
    ]  # fmt: skip

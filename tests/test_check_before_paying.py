"""Check before paying (issue 45, item 7): ``run`` validates every record of every task it
will send before the first request; the message and the exit status are those of a bad
record found while sending (exit 1, the file, the line and the field named)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from helpers.mock_openai_server import MockConfig, MockServerThread
from taxpraben.cli import build_app
from taxpraben.data.files import sample_data_dir


def test_a_record_without_answer_stops_the_run_before_any_request(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_data_dir(), data)
    plan = data / "TaxPlan.jsonl"  # the last task sent: today's stream would have sent every other first
    lines = plan.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    del record["answer"]
    lines[1] = json.dumps(record, ensure_ascii=False)
    plan.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with MockServerThread(MockConfig()) as server:
        result = CliRunner().invoke(
            build_app(), ["run", "--model", "openai:mock", "--base-url", server.base_url, "--data", str(data),
                          "--runs", "1", "--no-semantic", "--no-cache", "--concurrency", "1",
                          "--out", str(tmp_path / "out")],
            env={"COLUMNS": "200", "OPENAI_API_KEY": "sk-test"},
        )  # fmt: skip
        sent = server.stats.requests
    output = " ".join(result.output.split())
    assert result.exit_code == 1, output
    assert "TaxPlan.jsonl" in output and "answer" in output and ":2" in output
    assert sent == 0
    assert not (tmp_path / "out" / "predictions.jsonl").exists()

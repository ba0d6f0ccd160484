"""Secrets and escaping (issue 7, item 7).

Keys from the environment never reach results, logs, reports or the cache: a run whose
endpoint echoes the key back in its error messages, with the key in ``OPENAI_API_KEY`` and
in a variable named by ``--api-key-env``, is grepped file by file (every file it wrote, its
stdout and stderr). And every output is escaped for its format: model output full of
Markdown pipes, HTML and JSON-breaking characters leaves valid JSON, Markdown tables whose
rows keep their column count, and HTML with no live markup from the model.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from aiohttp import web

from helpers.mock_openai_server import MockConfig, MockServerThread

KEY = "sk-test-7f3a9c1e5b2d4a6f8e0c2b4d6f8a0c2e"
OTHER_KEY = "tok-custom-c0ffee00deadbeef1234"
#: Model output that breaks every format it is not escaped for.
NASTY = (
    '答案：B | 增值税 |\n| --- |\n</script><script>alert("x")</script><img src=x onerror=alert(1)>'
    '<!-- \u2028 "quoted" \\ back\\slash {"答案": "企业所得税"} & &amp; ]]> `code`'
)


class EchoServer:
    """An OpenAI-style endpoint that puts the Authorization header into its error messages,
    as badly behaved proxies do: 1 request in 3 fails with 500 (retried), 1 in 7 with 400."""

    def __init__(self) -> None:
        self.count = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def chat(self, request: web.Request) -> web.Response:
        self.count += 1
        auth = request.headers.get("Authorization", "")
        body = await request.json()
        if self.count % 7 == 0:
            return web.json_response({"error": {"message": f"bad request with {auth}"}}, status=400)
        if self.count % 3 == 0:
            return web.Response(status=500, text=f"upstream rejected key {auth.split()[-1]}")
        return web.json_response(
            {"choices": [{"message": {"role": "assistant", "content": NASTY}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": len(body["messages"][0]["content"]), "completion_tokens": 9}}
        )  # fmt: skip

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def __enter__(self) -> EchoServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.runner is not None
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def taxpraben(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taxpraben", *args],
        capture_output=True, text=True, timeout=120, env=env, cwd=cwd,
    )  # fmt: skip


def every_file(*roots: Path) -> Iterator[Path]:
    for root in roots:
        if root.is_file():
            yield root
        elif root.is_dir():
            yield from (p for p in root.rglob("*") if p.is_file())


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TAXPRABEN_"))}
    env.update(OPENAI_API_KEY=KEY, MY_GATEWAY_KEY=OTHER_KEY, HOME=str(tmp_path / "home"), NO_COLOR="1")
    return env


@pytest.mark.parametrize("key_env", [None, "MY_GATEWAY_KEY"])
def test_keys_never_reach_results_logs_reports_or_cache(
    key_env: str | None, env: dict[str, str], tmp_path: Path
) -> None:
    out, cache = tmp_path / "out", tmp_path / "cache" / "c.sqlite"
    with EchoServer() as server:
        args = [
            "run", "--model", "openai:echo", "--base-url", f"http://127.0.0.1:{server.port}/v1",
            "--data", "sample", "--tasks", "TaxCalc,TaxSCQ,TaxInspect", "--runs", "2",
            "--no-semantic", "--max-retries", "2", "--cache", str(cache), "--out", str(out),
            "--allow-failures",
        ]  # fmt: skip
        if key_env:
            args += ["--api-key-env", key_env]
        done = taxpraben(args, env, tmp_path)
        assert done.returncode == 0, done.stderr
        # The server did see the key, and said it back in its errors.
        assert server.count > 0
    report = taxpraben(["report", str(out)], env, tmp_path)
    assert report.returncode == 0, report.stderr
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "stdout.txt").write_text(done.stdout + report.stdout, encoding="utf-8")
    (logs / "stderr.txt").write_text(done.stderr + report.stderr, encoding="utf-8")

    errors = [json.loads(line).get("error") for line in (out / "predictions.jsonl").open(encoding="utf-8")]
    assert any(e and "bad request with Bearer ***" in e for e in errors)  # scrubbed, still useful
    files = list(every_file(out, cache.parent, logs, tmp_path / "home"))
    assert {"results.json", "samples.jsonl", "predictions.jsonl", "report.md", "report.html"} <= {
        f.name for f in files
    }
    assert any(f.name.startswith("c.sqlite") for f in files)
    for needle in {KEY, OTHER_KEY, KEY[8:24], OTHER_KEY[11:27]}:
        leaked = [str(f) for f in files if needle.encode() in f.read_bytes()]
        assert leaked == [], f"{needle!r} found in {leaked}"


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def test_every_output_is_escaped_for_its_format(env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    config = MockConfig(fixed_reply=NASTY)
    with MockServerThread(config) as server:
        done = taxpraben(
            ["run", "--model", "openai:m|o<b>del", "--base-url", server.base_url, "--data", "sample",
             "--runs", "2", "--no-semantic", "--cache", str(tmp_path / "c.sqlite"), "--out", str(out)],
            env, tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr

    # JSON: every file parses, and the model output survives the round trip unchanged.
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["meta"]["model"] == "openai:m|o<b>del"
    for name in ("samples.jsonl", "predictions.jsonl"):
        rows = [json.loads(line) for line in (out / name).open(encoding="utf-8")]
        assert rows and all(r["prediction"] == NASTY for r in rows)

    # Markdown: no raw HTML from the model; every table row has its header's column count.
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "<script" not in md and "<b>" not in md and "<img" not in md
    table: int | None = None
    for line in md.splitlines():
        if not line.startswith("|"):
            table = None
            continue
        cells = len(re.findall(r"(?<!\\)\|", line)) - 1
        if table is None:
            table = cells
        assert cells == table, f"row with {cells} cells under a header of {table}: {line}"

    # HTML: the model's markup is text, never tags, attributes or script.
    html = (out / "report.html").read_text(encoding="utf-8")
    parser = _Markup()
    parser.feed(html)
    assert not [t for t, _ in parser.tags if t in ("img", "b")]
    assert all(not (name.startswith("on")) for _, attrs in parser.tags for name, _ in attrs)
    for script in parser.scripts:  # the report's own inline data and code
        assert "</script" not in script.lower() and "<img" not in script
    assert "alert(" in html  # the text is there, escaped
    assert "<script>alert" not in html and "<img src=x" not in html

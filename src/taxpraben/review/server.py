"""The review page's local web server (standard library only), on 127.0.0.1 and nowhere else.

Routes: ``GET /`` the page; ``GET /api/state`` the progress and every verdict so far;
``GET /api/reading/N`` what the page shows of reading N; ``POST /api/verdict`` with
``{"index", "verdict", "answer"}`` records a verdict (appended to review.jsonl before the
reply). Requests naming another host than the server's own address are refused (a page of
another site cannot reach it by DNS rebinding), and a verdict must be sent as JSON (which a
cross-site form cannot do). The page itself: every text of an output is put on it with
``textContent``, and its Content-Security-Policy runs only its own script.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import threading
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import TYPE_CHECKING, cast

from taxpraben.review.session import Session, VerdictError

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONValue

HOST = "127.0.0.1"


@cache
def asset(name: str) -> str:
    return (resources.files("taxpraben.review") / "templates" / name).read_text(encoding="utf-8")


def content_security_policy(script: str) -> str:
    """Only ``script`` (by its hash) runs; the page may fetch from its own server alone."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; connect-src 'self'; "
            "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")  # fmt: skip


def page(label: str) -> str:
    """The review page (its data is fetched from the API; its Content-Security-Policy is sent
    as a header, :func:`content_security_policy`)."""
    script = asset("review.js")
    return (asset("review.html")
            .replace("{{label}}", html.escape(label).replace("{", "&#123;"))
            .replace("{{css}}", asset("review.css"))
            .replace("{{script}}", script))  # fmt: skip


def handler_for(session: Session, lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    """A request handler bound to ``session`` (verdicts recorded one at a time under ``lock``)."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "taxpraben-review"

        def log_message(self, format: str, *args: object) -> None:
            pass  # the terminal shows the URL and the progress, not every request

        def _send(self, status: int, body: str, content_type: str = "application/json") -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            if content_type == "text/html":
                self.send_header("Content-Security-Policy", content_security_policy(asset("review.js")))
            self.end_headers()
            self.wfile.write(data)

        def _json(self, status: int, payload: JSONValue) -> None:
            self._send(status, json.dumps(payload, ensure_ascii=False))

        def _host_ok(self) -> bool:
            port = cast("tuple[str, int]", self.server.server_address)[1]  # typeshed: any address family
            if self.headers.get("Host") in (f"{HOST}:{port}", f"localhost:{port}"):
                return True
            self._json(403, {"error": "this server answers only requests to its own address"})
            return False

        def do_GET(self) -> None:
            if not self._host_ok():
                return
            path = self.path.split("?", 1)[0]
            if path == "/":
                self._send(200, page(session.label), "text/html")
            elif path == "/api/state":
                self._json(200, session.state())
            elif path.startswith("/api/reading/") and path.rsplit("/", 1)[1].isdigit():
                try:
                    self._json(200, session.reading(int(path.rsplit("/", 1)[1])))
                except VerdictError as exc:
                    self._json(404, {"error": str(exc)})
            else:
                self._json(404, {"error": f"no such page: {path}"})

        def do_POST(self) -> None:
            if not self._host_ok():
                return
            if self.path != "/api/verdict":
                self._json(404, {"error": f"no such page: {self.path}"})
                return
            if self.headers.get_content_type() != "application/json":
                self._json(415, {"error": "send the verdict as application/json"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(min(length, 1 << 20)) or b"{}")
                index, verdict, answer = body["index"], body["verdict"], body.get("answer")
                if not isinstance(index, int) or (answer is not None and not isinstance(answer, str)):
                    raise VerdictError("index must be an integer and answer a string or null")
                with lock:
                    self._json(200, session.record(index, verdict, answer))
            except (ValueError, KeyError, TypeError) as exc:
                self._json(400, {"error": f"not a verdict: {exc}"})

    return Handler


def make_server(session: Session, port: int = 0) -> ThreadingHTTPServer:
    """A server for ``session`` on 127.0.0.1:``port`` (0: a free port); not started
    (``serve_forever``). OSError when the port is taken."""
    server = ThreadingHTTPServer((HOST, port), handler_for(session, threading.Lock()))
    server.daemon_threads = True
    return server


def url_of(server: ThreadingHTTPServer) -> str:
    return f"http://{HOST}:{server.server_address[1]}/"

"""``report.html``: one self-contained page (inline CSS, SVG and script; no network).

Safety: Jinja autoescapes every value; sample data travels as escaped JSON in a
``<script type="application/json">`` block and is put on the page with ``textContent``; and a
Content-Security-Policy allows only the page's own script (by its hash) and no network at all,
so even a mistake elsewhere could not run a model's ``<script>`` or ``onerror``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from taxpraben import __version__
from taxpraben.report import plots, tables
from taxpraben.report.load import model_label, ordered_tasks
from taxpraben.report.samples import COMPRESS_ABOVE, browser_payload, embedded_samples


@cache
def asset(name: str) -> str:
    return (resources.files("taxpraben.report") / "templates" / name).read_text(encoding="utf-8")


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("taxpraben.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def content_security_policy(script: str) -> str:
    """A policy that runs only ``script`` (by hash) and loads nothing from anywhere."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        "default-src 'none'; "
        f"script-src 'sha256-{digest}'; "
        "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    )


def render_html(
    results: dict[str, Any],
    samples: Sequence[dict[str, Any]],
    *,
    label: str | None = None,
    compress_above: int | None = COMPRESS_ABOVE,
) -> str:
    """The whole report.html for one result directory (samples embedded for the browser)."""
    label = label or model_label(results)
    meta = results.get("meta") or {}
    task_order = [row.name for row in ordered_tasks(results)]
    payload = browser_payload(samples, task_order)
    script = asset("report.js")
    note = (
        f"Texts longer than {payload['limits']['prediction']} characters are cut in this page "
        "(the full texts are in samples.jsonl)."
    )
    if not samples:
        note = "samples.jsonl was not found: there is nothing to browse."
    template = environment().get_template("report.html.j2")
    return template.render(
        title=f"TaxPraBen report: {label}",
        label=label,
        version=__version__,
        profile=meta.get("profile") or "?",
        data_hash=meta.get("data_hash") or "?",
        n_tasks=len(results.get("tasks", {})),
        overall=tables.overall_summary(results),
        banner=tables.problem_banner(results),
        paper=tables.paper_table(results),
        groups=tables.group_tables(results),
        failures=tables.failure_table(results),
        fields=tables.field_table(results),
        per_run=tables.per_run_table(results),
        config=tables.configuration(results),
        plot_tasks=plots.task_bars(results),
        plot_radar=plots.bloom_radar(results),
        plot_failures=plots.failure_bars(results),
        plot_distributions=plots.score_distributions(results, samples),
        sample_tasks=payload["tasks"],
        sample_note=note,
        sample_json=embedded_samples(payload, compress_above=compress_above),
        css=Markup(asset("report.css")),
        script=Markup(script),
        csp=content_security_policy(script),
    )

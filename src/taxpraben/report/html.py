"""``report.html``: one self-contained page (inline CSS, SVG and script; no network).

Safety: Jinja autoescapes every value; sample data travels as escaped JSON in a
``<script type="application/json">`` block and is put on the page with ``textContent``; and a
Content-Security-Policy allows only the page's own script (by its hash) and no network at all,
so even a mistake elsewhere could not run a model's ``<script>`` or ``onerror``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import uuid
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import TextIO

import jinja2
from markupsafe import Markup

from taxpraben.manifest import package_version
from taxpraben.report import plots, tables
from taxpraben.report.review import (
    agreement_text,
    corrected_text,
    review_banner,
    review_lines,
    review_table,
)
from taxpraben.report.samples import (
    COMPRESS_ABOVE,
    PREDICTION_LIMIT,
    BrowserData,
    script_json,
    write_embedded,
)
from taxpraben.report.view import RunView, as_view
from taxpraben.results import Results, Sample


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


def prepare() -> None:
    """Compile the report's template and read its assets now (``run`` does it on the scoring
    thread while requests go out: jinja2's parsing and compiling took ~20 ms of the tail)."""
    environment().get_template("report.html.j2")
    for name in ("report.js", "report.css"):
        asset(name)


def content_security_policy(script: str) -> str:
    """A policy that runs only ``script`` (by hash) and loads nothing from anywhere."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        "default-src 'none'; "
        f"script-src 'sha256-{digest}'; "
        "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    )


def review_parts(results: Results) -> dict[str, object]:
    """The template's human review values (all empty without a review)."""
    human = results.review
    keys = sorted({(d["task"], str(d["id"])) for d in human.disagreements}) if human is not None else []
    return {
        "human": human, "human_banner": review_banner(results), "human_table": review_table(results),
        "human_lines": review_lines(results)[1:], "review_keys": script_json([list(k) for k in keys]),
        "human_agreement": agreement_text(human.overall) if human is not None else "",
        "human_corrected": corrected_text(human.corrected_overall) if human is not None else "",
    }  # fmt: skip


def render_html(
    run: RunView | Results,
    samples: Iterable[Sample] | None = None,
    *,
    label: str | None = None,
    compress_above: int | None = COMPRESS_ABOVE,
) -> str:
    """The whole report.html for one result directory (samples embedded for the browser)."""
    out = io.StringIO()
    write_html(out, run, samples, label=label, compress_above=compress_above)
    return out.getvalue()


def write_html(
    out: TextIO,
    run: RunView | Results,
    samples: Iterable[Sample] | BrowserData | None = None,
    *,
    label: str | None = None,
    compress_above: int | None = COMPRESS_ABOVE,
) -> None:
    """:func:`render_html` written into ``out`` as it is produced.

    ``run``: the run's view, or its results as loaded; ``label`` overrides the view's.
    ``samples`` (None: the view's own, :meth:`RunView.samples`) is read once, one item at a
    time: the sample browser's data is built task by task in temporary files
    (:class:`BrowserData`) and streamed into the page, so the report of the full benchmark
    never holds its 36.5K samples at once. A :class:`BrowserData` already built from the
    items (a scoring run's) is used as it is (finished here if need be; its owner closes it).
    """
    run = as_view(run)
    label = label or run.label
    meta = run.results.meta
    script = asset("report.js")
    if isinstance(samples, BrowserData):
        if not samples.finished:
            samples.finish(run.task_names)
        held: contextlib.AbstractContextManager[BrowserData] = contextlib.nullcontext(samples)
    else:
        held = BrowserData(run.samples() if samples is None else samples, run.task_names)
    with held as data:
        note = (
            f"Texts longer than {PREDICTION_LIMIT} characters are cut in this page "
            "(the full texts are in samples.jsonl)."
        )
        if not data.n_samples:
            note = "samples.jsonl was not found: there is nothing to browse."
        # The page is rendered around a marker that the (large) sample data then replaces.
        marker = f"taxpraben-sample-data-{uuid.uuid4().hex}"
        template = environment().get_template("report.html.j2")
        page = template.render(
            title=f"TaxPraBen report: {label}",
            label=label,
            version=package_version(),
            profile=meta.profile or "?",
            data_hash=meta.data_hash or "?",
            n_tasks=len(run.results.tasks),
            overall=tables.overall_summary(run),
            banner=tables.problem_banner(run),
            paper=tables.paper_table(run),
            groups=tables.group_tables(run),
            failures=tables.failure_table(run),
            ledger=tables.ledger_table(run),
            fields=tables.field_table(run),
            per_run=tables.per_run_table(run),
            config=tables.configuration(run),
            plot_tasks=plots.task_bars(run),
            plot_radar=plots.bloom_radar(run),
            plot_failures=plots.failure_bars(run),
            plot_distributions=plots.score_histograms(run, data.scores),
            **review_parts(run.results),
            sample_tasks=data.tasks,
            sample_note=note,
            sample_json=Markup(marker),
            css=Markup(asset("report.css")),
            script=Markup(script),
            csp=content_security_policy(script),
        )
        head, tail = page.split(marker)
        out.write(head)
        write_embedded(out, data, compress_above=compress_above)
        out.write(tail)

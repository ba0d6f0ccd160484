"""Inline SVG plots for report.html, drawn in Python (no JavaScript, no network).

Every label goes through ``escape``; the SVG is inserted into the page as markup.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from markupsafe import Markup, escape

from taxpraben.kinds import semantic_metrics
from taxpraben.report import format as fmt
from taxpraben.report.samples import score_values
from taxpraben.report.view import RunView
from taxpraben.results import Sample, Stat

BLOOM_COLOURS = {
    "remember": "#4e79a7",
    "understand": "#59a14f",
    "apply": "#f28e2b",
    "analyze": "#b07aa1",
    "evaluate": "#e15759",
    "create": "#76b7b2",
}
GREY = "#9aa0a6"
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def _svg(width: float, height: float, body: Iterable[str], label: str) -> Markup:
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" role="img" aria-label="{escape(label)}" {FONT}>'
        + "".join(body)
        + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {extra}>{escape(text)}</text>'


def _x_axis(
    left: float, width: float, top: float, bottom: float, ticks: Sequence[float], label: Callable[[float], str]
) -> list[str]:
    out = []
    for t in ticks:
        x = left + width * t
        out.append(
            f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="#e3e3e3"/>'
        )
        out.append(_text(x, bottom + 14, label(t), "middle", 'fill="#555"'))
    return out


def task_bars(run: RunView) -> Markup:
    """Horizontal bars of each task's mean score, a line over the range of runs, a dot per run."""
    rows = run.tasks
    left, width, bar_h, gap, top = 150, 460, 16, 8, 10
    height = top + len(rows) * (bar_h + gap) + 30
    body = _x_axis(
        left, width, top, height - 24, [0, 0.2, 0.4, 0.6, 0.8, 1.0], lambda t: f"{t * 100:.0f}"
    )
    for i, row in enumerate(rows):
        y = top + i * (bar_h + gap)
        body.append(_text(left - 8, y + bar_h - 4, row.name, "end"))
        score = row.entry.score if row.computed else None
        if score is None or score.mean is None:
            body.append(
                _text(
                    left + 4, y + bar_h - 4, "not computed", extra='fill="#888" font-style="italic"'
                )
            )
            continue
        colour = BLOOM_COLOURS.get(row.bloom, GREY)
        mean = _clamp(score.mean)
        body.append(
            f'<rect x="{left}" y="{y:.1f}" width="{width * mean:.1f}" height="{bar_h}" fill="{colour}" opacity="0.8">'
            f"<title>{escape(row.name)}: {escape(fmt.stat(score))}</title></rect>"
        )
        values = [v for v in score.runs if v is not None]
        if len(values) > 1:
            lo, hi = _clamp(min(values)), _clamp(max(values))
            cy = y + bar_h / 2
            body.append(
                f'<line x1="{left + width * lo:.1f}" y1="{cy:.1f}" x2="{left + width * hi:.1f}" y2="{cy:.1f}" '
                'stroke="#222" stroke-width="1.5"/>'
            )
        for v in values:
            body.append(
                f'<circle cx="{left + width * _clamp(v):.1f}" cy="{y + bar_h / 2:.1f}" r="2.5" fill="#222"/>'
            )
        label_x = left + width * max([mean, *(_clamp(v) for v in values)]) + 6
        body.append(_text(label_x, y + bar_h - 4, fmt.number(score.mean), extra='fill="#333"'))
    return _svg(left + width + 60, height, body, "Task scores with the spread over runs")


def bloom_radar(run: RunView) -> Markup:
    """A radar of the group scores by Bloom level (levels with no computed task sit at 0, greyed)."""
    groups = run.results.groups.bloom
    levels = run.bloom_levels
    size, radius = 360, 120
    cx = cy = size / 2
    body: list[str] = []
    for ring in (0.2, 0.4, 0.6, 0.8, 1.0):
        points = " ".join(_polar(cx, cy, radius * ring, k, len(levels)) for k in range(len(levels)))
        body.append(f'<polygon points="{points}" fill="none" stroke="#ddd"/>')
        body.append(
            _text(
                cx + 3,
                cy - radius * ring - 2,
                f"{ring * 100:.0f}",
                extra='fill="#999" font-size="10"',
            )
        )
    vertices = []
    for k, level in enumerate(levels):
        end = _polar(cx, cy, radius, k, len(levels))
        body.append(
            f'<line x1="{cx}" y1="{cy}" x2="{end.split(",")[0]}" y2="{end.split(",")[1]}" stroke="#ddd"/>'
        )
        lx, ly = (float(v) for v in _polar(cx, cy, radius + 26, k, len(levels)).split(","))
        figure = groups.get(level)
        value = figure.mean if figure is not None else None
        label = f"{fmt.bloom_label(level)} {fmt.number(value)}"
        body.append(_text(lx, ly + 4, label, "middle", f'fill="{BLOOM_COLOURS.get(level, GREY)}"'))
        vertices.append(_polar(cx, cy, radius * _clamp(value or 0.0), k, len(levels)))
    body.append(
        f'<polygon points="{" ".join(vertices)}" fill="#4e79a7" fill-opacity="0.25" stroke="#4e79a7" stroke-width="2"/>'
    )
    return _svg(size, size, body, "Group scores by Bloom level")


def score_distributions(run: RunView, samples: Iterable[Sample], bins: int = 20) -> Markup | None:
    """Small histograms of per-item BERTScore and BARTScore for each semantic task, all runs."""
    values: dict[tuple[str, str], list[float]] = {}
    semantic = semantic_metrics()
    for item in samples:
        for metric, value in score_values(item, semantic):
            values.setdefault((item.task, metric), []).append(value)
    return score_histograms(run, values, bins)


def score_histograms(
    run: RunView, values: dict[tuple[str, str], list[float]], bins: int = 20
) -> Markup | None:
    """The histograms of :func:`score_distributions` from the values by (task, metric)."""
    if not values:
        return None
    semantic = semantic_metrics()
    tasks = [row.name for row in run.tasks if any((row.name, m) in values for m in semantic)]
    metrics = [m for m in semantic if any((t, m) in values for t in tasks)]
    ranges = {}
    for metric in metrics:
        all_values = [v for t in tasks for v in values.get((t, metric), [])]
        lo, hi = min(all_values), max(all_values)
        if hi - lo < 1e-9:
            lo, hi = lo - 0.05, hi + 0.05
        ranges[metric] = (lo, hi)
    cell_w, cell_h, pad_top, label_w = 230, 70, 22, 110
    width = label_w + cell_w * len(metrics) + 20
    height = pad_top + len(tasks) * (cell_h + 14) + 10
    body = []
    for j, metric in enumerate(metrics):
        lo, hi = ranges[metric]
        body.append(
            _text(
                label_w + j * cell_w + cell_w / 2,
                14,
                f"{fmt.metric_label(metric)} ({lo:.2f}–{hi:.2f})",
                "middle",
                'font-weight="bold"',
            )
        )
    for i, task in enumerate(tasks):
        y0 = pad_top + i * (cell_h + 14)
        body.append(_text(label_w - 8, y0 + cell_h / 2 + 4, task, "end"))
        for j, metric in enumerate(metrics):
            data = values.get((task, metric))
            x0 = label_w + j * cell_w + 6
            w = cell_w - 16
            body.append(
                f'<rect x="{x0}" y="{y0}" width="{w}" height="{cell_h}" fill="#fafafa" stroke="#eee"/>'
            )
            if not data:
                body.append(_text(x0 + w / 2, y0 + cell_h / 2, "no data", "middle", 'fill="#999"'))
                continue
            lo, hi = ranges[metric]
            counts = [0] * bins
            for v in data:
                counts[min(bins - 1, max(0, int((v - lo) / (hi - lo) * bins)))] += 1
            peak = max(counts)
            bw = w / bins
            for b, c in enumerate(counts):
                if c:
                    h = (cell_h - 4) * c / peak
                    tip = escape(
                        f"{lo + b * (hi - lo) / bins:.3f}–{lo + (b + 1) * (hi - lo) / bins:.3f}: {c} items"
                    )
                    body.append(
                        f'<rect x="{x0 + b * bw:.1f}" y="{y0 + cell_h - h:.1f}" width="{bw - 1:.1f}" height="{h:.1f}" '
                        f'fill="#4e79a7"><title>{tip}</title></rect>'
                    )
            mean = sum(data) / len(data)
            mx = x0 + w * (mean - lo) / (hi - lo)
            body.append(
                f'<line x1="{mx:.1f}" y1="{y0}" x2="{mx:.1f}" y2="{y0 + cell_h}" stroke="#e15759" stroke-dasharray="3,2"/>'
            )
            body.append(
                _text(
                    x0 + w - 2,
                    y0 + 12,
                    f"mean {mean:.3f}, n={len(data)}",
                    "end",
                    'fill="#555" font-size="10"',
                )
            )
    return _svg(width, height, body, "Distributions of per-item semantic scores")


def failure_bars(run: RunView) -> Markup:
    """Bars of each task's format-failure rate and error rate (means over runs)."""
    rows = run.tasks
    rates = []
    for row in rows:
        rates.append((row.name, _rate(row.entry.format_failure_rate), _rate(row.entry.error_rate)))
    peak = max([ff + err for _, ff, err in rates] + [0.05])
    scale_max = min(1.0, math.ceil(peak * 20) / 20)
    left, width, bar_h, gap, top = 150, 400, 14, 6, 10
    height = top + len(rows) * (bar_h + gap) + 46
    ticks = [k / 4 for k in range(5)]
    body = _x_axis(left, width, top, height - 40, ticks, lambda t: f"{t * scale_max * 100:.0f}%")
    for i, (name, ff, err) in enumerate(rates):
        y = top + i * (bar_h + gap)
        body.append(_text(left - 8, y + bar_h - 3, name, "end"))
        w_ff = width * ff / scale_max
        w_err = width * err / scale_max
        ff_title = escape(f"{name}: format failures {fmt.number(ff, 'format_failure_rate')}")
        err_title = escape(f"{name}: errors {fmt.number(err, 'error_rate')}")
        body.append(
            f'<rect x="{left}" y="{y}" width="{w_ff:.1f}" height="{bar_h}" fill="#f28e2b"><title>{ff_title}</title></rect>'
        )
        body.append(
            f'<rect x="{left + w_ff:.1f}" y="{y}" width="{w_err:.1f}" height="{bar_h}" fill="#e15759"><title>{err_title}</title></rect>'
        )
        body.append(
            _text(
                left + w_ff + w_err + 6,
                y + bar_h - 3,
                fmt.number(ff + err, "format_failure_rate"),
                extra='fill="#333"',
            )
        )
    ly = height - 12
    body.append(f'<rect x="{left}" y="{ly - 9}" width="10" height="10" fill="#f28e2b"/>')
    body.append(_text(left + 14, ly, "format failure"))
    body.append(f'<rect x="{left + 120}" y="{ly - 9}" width="10" height="10" fill="#e15759"/>')
    body.append(_text(left + 134, ly, "generation error"))
    return _svg(left + width + 70, height, body, "Format-failure and error rates by task")


def overall_intervals(entries: Sequence[tuple[str, Stat | None]]) -> Markup:
    """Leaderboard plot: each model's Overall Average with its 95% interval over runs."""
    left, width, row_h, top = 220, 420, 24, 10
    height = top + len(entries) * row_h + 30
    means = [(e.mean, e.ci95 or [e.mean]) for _, e in entries if e is not None and e.mean is not None]
    lows = [min(ci[0] or mean, mean) for mean, ci in means] or [0.0]
    highs = [max(ci[-1] or mean, mean) for mean, ci in means] or [1.0]
    lo = max(0.0, math.floor(min(lows) * 20) / 20)
    hi = min(1.0, math.ceil(max(highs) * 20) / 20)
    if hi - lo < 0.05:
        hi = min(1.0, lo + 0.05)
    span = hi - lo

    def x(v: float) -> float:
        return left + width * (v - lo) / span

    ticks = [k / 5 for k in range(6)]
    body = _x_axis(left, width, top, height - 24, ticks, lambda t: f"{(lo + t * span) * 100:.0f}")
    for i, (label, figure) in enumerate(entries):
        y = top + i * row_h + row_h / 2
        body.append(_text(left - 8, y + 4, label, "end"))
        if figure is None or figure.mean is None:
            continue
        ci = figure.ci95
        if ci and ci[0] is not None:
            body.append(
                f'<line x1="{x(max(lo, ci[0])):.1f}" y1="{y}" x2="{x(min(hi, ci[1])):.1f}" y2="{y}" stroke="#222" stroke-width="2"/>'
            )
        body.append(
            f'<circle cx="{x(figure.mean):.1f}" cy="{y}" r="5" fill="#4e79a7"><title>{escape(label)}: {escape(fmt.stat(figure))}</title></circle>'
        )
    return _svg(left + width + 30, height, body, "Overall Average with 95% interval over runs")


def _rate(figure: Stat | None) -> float:
    """A rate's mean over runs; 0 where it was not computed (no bar)."""
    return (figure.mean if figure is not None else None) or 0.0


def _polar(cx: float, cy: float, r: float, k: int, n: int) -> str:
    angle = -math.pi / 2 + 2 * math.pi * k / n
    return f"{cx + r * math.cos(angle):.1f},{cy + r * math.sin(angle):.1f}"


def _clamp(v: float) -> float:
    return min(1.0, max(0.0, v))

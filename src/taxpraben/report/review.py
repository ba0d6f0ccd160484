"""The human review figure: people's verdicts (``OUT/review.jsonl``) turned into agreement
with a 95% interval, the points the readings gave or withheld, and a corrected score.

One reading counts once whoever checked it: its verdict is the one most of its reviewers
gave (right or wrong; a tie counts as wrong), its answer the one most of those who said
wrong read. A "wrong" whose answer is the reading itself (or no answer, where nothing was
read) is a "right". Unsure verdicts are left out of the figure (counted apart).

A verdict belongs to the reading it judged: a verdict whose reading has changed since
(:func:`taxpraben.review.store.is_stale`) is *stale*: left out of every figure, counted and
listed (``stale``, ``stale_readings``), and offered again by ``taxpraben review``. A line
that does not say what it judged (``legacy``) is taken to judge today's reading, and
counted as such.

The same output read the same way in several runs is one reading, weighing as its runs
(:func:`taxpraben.review.draw.distinct`). The draw is stratified by task and by how each
reading was read, so the figures are stratified estimates: each stratum weighs as its share
of the run's readings, with a Wilson interval at the effective sample size
(:mod:`taxpraben.review.estimate`); only strata with a verdict are covered, and the block
says what share of the run that is, how many readings were drawn, how many are still
without a verdict, and which tasks no verdict reached.

Points: a reading scores ``p`` (its item score; a field of a mixed task, its field score
over the item's fields); the reviewer's answer would score ``h`` (``p`` when right; 1 when
the answer is the gold, else 0). ``given`` adds ``p - h`` where positive, ``withheld``
``h - p`` (each reading as many times as its runs). The corrected score of a task is its
score plus the stratified mean of ``h - p`` (scaled to the task's items), its bounds from
the Wilson intervals of the shares of readings that gave and withheld points; the corrected
Overall Average is the mean over the computed tasks, its bounds the tasks' added in
quadrature, and a task whose readings no verdict reached counts with the widest bounds
(0 to 1): a review stopped early never looks surer than a finished one. The protocol's
figures are never replaced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.report import format as fmt
from taxpraben.report.load import iter_samples
from taxpraben.report.tables import Row, Table
from taxpraben.report.view import RunView
from taxpraben.results import Results, Review, ReviewFigure
from taxpraben.review.answers import same_answer
from taxpraben.review.draw import DRAW_METHOD, Reading, distinct, draw, readings_of
from taxpraben.review.estimate import Size, Unit, combined, stratified
from taxpraben.review.store import (
    REVIEW_FILE,
    Key,
    ReviewFileError,
    Verdict,
    is_stale,
    read_verdicts,
)

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.results.samples import Sample

#: The banner's bound: the reports warn when the agreement's 95% lower bound is below it.
#: Chosen with the default draw (``taxpraben review --n 60``): a clean review of 60 readings
#: gives 100% [94.0, 100] for a simple random draw, and stays above 90% down to an effective
#: size of 35 (a draw that over-samples small strata), so it raises no banner.
REVIEW_TRUST_BOUND = 0.90
#: The draw size ``taxpraben review`` takes by default.
DEFAULT_DRAW = 60


@dataclass(frozen=True)
class Checked:
    """One reviewed reading as the figure counts it."""

    key: Key
    verdict: str  # right | wrong | unsure
    answer: str | None
    read: JSONValue
    gold: JSONValue
    protocol: float
    human: float
    weight: float
    judge: JSONValue = None
    judged: bool = False
    stratum: str = "high"
    runs: int = 1


def consensus(verdicts: Iterable[Verdict], read: JSONValue, read_nothing: bool) -> tuple[str, str | None]:
    """The one verdict of a reading (see the module docstring) and its answer."""
    decided = []
    for v in verdicts:
        verdict = v.verdict
        if verdict == "wrong" and ((v.answer is None and read_nothing) or
                                   (v.answer is not None and not read_nothing and same_answer(v.answer, read))):
            verdict = "right"
        if verdict != "unsure":
            decided.append((verdict, v.answer))
    if not decided:
        return "unsure", None
    wrong = [answer for verdict, answer in decided if verdict == "wrong"]
    if len(wrong) * 2 < len(decided):
        return "right", None
    return "wrong", Counter(wrong).most_common(1)[0][0]


def _reading(line: Sample, field: str | None) -> tuple[JSONValue, JSONValue, float, float, bool, JSONValue, bool]:
    """(read, gold, protocol score, weight, nothing read, judge's reading, judge read it)."""
    judged_by = (line.read_by or "").startswith("judge:")
    if field is None:
        nothing = line.status != "ok"
        judge = line.extracted if judged_by else line.judge_extracted
        return (None if nothing else line.extracted, line.gold, float(line.score or 0.0), 1.0, nothing, judge,
                judged_by or line.judge_agrees is not None)  # fmt: skip
    fields = line.fields or {}
    figures = fields.get(field) or {}
    nothing = line.status != "ok" or figures.get("pred") is None or figures.get("status") in ("missing",
                                                                                              "format_failure")
    audited = isinstance(line.judge_extracted, dict) and field in line.judge_extracted
    judge = figures.get("pred") if judged_by else (line.judge_extracted or {}).get(field) if audited else None
    return (None if nothing else figures.get("pred"), figures.get("gold"), float(figures.get("score") or 0.0),
            1.0 / max(len(fields), 1), nothing, judge, judged_by or audited)  # fmt: skip


@dataclass
class Population:
    """The run's readings as the figure needs them: the distinct readings, each run's key to
    its distinct reading, the size of each stratum (task, how read), per task its sample lines
    and readings (runs counted), and what each reading judged gave (:func:`_reading`) for the
    keys asked for."""

    readings: list[Reading]
    by_key: dict[Key, Reading]
    sizes: dict[tuple[str, str], Size]
    lines: Counter[str]
    read_count: Counter[str]
    items: set[tuple[str, str, int]]
    values: dict[Key, tuple[JSONValue, JSONValue, float, float, bool, JSONValue, bool]] = field(default_factory=dict)


def population(out_dir: Path, task_types: Mapping[str, str], wanted: set[Key]) -> Population:
    """The :class:`Population` of ``out_dir`` (samples.jsonl read once); ``wanted``: the
    keys whose values (:func:`_reading`) are kept."""
    every: list[Reading] = []
    lines: Counter[str] = Counter()
    items: set[tuple[str, str, int]] = set()
    values: dict[Key, tuple[JSONValue, JSONValue, float, float, bool, JSONValue, bool]] = {}
    for item in iter_samples(out_dir):
        lines[item.task] += 1
        items.add((item.task, item.id, item.run))
        found = readings_of(item, task_types.get(item.task, ""))
        every += found
        for r in found:
            if r.key in wanted:
                values[r.key] = _reading(item, r.field)
    unique = distinct(every)
    by_key = {key: r for r in unique for key in r.keys}
    counts: Counter[tuple[str, str]] = Counter()
    outputs: Counter[tuple[str, str]] = Counter()
    read_count: Counter[str] = Counter()
    for r in unique:
        counts[(r.task, r.stratum)] += r.weight
        outputs[(r.task, r.stratum)] += 1
        read_count[r.task] += r.weight
    sizes = {k: Size(counts[k], outputs[k]) for k in counts}
    return Population(unique, by_key, sizes, lines, read_count, items, values)


@dataclass
class Sorted:
    """The verdicts of review.jsonl sorted out against today's readings: per distinct
    reading, each reviewer's last verdict that still applies; the stale ones; the legacy count."""

    applying: dict[Key, dict[str, Verdict]]
    stale: list[tuple[Key, str]]
    legacy: int


def sort_verdicts(verdicts: list[Verdict], pop: Population, path: Path) -> Sorted:
    """Each reviewer's last verdict per distinct reading (file order: the last line wins),
    applying or stale; ReviewFileError for a verdict on an item samples.jsonl does not hold."""
    last: dict[tuple[Key, str], Verdict] = {}
    gone: list[tuple[Key, str]] = []
    for v in verdicts:
        reading = pop.by_key.get(v.key)
        if reading is None:
            if (v.task, v.id, v.run) not in pop.items:
                raise ReviewFileError(f"{path}: reviews {v.task} id {v.id} run {v.run}, which "
                                      f"{path.parent / 'samples.jsonl'} does not hold")  # fmt: skip
            gone.append((v.key, v.reviewer))  # its reading is no more (the task is no longer read)
            continue
        last.pop((reading.key, v.reviewer), None)  # re-inserted: the dict keeps file order
        last[(reading.key, v.reviewer)] = v
    applying: dict[Key, dict[str, Verdict]] = {}
    stale = list(dict.fromkeys(gone))
    legacy = 0
    for (key, reviewer), v in last.items():
        reading = pop.by_key[key]
        if is_stale(v, reading.read, reading.output):
            stale.append((key, reviewer))
            continue
        legacy += v.legacy
        applying.setdefault(key, {})[reviewer] = v
    return Sorted(applying, stale, legacy)


def checked_readings(pop: Population, applying: Mapping[Key, Mapping[str, Verdict]]) -> list[Checked]:
    """Each reviewed distinct reading with its one verdict."""
    found = []
    for key, by_reviewer in applying.items():
        reading = pop.by_key[key]
        values = next((pop.values[k] for k in reading.keys if k in pop.values), None)
        if values is None:  # pragma: no cover - every verdict's key was asked for
            continue
        read, gold, protocol, weight, nothing, judge, judged = values
        verdict, answer = consensus(by_reviewer.values(), read, nothing)
        human = protocol if verdict != "wrong" else float(answer is not None and same_answer(answer, gold))
        found.append(Checked(key, verdict, answer, read, gold, protocol, human, weight, judge, judged,
                             reading.stratum, reading.weight))  # fmt: skip
    return found


def figure(checked: list[Checked], sizes: Mapping[tuple[str, str], Size], score: float | None = None,
           scale: float = 1.0) -> ReviewFigure:
    """The figure of some reviewed readings against the run's strata ``sizes`` (those of
    their tasks); ``score``: their task's score (0-1) to correct, ``scale``: its readings per
    item (a mixed task reads several fields of an item)."""
    decided = [c for c in checked if c.verdict != "unsure"]
    units = [Unit((c.key[0], c.stratum), c.runs, float(c.verdict == "right")) for c in decided]
    estimate = stratified(units, sizes)
    given = sum(max(0.0, c.protocol - c.human) * c.weight * c.runs for c in decided)
    withheld = sum(max(0.0, c.human - c.protocol) * c.weight * c.runs for c in decided)
    values: JSONObject = {
        "reviewed": len(decided), "agreed": sum(c.verdict == "right" for c in decided),
        "agreement": round(estimate.mean, 6) if estimate else None,
        "ci95": [round(x, 6) for x in estimate.ci95] if estimate else None,
        "n_eff": round(estimate.n_eff, 2) if estimate else None,
        "readings": int(sum(size.readings for size in sizes.values())),
        "covered": round(estimate.covered, 6) if estimate else 0.0,
        "unsure": len(checked) - len(decided), "given": round(given, 6), "withheld": round(withheld, 6),
    }  # fmt: skip
    if score is not None and decided:
        values["corrected"] = list(corrected(score, decided, sizes, scale))
    return ReviewFigure.model_validate(values)


def corrected(score: float, decided: list[Checked], sizes: Mapping[tuple[str, str], Size],
              scale: float = 1.0) -> tuple[float, float, float]:
    """[estimate, low, high] of a task's score had every reading been the reviewer's (see
    the module docstring)."""

    def estimate_of(values: list[float]) -> tuple[float, float, float]:
        e = stratified([Unit((c.key[0], c.stratum), c.runs, v) for c, v in zip(decided, values, strict=True)], sizes)
        if e is None:  # pragma: no cover - decided is never empty here
            raise ValueError("no reviewed reading to correct a score with")
        return (e.mean, *e.ci95)

    diff = estimate_of([(c.human - c.protocol) * c.weight for c in decided])[0]
    _, g_low, g_high = estimate_of([float(c.protocol > c.human) for c in decided])
    _, w_low, w_high = estimate_of([float(c.human > c.protocol) for c in decided])
    mean_weight = sum(c.weight for c in decided) / len(decided)
    size_given = _mean_size([c for c in decided if c.protocol > c.human]) or mean_weight
    size_withheld = _mean_size([c for c in decided if c.human > c.protocol]) or mean_weight

    def clip(x: float) -> float:
        return round(min(1.0, max(0.0, x)), 6)

    point = score + scale * diff
    low = score + scale * (w_low * size_withheld - g_high * size_given)
    high = score + scale * (w_high * size_withheld - g_low * size_given)
    return clip(point), clip(min(low, point)), clip(max(high, point))


def _mean_size(members: list[Checked]) -> float:
    """The mean points one of ``members`` gave or withheld (its runs counted); 0 for none."""
    runs = sum(c.runs for c in members)
    return sum(abs(c.human - c.protocol) * c.weight * c.runs for c in members) / runs if runs else 0.0


def drawn_now(pop: Population, draws: set[tuple[int, int]]) -> set[Key]:
    """The distinct readings the recorded draws (seed, size) offer on today's readings."""
    found: set[Key] = set()
    for seed, size in sorted(draws):
        found.update(r.key for r in draw(pop.readings, size, seed))
    return found


def review_block(out_dir: Path, results: Results) -> Review | None:
    """The ``review`` block of results.json from ``out_dir/review.jsonl``; None without it.
    ReviewFileError names the file and line of a bad verdict."""
    path = Path(out_dir) / REVIEW_FILE
    verdicts = read_verdicts(path)
    if not verdicts:
        return None
    types = {name: task.type or "" for name, task in results.tasks.items()}
    pop = population(Path(out_dir), types, {v.key for v in verdicts})
    sorted_out = sort_verdicts(verdicts, pop, path)
    checked = checked_readings(pop, sorted_out.applying)
    order = {name: i for i, name in enumerate([*results.meta.tasks, *results.tasks])}
    per_task: dict[str, list[Checked]] = {}
    for c in sorted(checked, key=lambda c: (order.get(c.key[0], len(order)), c.key[0])):
        per_task.setdefault(c.key[0], []).append(c)
    tasks = {name: figure(members, _of_task(pop.sizes, name), _score(results, name),
                          pop.read_count[name] / max(pop.lines[name], 1))
             for name, members in per_task.items()}  # fmt: skip
    overall = figure(checked, pop.sizes)
    reached = {name for name, f in tasks.items() if f.reviewed}
    read_tasks = [name for name in order if pop.read_count[name]]
    draws = {v.draw for vs in sorted_out.applying.values() for v in vs.values() if v.draw is not None}
    draws |= {v.draw for v in verdicts if v.draw is not None}
    drawn = drawn_now(pop, draws) if draws else None
    with_verdict = set(sorted_out.applying)
    block: JSONObject = {
        "file": REVIEW_FILE, "reviewers": sorted({v.reviewer for v in verdicts}),
        "overall": overall, "tasks": tasks,
        "corrected_overall": corrected_overall(results, tasks, set(read_tasks)),
        "disagreements": [disagreement(c) for c in checked if c.verdict == "wrong"],
        "draw": {"seeds": sorted({seed for seed, _ in draws}), "size": max(size for _, size in draws),
                 "drawn": len(drawn or ()), "method": DRAW_METHOD} if draws else None,
        "not_yet": len((drawn or set()) - with_verdict) if drawn is not None else None,
        "unreviewed_tasks": [name for name in read_tasks if name not in reached],
        "stale": len(sorted_out.stale), "legacy": sorted_out.legacy, "applying": sum(map(len, sorted_out.applying.values())),
        "stale_readings": [{"task": k[0], "id": k[1], "run": k[2], "field": k[3], "reviewer": who}
                           for k, who in sorted_out.stale],
    }  # fmt: skip
    block["partial"] = bool(block["not_yet"] or block["unreviewed_tasks"])
    several = [vs for vs in sorted_out.applying.values() if len([v for v in vs.values() if v.verdict != "unsure"]) > 1]
    if several:
        block["inter_reviewer"] = {"items": len(several), "agreed": sum(all_same(list(vs.values())) for vs in several)}
    both = [c for c in checked if c.judged and c.verdict != "unsure"]
    if both:
        block["judge_and_person"] = {"items": len(both), "agreed": sum(
            same_answer(c.judge, c.read if c.verdict == "right" else c.answer) for c in both)}
    ci = overall.ci95
    if ci is not None and ci[0] < REVIEW_TRUST_BOUND:
        block["banner"] = (f"Human review: {overall.agreed} of {overall.reviewed} readings agree "
                           f"with a person's; the 95% interval's lower bound {100 * ci[0]:.1f}% is below "
                           f"{100 * REVIEW_TRUST_BOUND:.0f}%: on this model's outputs the scores may be misread "
                           "(see Human review).")  # fmt: skip
    return Review.model_validate(block)


def _of_task(sizes: Mapping[tuple[str, str], Size], task: str) -> dict[tuple[str, str], Size]:
    return {k: v for k, v in sizes.items() if k[0] == task}


def _score(results: Results, name: str) -> float | None:
    task = results.tasks.get(name)
    return task.score.mean if task is not None and task.computed and task.score is not None else None


def all_same(verdicts: list[Verdict]) -> bool:
    decided = [v for v in verdicts if v.verdict != "unsure"]
    first = decided[0]
    return all(v.verdict == first.verdict and same_answer(v.answer, first.answer) for v in decided)


def disagreement(c: Checked) -> JSONObject:
    task, id_, run, field = c.key
    line = {"task": task, "id": id_, "run": run, "field": field, "read": c.read, "answer": c.answer, "gold": c.gold}
    if c.judged:
        line["judge"] = c.judge
    return line


def corrected_overall(results: Results, tasks: Mapping[str, ReviewFigure],
                      read_tasks: set[str] | None = None) -> list[float | None] | None:
    """[estimate, low, high] of the Overall Average, reviewed tasks corrected; a task of
    ``read_tasks`` (one whose readings can be reviewed) that no verdict reached counts with
    bounds 0 and 1, the others not read as scored."""
    names = results.overall.tasks or [n for n, t in results.tasks.items() if t.computed]
    if not tasks or not names:
        return None
    parts: list[tuple[float, float, float]] = []
    for name in names:
        score = _score(results, name)
        review = tasks.get(name)
        if review is not None and review.corrected is not None and None not in review.corrected:
            parts.append((review.corrected[0], review.corrected[1], review.corrected[2]))  # type: ignore[arg-type]  # checked: no None
        elif score is None:
            return None
        elif read_tasks is not None and name in read_tasks:
            parts.append((score, 0.0, 1.0))  # no verdict reached it: its correction is unknown
        else:
            parts.append((score, score, score))
    return [round(x, 6) for x in combined(parts, len(parts))]


# ---------------------------------------------------------------------------- for people


def agreement_text(f: ReviewFigure) -> str:
    """``55 of 60 readings agree, 91.7% [81.9, 96.4] (95% Wilson interval); points given 2, withheld 1``."""
    share = (f"{100 * f.agreement:.1f}% [{100 * f.ci95[0]:.1f}, {100 * f.ci95[1]:.1f}] (95% Wilson interval)"
             if f.ci95 and f.agreement is not None else "no verdict but unsure")
    unsure = f"; {f.unsure} unsure (left out)" if f.unsure else ""
    return f"{f.agreed} of {f.reviewed} readings agree, {share}; points given {f.given:g}, withheld {f.withheld:g}{unsure}"


def corrected_text(values: list[float | None] | None) -> str:
    """``62.31 [58.02, 66.10]`` in points out of 100; "" when there is none."""
    if not values or values[0] is None:
        return ""
    return f"{fmt.number(values[0])} {fmt.interval(values[1:])}"


def coverage_lines(review: Review) -> list[str]:
    """What the figure covers: the draw (size, seed, how), reviewed and not yet, the tasks
    no verdict reached, the share of the run's readings covered; stale and legacy verdicts."""
    lines = []
    f = review.overall
    if review.draw is not None:
        d = review.draw
        seeds = ", ".join(str(x) for x in d.seeds)
        lines.append(f"Draw: {d.drawn} readings drawn (--n {d.size}, seed {seeds}; {d.method}); {f.reviewed} reviewed"
                     f"{f', {f.unsure} unsure' if f.unsure else ''}, {review.not_yet} not yet.")
    else:
        lines.append(f"Draw: not recorded (review.jsonl written by hand or by an earlier version); {f.reviewed} "
                     "readings reviewed.")
    if review.partial:
        missing = (f" Tasks not reviewed (left out of the figure): {', '.join(review.unreviewed_tasks)}."
                   if review.unreviewed_tasks else "")
        lines.append(f"The review is partial: the figure covers {100 * (f.covered or 0):.1f}% of the run's "
                     f"{f.readings or 0} readings.{missing}")
    if review.stale:
        lines.append(f"{review.stale} verdict(s) are stale: their readings changed since they were given (a rescore, "
                     "new rules or another output); left out of every figure; `taxpraben review` offers them again.")
    if review.legacy:
        lines.append(f"{review.legacy} verdict(s) do not record what they judged (hand-written or from an earlier "
                     "version): taken to judge today's readings.")
    return lines


def review_lines(results: Results) -> list[str]:
    """The human figure as lines (the terminal; report.md's list); [] without a review."""
    review = results.review
    if review is None:
        return []
    lines = [f"Human review ({', '.join(review.reviewers)}): {agreement_text(review.overall)}."]
    lines += coverage_lines(review)
    if review.corrected_overall:
        lines.append(f"Corrected Overall Average (an estimate had every reading been a reviewer's; not the "
                     f"protocol's figure): {corrected_text(review.corrected_overall)}.")
    if review.inter_reviewer:
        lines.append(f"Reviewers agree on {review.inter_reviewer['agreed']} of {review.inter_reviewer['items']} "
                     "readings two or more of them decided.")
    if review.judge_and_person:
        lines.append(f"Judge and person both read {review.judge_and_person['items']} readings: they agree on "
                     f"{review.judge_and_person['agreed']}.")
    return lines


def review_task_lines(results: Results) -> list[str]:
    """Per task reviewed, its figure and corrected score (the terminal)."""
    review = results.review
    if review is None:
        return []
    return [f"  {name}: {agreement_text(f)}" + (f"; corrected score {corrected_text(f.corrected)}" if f.corrected else "")
            for name, f in review.tasks.items()]


def review_banner(results: Results) -> list[str]:
    review = results.review
    return [review.banner] if review is not None and review.banner else []


def review_table(results: Results) -> Table | None:
    """Per task: reviewed, agreement with its interval, points given and withheld, the score
    and the corrected score; None without a review."""
    review = results.review
    if review is None:
        return None
    table = Table("review", "Human review", ["Task", "Reviewed", "Agree", "Agreement [95% Wilson]", "Given",
                                             "Withheld", "Unsure", "Score", "Corrected score [95%]"])  # fmt: skip
    for name, f in [*review.tasks.items(), ("Overall", review.overall)]:
        task = results.tasks.get(name)
        fixed = f.corrected if name != "Overall" else review.corrected_overall
        score = results.overall if name == "Overall" else task.score if task is not None and task.computed else None
        share = f"{100 * (f.agreement or 0):.1f}% [{100 * f.ci95[0]:.1f}, {100 * f.ci95[1]:.1f}]" if f.ci95 else "n/a"
        table.rows.append(Row([name, str(f.reviewed), str(f.agreed), share, f"{f.given:g}", f"{f.withheld:g}",
                               str(f.unsure), fmt.mean(score), corrected_text(fixed) or "n/a"],
                              task=None if name == "Overall" else name))  # fmt: skip
    table.notes.append("Agree: readings a person read as taxpraben did. Given / withheld: points (items) the "
                       "readings gave that the person's answer would not, or withheld that it would have earned. "
                       "Corrected score: the score had every reading been the person's, an estimate beside the "
                       "protocol's figure, never replacing it.")
    disagreements = review.disagreements
    if disagreements:
        shown = "; ".join(f"{d['task']} {d['id']} run {d['run']}{' ' + str(d['field']) if d.get('field') else ''}: "
                          f"read {_value(d['read'])}, person {_value(d['answer'])}"
                          + (f", judge {_value(d['judge'])}" if "judge" in d else "") + f", gold {_value(d['gold'])}"
                          for d in disagreements[:20])
        more = f" (and {len(disagreements) - 20} more)" if len(disagreements) > 20 else ""
        table.notes.append(f"Readings the person read otherwise: {shown}{more}.")
    return table


def _value(value: JSONValue) -> str:
    """A reading, an answer or a gold in a note: quoted; "no answer" for none."""
    if value is None:
        return "no answer"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return repr(value) if isinstance(value, str) else repr(str(value))


def review_cell(results: Results) -> str:
    """The leaderboard's cell: ``55/60 agree [81.9, 96.4]`` (``, partial`` when it is);
    "not reviewed" without a review or a verdict that applies."""
    review = results.review
    if review is None or not review.overall.ci95:
        return "not reviewed"
    ci = review.overall.ci95
    partial = ", partial" if review.partial else ""
    return f"{review.overall.agreed}/{review.overall.reviewed} agree [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]{partial}"


def reviewed_view(view: RunView) -> RunView:
    """``view`` with the review block of its directory's review.jsonl (computed, nothing
    written: newer than a block results.json may hold); ``view`` itself without one."""
    if view.out_dir is None:
        return view
    block = review_block(view.out_dir, view.results)
    if block is None:
        return view
    return replace(view, results=view.results.model_copy(update={"review": block}))


def review_side_by_side(a: Results, b: Results) -> list[str]:
    """``taxpraben diff``'s Human review section: each side's figure, and where the judge
    and the person both read an item, how often they agree; [] when neither side has one."""
    if a.review is None and b.review is None:
        return []
    lines = ["", "## Human review", "", "| | Human review | Corrected Overall | Judge and person agree |", "|---|---|---|---|"]
    for name, results in (("A", a), ("B", b)):
        review = results.review
        both = review.judge_and_person if review is not None else None
        together = f"{both['agreed']} of {both['items']}" if both else ""
        fixed = corrected_text(review.corrected_overall) if review is not None else ""
        lines.append(f"| {name} | {review_cell(results)} | {fixed} | {together} |")
    for name, results in (("A", a), ("B", b)):
        for d in results.review.disagreements if results.review is not None else []:
            if "judge" in d:
                lines.append(f"- {name} {d['task']} {d['id']} run {d['run']}{' ' + str(d['field']) if d.get('field') else ''}: "
                             f"rules {_value(d['read'])}, judge {_value(d['judge'])}, person {_value(d['answer'])}, "
                             f"gold {_value(d['gold'])}")
    return lines


def attach_review(out_dir: Path) -> bool:
    """Write the ``review`` block into ``out_dir/results.json`` from its review.jsonl (the
    rest of the file unchanged); False when there is no review.jsonl (nothing written)."""
    from taxpraben.report.load import read_results

    results = read_results(Path(out_dir))
    block = review_block(Path(out_dir), results)
    if block is None:
        return False
    _write_block(Path(out_dir), block)
    return True


def _write_block(out_dir: Path, block: Review) -> None:
    import json

    from taxpraben.atomic import write_text_atomically
    from taxpraben.report.load import RESULTS_FILE

    path = out_dir / RESULTS_FILE
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["review"] = block.to_json()
    write_text_atomically(path, json.dumps(raw, ensure_ascii=False, indent=2) + "\n")


def carry_review(out_dir: Path, results: Results) -> tuple[Results, str | None]:
    """After ``score``, ``merge`` or ``run`` wrote ``results`` into ``out_dir``: when a
    review.jsonl is there, its block written into results.json again (the verdicts judged
    against the new readings) and ``results`` with it, and a sentence saying how many
    verdicts still apply; ``(results, None)`` without one. A review.jsonl that cannot be read
    leaves the block out and says why (the scores stand)."""
    path = Path(out_dir) / REVIEW_FILE
    if not path.exists():
        return results, None
    try:
        block = review_block(Path(out_dir), results)
    except ReviewFileError as exc:
        return results, f"{exc}: the human review is left out of the reports until it is mended"
    if block is None:
        return results, None
    _write_block(Path(out_dir), block)
    total = (block.applying or 0) + block.stale
    said = (f"{path}: {block.applying} of {total} verdict(s) still apply to the new readings and are kept in the "
            "reports")
    if block.stale:
        said += (f"; {block.stale} are stale (their readings changed) and left out: `taxpraben review {out_dir}` "
                 "offers them again")
    return results.model_copy(update={"review": block}), said + "."

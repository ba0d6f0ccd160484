"""The human review figure: people's verdicts (``OUT/review.jsonl``) turned into agreement
with a 95% Wilson interval, the points the readings gave or withheld, and a corrected score.

One reading counts once whoever checked it: its verdict is the one most of its reviewers
gave (right or wrong; a tie counts as wrong), its answer the one most of those who said
wrong read. A "wrong" whose answer is the reading itself (or no answer, where nothing was
read) is a "right". Unsure verdicts are left out of the figure (counted apart).

Points: a reading scores ``p`` (its item score; a field of a mixed task, its field score
over the item's fields); the reviewer's answer would score ``h`` (``p`` when right; 1 when
the answer is the gold, else 0). ``given`` adds ``p - h`` where positive, ``withheld``
``h - p``. The corrected score of a task is its score + (withheld - given) / reviewed, its
bounds from the Wilson intervals of the shares of readings that gave and withheld points;
the corrected Overall Average is the mean over the computed tasks, unreviewed tasks as
scored. The protocol's figures are never replaced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.judge.audit import TRUST_BOUND, wilson_interval
from taxpraben.report import format as fmt
from taxpraben.report.load import iter_samples
from taxpraben.report.tables import Row, Table
from taxpraben.report.view import RunView
from taxpraben.results import Results, Review, ReviewFigure
from taxpraben.review.answers import same_answer
from taxpraben.review.store import REVIEW_FILE, Key, ReviewFileError, Verdict, latest, read_verdicts

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.results.samples import Sample


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


def checked_readings(out_dir: Path, verdicts: list[Verdict]) -> tuple[list[Checked], dict[Key, list[Verdict]]]:
    """Each reviewed reading of ``out_dir`` with its one verdict (samples.jsonl read once),
    and every reviewer's last verdict by reading."""
    by_key: dict[Key, list[Verdict]] = {}
    for (key, _), given in latest(verdicts).items():
        by_key.setdefault(key, []).append(given)
    wanted: dict[tuple[str, str, int], list[Key]] = {}
    for key in by_key:
        wanted.setdefault(key[:3], []).append(key)
    found = []
    for item in iter_samples(out_dir):
        for key in wanted.pop((item.task, item.id, item.run), []):
            read, gold, protocol, weight, nothing, judge, judged = _reading(item, key[3])
            verdict, answer = consensus(by_key[key], read, nothing)
            human = protocol if verdict != "wrong" else float(answer is not None and same_answer(answer, gold))
            found.append(Checked(key, verdict, answer, read, gold, protocol, human, weight, judge, judged))
    if wanted:
        task, id_, run = next(iter(wanted))
        raise ReviewFileError(f"{Path(out_dir) / REVIEW_FILE}: reviews {task} id {id_} run {run}, which "
                         f"{Path(out_dir) / 'samples.jsonl'} does not hold")  # fmt: skip
    return found, by_key


def figure(checked: list[Checked], score: float | None) -> ReviewFigure:
    """The figure of some reviewed readings; ``score``: their task's score (0-1) to correct."""
    decided = [c for c in checked if c.verdict != "unsure"]
    n, agreed = len(decided), sum(c.verdict == "right" for c in decided)
    given = sum(max(0.0, c.protocol - c.human) * c.weight for c in decided)
    withheld = sum(max(0.0, c.human - c.protocol) * c.weight for c in decided)
    values: JSONObject = {"reviewed": n, "agreed": agreed, "agreement": agreed / n if n else None,
                              "ci95": list(wilson_interval(agreed, n)) if n else None,
                              "unsure": len(checked) - n, "given": round(given, 6), "withheld": round(withheld, 6)}
    if score is not None and n:
        values["corrected"] = corrected(score, decided, given, withheld)
    return ReviewFigure.model_validate(values)


def corrected(score: float, decided: list[Checked], given: float, withheld: float) -> list[float | None]:
    """[estimate, low, high] of a task's score had every reading been the reviewer's."""
    n = len(decided)
    mean_weight = sum(c.weight for c in decided) / n
    n_given = sum(c.protocol > c.human for c in decided)
    n_withheld = sum(c.human > c.protocol for c in decided)
    size_given = given / n_given if n_given else mean_weight
    size_withheld = withheld / n_withheld if n_withheld else mean_weight
    g_low, g_high = wilson_interval(n_given, n)
    w_low, w_high = wilson_interval(n_withheld, n)

    def clip(x: float) -> float:
        return round(min(1.0, max(0.0, x)), 6)

    return [clip(score + (withheld - given) / n), clip(score + w_low * size_withheld - g_high * size_given),
            clip(score + w_high * size_withheld - g_low * size_given)]  # fmt: skip


def review_block(out_dir: Path, results: Results) -> Review | None:
    """The ``review`` block of results.json from ``out_dir/review.jsonl``; None without it.
    ReviewFileError names the file and line of a bad verdict."""
    verdicts = read_verdicts(Path(out_dir) / REVIEW_FILE)
    if not verdicts:
        return None
    checked, by_key = checked_readings(out_dir, verdicts)
    scores = {name: task.score.mean if task.computed and task.score is not None else None
              for name, task in results.tasks.items()}  # fmt: skip
    per_task: dict[str, list[Checked]] = {}
    order = {name: i for i, name in enumerate([*results.meta.tasks, *results.tasks])}
    for c in sorted(checked, key=lambda c: (order.get(c.key[0], len(order)), c.key[0])):
        per_task.setdefault(c.key[0], []).append(c)
    tasks = {name: figure(members, scores.get(name)) for name, members in per_task.items()}
    block: JSONObject = {
        "file": REVIEW_FILE, "reviewers": sorted({v.reviewer for v in verdicts}),
        "overall": figure(checked, None), "tasks": tasks,
        "corrected_overall": corrected_overall(results, tasks),
        "disagreements": [disagreement(c) for c in checked if c.verdict == "wrong"],
    }  # fmt: skip
    several = [vs for vs in by_key.values() if len([v for v in vs if v.verdict != "unsure"]) > 1]
    if several:
        block["inter_reviewer"] = {"items": len(several), "agreed": sum(all_same(vs) for vs in several)}
    both = [c for c in checked if c.judged and c.verdict != "unsure"]
    if both:
        block["judge_and_person"] = {"items": len(both), "agreed": sum(
            same_answer(c.judge, c.read if c.verdict == "right" else c.answer) for c in both)}
    ci = block["overall"].ci95
    if ci is not None and ci[0] < TRUST_BOUND:
        block["banner"] = (f"Human review: {block['overall'].agreed} of {block['overall'].reviewed} readings agree "
                           f"with a person's; the 95% interval's lower bound {100 * ci[0]:.1f}% is below "
                           f"{100 * TRUST_BOUND:.0f}%: on this model's outputs the scores may be misread "
                           "(see Human review).")  # fmt: skip
    return Review.model_validate(block)


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


def corrected_overall(results: Results, tasks: dict[str, ReviewFigure]) -> list[float | None] | None:
    """[estimate, low, high] of the Overall Average, reviewed tasks corrected."""
    names = results.overall.tasks or [n for n, t in results.tasks.items() if t.computed]
    if not tasks or not names:
        return None
    parts = []
    for name in names:
        task = results.tasks.get(name)
        score = task.score.mean if task is not None and task.score is not None else None
        review = tasks.get(name)
        if review is not None and review.corrected is not None:
            parts.append(review.corrected)
        elif score is not None:
            parts.append([score, score, score])
        else:
            return None
    return [round(sum(p[i] for p in parts) / len(parts), 6) for i in range(3)]  # type: ignore[misc]  # corrected() gives floats only


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


def review_lines(results: Results) -> list[str]:
    """The human figure as lines (the terminal; report.md's list); [] without a review."""
    review = results.review
    if review is None:
        return []
    lines = [f"Human review ({', '.join(review.reviewers)}): {agreement_text(review.overall)}."]
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
        shown = "; ".join(f"{d['task']} {d['id']} run {d['run']}{' ' + d['field'] if d.get('field') else ''}: read "
                          f"{d['read']!r}, person {d['answer']!r}"
                          + (f", judge {d['judge']!r}" if "judge" in d else "") + f", gold {d['gold']!r}"
                          for d in disagreements[:20])
        more = f" (and {len(disagreements) - 20} more)" if len(disagreements) > 20 else ""
        table.notes.append(f"Readings the person read otherwise: {shown}{more}.")
    return table


def review_cell(results: Results) -> str:
    """The leaderboard's cell: ``55/60 agree [81.9, 96.4]``; "" without a review."""
    review = results.review
    if review is None or not review.overall.ci95:
        return ""
    ci = review.overall.ci95
    return f"{review.overall.agreed}/{review.overall.reviewed} agree [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


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
        lines.append(f"| {name} | {review_cell(results) or 'not reviewed'} | {fixed} | {together} |")
    for name, results in (("A", a), ("B", b)):
        for d in results.review.disagreements if results.review is not None else []:
            if "judge" in d:
                lines.append(f"- {name} {d['task']} {d['id']} run {d['run']}{' ' + d['field'] if d.get('field') else ''}: "
                             f"rules {d['read']!r}, judge {d['judge']!r}, person {d['answer']!r}, gold {d['gold']!r}")
    return lines


def attach_review(out_dir: Path) -> bool:
    """Write the ``review`` block into ``out_dir/results.json`` from its review.jsonl (the
    rest of the file unchanged); False when there is no review.jsonl (nothing written)."""
    import json

    from taxpraben.atomic import write_text_atomically
    from taxpraben.report.load import RESULTS_FILE, read_results

    path = Path(out_dir) / RESULTS_FILE
    results = read_results(Path(out_dir))
    block = review_block(Path(out_dir), results)
    if block is None:
        return False
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["review"] = block.to_json()
    write_text_atomically(path, json.dumps(raw, ensure_ascii=False, indent=2) + "\n")
    return True

"""taxpraben's results as lm-evaluation-harness writes its own (``taxpraben export OUT_DIR --to
lm-eval``): ``results_DATE.json`` (lm-eval's results schema: ``results``, ``groups``,
``group_subtasks``, ``configs``, ``versions``, ``n-shot``, ``higher_is_better``, ``n-samples``,
``config``, ``date``, ...) and one ``samples_TASK_DATE.jsonl`` per task, as its evaluation
tracker names and fills them for the tasks of ``taxpraben lm-eval-path``: the keys are those
tasks' (``taxpraben_taxscq``, ``acc,all-runs``), and each sample line holds the record's
answers of every run (``resps``) and taxpraben's readings (``readings``). Nothing of lm-eval
is imported: the files are JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.integrations.harness import flat_figures, sample_state
from taxpraben.integrations.lm_eval_tasks import (
    FILTER,
    GENERATION,
    LOWER_IS_BETTER,
    SEE_READINGS,
    metric_names,
    task_name,
)

if TYPE_CHECKING:
    from taxpraben.api.evaluation import Results
    from taxpraben.results import Sample
    from taxpraben.results.json_value import JSONObject, JSONValue

#: The group of all 14 tasks (``taxpraben.yaml``) and the version of the tasks.
GROUP = "taxpraben"
VERSION = 1.0


def _hash(text: str) -> str:
    """lm-eval's ``hash_string``: the SHA-256 of the text, in hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _by_record(samples: Iterable[Sample]) -> dict[str, dict[str, list[Sample]]]:
    """Per task, per record (in the order of the first run) its samples, run by run."""
    out: dict[str, dict[str, list[Sample]]] = {}
    for sample in sorted(samples, key=lambda s: s.run):
        out.setdefault(sample.task, {}).setdefault(sample.id, []).append(sample)
    return out


def sample_lines(results: Results) -> dict[str, list[JSONObject]]:
    """Per lm-eval task, the sample lines of its records, as lm-eval's tracker writes them
    (``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter``,
    ``metrics``, the hashes, then each metric's value: the readings, once, under ``readings``)."""
    out: dict[str, list[JSONObject]] = {}
    for task, records in _by_record(results.samples).items():
        metrics = metric_names(task)
        lines: list[JSONObject] = []
        for doc_id, (record_id, runs) in enumerate(records.items()):
            query = next((s.query for s in runs if s.query), "") or ""
            target = str(runs[0].gold)
            answers: list[JSONValue] = [s.prediction or "" for s in runs]
            readings: JSONObject = {"task": task, "id": record_id, "runs": [sample_state(s) for s in runs]}
            doc: JSONObject = {"task": task, "id": record_id, "query": query, "target": target}
            line: JSONObject = {
                "doc_id": doc_id, "doc": doc, "target": target,
                "arguments": {"gen_args_0": {"arg_0": query, "arg_1": dict(GENERATION)}},
                "resps": [answers], "filtered_resps": [answers], "filter": FILTER, "metrics": list(metrics),
                "doc_hash": _hash(json.dumps(doc, indent=2, ensure_ascii=False)), "prompt_hash": _hash(query),
                "target_hash": _hash(target),
            }  # fmt: skip
            line.update({name: readings if name == "readings" else SEE_READINGS for name in metrics})
            lines.append(line)
        out[task_name(task)] = lines
    return out


def results_file(results: Results, date: float) -> JSONObject:
    """The results file of ``results``: per task its figures (the mean over runs) under
    ``METRIC,all-runs`` (stderr "N/A": the spread over runs is taxpraben's, in results.json),
    the group's score (the Overall Average) when every task has one."""
    per_task: JSONObject = {}
    configs: JSONObject = {}
    higher: JSONObject = {}
    counts: JSONObject = {}
    scores: list[float] = []
    runs = max((s.run for s in results.samples), default=0) + 1
    for task, entry in results.tasks.items():
        name, n = task_name(task), entry.n or 0
        figures: JSONObject = {"alias": name, "name": name, "sample_len": n}
        flat = flat_figures(task, entry, prefix=False)
        for metric in metric_names(task):
            value = n * runs if metric == "readings" else flat.get(metric)
            figures[f"{metric},{FILTER}"] = value if value is not None else float("nan")
            figures[f"{metric}_stderr,{FILTER}"] = "N/A"
        per_task[name] = figures
        configs[name] = {"task": name, "dataset_kwargs": {"task": task}, "output_type": "generate_until",
                         "repeats": runs, "generation_kwargs": dict(GENERATION), "metadata": {"version": VERSION}}  # fmt: skip
        higher[name] = {metric: metric not in LOWER_IS_BETTER for metric in metric_names(task)}
        counts[name] = {"original": n, "effective": n}
        if entry.score is not None and entry.score.mean is not None:
            scores.append(entry.score.mean)
    names = [task_name(t) for t in results.tasks]
    out: JSONObject = {"results": per_task, "group_subtasks": {name: [] for name in names}}
    if len(names) > 1:
        total: int = sum(entry.n or 0 for entry in results.tasks.values())
        overall = sum(scores) / len(scores) if len(scores) == len(names) else float("nan")
        group: JSONObject = {"alias": GROUP, "name": GROUP, "sample_len": total, f"score,{FILTER}": overall,
                             f"score_stderr,{FILTER}": "N/A", "sample_count": {f"score,{FILTER}": total}}  # fmt: skip
        out["results"] = {GROUP: group, **per_task}
        out["groups"] = {GROUP: dict(group)}
        out["group_subtasks"] = {GROUP: names}
    meta = results.meta
    model = str(meta.model) if meta is not None and meta.model else "unknown"
    versions: JSONObject = {name: VERSION for name in names}
    out.update({
        "configs": configs, "versions": versions, "n-shot": dict.fromkeys(names, 0), "higher_is_better": higher,
        "n-samples": counts, "config": {"model": model, "model_args": None, "limit": None, "bootstrap_iters": 0,
                                        "gen_kwargs": dict(GENERATION)},
        "git_hash": meta.git_hash if meta is not None else None, "date": date, "model_source": "taxpraben",
        "model_name": model, "model_name_sanitized": sanitized(model),
    })  # fmt: skip
    return out


def sanitized(model: str) -> str:
    """A model name as lm-eval makes it a folder name."""
    return "".join(c if c.isalnum() or c in "-." else "__" for c in model)


def export_lm_eval(results: Results, dest: Path) -> list[Path]:
    """Write ``results_DATE.json`` and a ``samples_TASK_DATE.jsonl`` per task into ``dest``
    (made), as lm-eval's tracker names them; the files written."""
    now = datetime.now()
    stamp = now.isoformat().replace(":", "-")
    dest.mkdir(parents=True, exist_ok=True)
    written = [dest / f"results_{stamp}.json"]
    written[0].write_text(json.dumps(results_file(results, now.timestamp()), ensure_ascii=False, indent=2) + "\n",
                          encoding="utf-8")  # fmt: skip
    for name, lines in sample_lines(results).items():
        path = dest / f"samples_{name}_{stamp}.jsonl"
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
        written.append(path)
    return written

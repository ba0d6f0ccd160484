"""TaxPraBen as lm-evaluation-harness tasks, scored by taxpraben's readers (``pip install
taxpraben[lm-eval]``).

The YAML tasks live beside this module, in ``lm_eval/`` (:func:`include_path`; ``taxpraben
lm-eval-path`` prints it): ``taxpraben_taxscq`` ... one per dataset, and the group
``taxpraben`` of all 14. ``lm_eval --tasks taxpraben --include_path "$(taxpraben lm-eval-path)"
--metadata '{"data": "/path/to/TaxPraBen"}'`` reads the records of that data directory
(``"sample"``: the bundled sample, the default) as ``taxpraben validate`` checks them
(:func:`dataset`). Each record's query is sent verbatim, greedy, ``until: []`` (lm-eval's
default stop, a blank line, would cut multi-paragraph answers), at most 1024 new tokens,
``repeats: 5`` with every repeat kept (``take_first_k``, k = 5: without it lm-eval scores the
first answer only), repeat r being run r.

:func:`process_results` reads each of a record's answers with its task's reader
(:func:`taxpraben.api.reading.read_answer`) and gives every metric the record's readings (the
sample line's ``readings``: per run its samples.jsonl line, with ``read_by``, ``evidence``,
``confidence``, ``failure``). The aggregations (:data:`AGGREGATIONS`, one per metric) make
the task's figures of all of them with taxpraben's own rules
(:func:`taxpraben.api.figures.task_figures`: ACC, weighted F1 and Macro-F1 per run; EM;
BERTScore and BARTScore, the semantic scorers run once over the task's pairs; the mixed
item mean; then the mean over runs), made once and shared by every metric of the task. The
group's ``score`` is the unweighted mean of the task scores: the Overall Average. A figure
not computed (a semantic scorer that cannot be loaded) is NaN.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import cast

from taxpraben.api.reading import read_answer, task_spec
from taxpraben.integrations.harness import (
    figures_by_task,
    flat_figures,
    record_of_state,
    record_state,
    sample_state,
)
from taxpraben.results.json_value import JSONObject, JSONValue

#: The runs of the paper (the YAML's ``repeats`` and its ``take_first_k``).
RUNS = 5
#: The name of the filter that keeps every repeat; the results' keys are ``METRIC,all-runs``.
FILTER = "all-runs"
#: The folder of the YAML tasks, inside this package.
TASKS_FOLDER = "lm_eval"
#: The YAML's generation settings (``_default_template_yaml``): greedy, no stop, 1024 new tokens.
GENERATION: Mapping[str, JSONValue] = {"until": [], "do_sample": False, "temperature": 0.0, "max_gen_toks": 1024}
#: The metrics whose lower values are better (the YAML's ``higher_is_better: false``).
LOWER_IS_BETTER = frozenset({"missing_rate", "format_failure_rate"})
#: What a sample line holds under every metric but ``readings`` (where the readings are).
SEE_READINGS = "see readings"


def include_path() -> Path:
    """The folder of the YAML tasks (lm-eval's ``--include_path``, ``TaskManager(include_path=...)``)."""
    return Path(str(resources.files("taxpraben.integrations").joinpath(TASKS_FOLDER)))


def task_name(task: str) -> str:
    """The lm-eval name of a dataset: ``TaxSCQ`` -> ``taxpraben_taxscq``."""
    return f"taxpraben_{task.lower()}"


def docs(task: str, data: str = "sample", limit: int | None = None) -> list[JSONObject]:
    """The records of ``task`` in ``data`` as lm-eval documents: ``task``, ``id``, ``query``
    (the prompt), ``target`` (the gold as text) and ``record`` (the whole record as JSON text,
    so that every dataset's documents have one column type whatever their fields)."""
    from taxpraben.data.loader import load_data
    from taxpraben.tasks import load_registry

    name = task_spec(task).name
    loaded = load_data(data, load_registry(), [name], limit)
    return [{"task": name, "id": rec.id, "query": rec.query, "target": rec.gold_label,
             "record": json.dumps(record_state(rec), ensure_ascii=False)} for rec in loaded.records[name]]  # fmt: skip


def dataset(task: str, data: str = "sample", limit: int | None = None, **metadata: object) -> object:
    """lm-eval's ``custom_dataset``: a ``datasets.DatasetDict`` whose ``test`` split is
    :func:`docs`. ``data`` and ``limit`` come from ``--metadata`` (its other keys, and the
    YAML's, are not the dataset's)."""
    from datasets import Dataset, DatasetDict  # type: ignore[import-untyped]  # datasets (lm-eval's) ships no types

    return DatasetDict({"test": Dataset.from_list(docs(task, data, limit))})


class Readings:
    """One document's readings (:attr:`state`: its task, id and per run the read sample) as
    the value of every metric but ``readings``: the aggregations find the readings in it, and
    the sample line, which writes it as text, points to ``readings``, where they are written
    once."""

    __slots__ = ("state",)

    def __init__(self, state: JSONObject) -> None:
        self.state = state

    def __str__(self) -> str:
        return SEE_READINGS


def metric_names(task: str) -> list[str]:
    """The metrics of ``task``'s YAML: its kind's selected metrics, ``score``,
    ``format_failure_rate`` and ``readings`` (the count of readings: items x runs)."""
    from taxpraben.kinds import kind_of

    spec = task_spec(task)
    chosen = set(spec.metrics)  # the kind's selection: the spec's, its diagnostics, their companions
    reported = [m.key for m in kind_of(spec).metrics if m.key in chosen or m.always or m.companion_of in chosen]
    return [*reported, "score", "format_failure_rate", "readings"]


def process_results(doc: Mapping[str, str], results: Sequence[Sequence[str]]) -> dict[str, object]:
    """Read each repeat of the document's one request (``results[0]``: every repeat, run r
    the r-th) with the task's reader: ``readings`` holds them as JSON, every other metric the
    same readings by reference (:class:`Readings`)."""
    record = record_of_state(json.loads(doc["record"]))
    runs: list[JSONValue] = [sample_state(read_answer(doc["task"], record, output, run=run).sample)
                             for run, output in enumerate(results[0])]  # fmt: skip
    state: JSONObject = {"task": doc["task"], "id": doc["id"], "runs": runs}
    shared = Readings(state)
    return {name: state if name == "readings" else shared for name in metric_names(doc["task"])}


#: The last figures made, with the readings they were made of (kept alive, so that their ids
#: are not reused): every metric of a task is aggregated over the same readings.
_LAST: list[tuple[list[JSONObject], dict[str, float | None]]] = []


def _states(items: Sequence[object]) -> list[JSONObject]:
    """The readings of each document (a metric's value: :class:`Readings`, or the readings)."""
    return [item.state if isinstance(item, Readings) else cast("JSONObject", item) for item in items]


def _runs(state: JSONObject) -> list[JSONObject]:
    return cast("list[JSONObject]", state["runs"])


def task_figures_of(items: Sequence[object]) -> dict[str, float | None]:
    """The flat figures (:func:`~taxpraben.integrations.harness.flat_figures`) of one task's
    documents' readings, made once for all its metrics."""
    states = _states(items)
    if _LAST and len(_LAST[0][0]) == len(states) and all(a is b for a, b in zip(_LAST[0][0], states, strict=True)):
        return _LAST[0][1]
    figures = figures_by_task(run for state in states for run in _runs(state))
    flat: dict[str, float | None] = {}
    for name, result in figures.items():
        flat.update(flat_figures(name, result, prefix=False))
    _LAST[:] = [(states, flat)]
    return flat


def aggregation(metric: str) -> Callable[[Sequence[object]], float | int]:
    """The aggregation of ``metric``: its figure (the mean over runs) of the task's readings;
    NaN when not computed. ``readings``: how many readings (documents x runs)."""

    def aggregate(items: Sequence[object]) -> float | int:
        if metric == "readings":
            return sum(len(_runs(state)) for state in _states(items))
        value = task_figures_of(items).get(metric)
        return value if value is not None else math.nan

    aggregate.__name__ = metric
    aggregate.__qualname__ = metric
    return aggregate


#: Every metric's aggregation, named in the YAML as ``taxpraben.integrations.lm_eval_tasks.NAME``.
acc = aggregation("acc")
f1 = aggregation("f1")
macro_f1 = aggregation("macro_f1")
missing_rate = aggregation("missing_rate")
em = aggregation("em")
bertscore = aggregation("bertscore")
bartscore = aggregation("bartscore")
bartscore_raw = aggregation("bartscore_raw")
score = aggregation("score")
format_failure_rate = aggregation("format_failure_rate")
readings = aggregation("readings")

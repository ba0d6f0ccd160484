"""TaxPraBen as Inspect AI tasks, scored by taxpraben's readers (``pip install taxpraben[inspect]``).

``inspect eval taxpraben/taxscq --model openai/... -T data=DIR`` runs one dataset,
``taxpraben/taxpraben`` all 14 (the entry point ``inspect_ai`` of pyproject.toml imports this
module). Each record's query is sent verbatim as one user message with seed + epoch (run r
sends seed SEED+r, as ``taxpraben run``), ``Epochs(5, "mean")`` by default. The scorer reads
each output with the task's reader (:func:`taxpraben.api.reading.read_answer`): its ``Score``
has the exact per-item scores as its value, the reading as its answer, the rule, confidence and
evidence as its explanation and metadata, and ``reason="invalid_response_format"`` for a format
failure. The metric is taxpraben's figures over every sample and epoch (``scores="unreduced"``:
per run first, then the mean over runs; the semantic scorers run once, batched, over all pairs).
``-T judge=openai:NAME -T judge_base_url=URL -T judge_api_key_env=VAR`` adds the grounded judge
of ``taxpraben score --judge`` (:mod:`taxpraben.integrations.judging`): it reads what the rules
could not, and the figures are of the readings it leaves.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.dataset import Sample as InspectSample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, Value, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from taxpraben.api.reading import read_answer, reading_of, task_spec
from taxpraben.integrations.harness import (
    figures_by_task,
    record_of_state,
    record_state,
    sample_state,
)
from taxpraben.integrations.inspect_log import inspect_figures, inspect_score
from taxpraben.integrations.judging import sample_judge
from taxpraben.tasks import load_registry

#: Runs of the paper: every figure is the mean over 5.
RUNS = 5


def taxpraben_dataset(tasks: list[str], data: str, limit: int | None = None) -> MemoryDataset:
    """The records of ``tasks`` in ``data`` (a data directory or "sample"), checked as
    ``taxpraben validate`` checks them, as Inspect samples: input = the query, target = the gold
    as text, id = TASK/ID, the record in the metadata."""
    from taxpraben.data.loader import load_data

    registry = load_registry()
    loaded = load_data(data, registry, tasks, limit)
    samples = [
        InspectSample(input=rec.query, target=rec.gold_label, id=f"{rec.task}/{rec.id}",
                      metadata={"task": rec.task, "record": record_state(rec)})
        for task_name in tasks for rec in loaded.records[task_name]
    ]  # fmt: skip
    return MemoryDataset(samples, name="taxpraben" if len(tasks) > 1 else tasks[0])


@solver
def query_verbatim(seed: int = 0) -> Solver:
    """Send the record's query as it is (one user message, zero-shot) with seed SEED + run."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, seed=seed + state.epoch - 1)

    return solve


@metric(scores="unreduced")
def taxpraben_figures() -> Metric:
    """taxpraben's figures of every sample and epoch: per task, each metric's mean over runs
    (ACC, weighted F1 and Macro-F1 over a run; EM; BERTScore, BARTScore; the mixed item mean),
    the task score and the format-failure rate; with several tasks, keys TASK/metric and the
    Overall Average (``overall``). The semantic scorers are the protocol's models, or those
    the environment names (``TAXPRABEN_BERTSCORE_MODEL``, ... as for ``taxpraben score``)."""

    def compute(scores: list[SampleScore]) -> Value:
        states = [s.score.metadata["sample"] for s in scores if s.score.metadata and "sample" in s.score.metadata]
        if not states:  # Inspect calls a metric once with no scores first
            return {}
        return inspect_figures(figures_by_task(states))

    return compute


@scorer(metrics=[taxpraben_figures()])
def taxpraben_scorer(profile: str = "taxpraben", judge: str | None = None, judge_base_url: str | None = None,
                     judge_api_key_env: str | None = None) -> Scorer:  # fmt: skip
    """Read each output with its task's reader under ``profile`` (taxpraben | taxben); with
    ``judge`` (``openai:NAME`` at ``judge_base_url``, its key in ``judge_api_key_env``), the
    grounded judge of ``taxpraben score --judge`` reads what the rules could not, or read only
    by a fallback (:mod:`taxpraben.integrations.judging`)."""
    judging = (sample_judge(judge, load_registry(), base_url=judge_base_url, api_key_env=judge_api_key_env,
                            profile=profile) if judge else None)  # fmt: skip

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        record = record_of_state(meta["record"])
        output = state.output.completion if state.output is not None else None
        reading = read_answer(meta["task"], record, output, run=state.epoch - 1, profile=profile)
        if judging is not None:
            judged = await judging.judged(reading.sample, record)
            reading = reading_of(judged) if judged is not reading.sample else reading
        return inspect_score(reading, state.epoch - 1, {"sample": sample_state(reading.sample)})

    return score


def taxpraben_task(tasks: list[str], data: str = "sample", runs: int = RUNS, seed: int = 0,
                   profile: str = "taxpraben", limit: int | None = None, max_tokens: int | None = None,
                   judge: str | None = None, judge_base_url: str | None = None,
                   judge_api_key_env: str | None = None) -> Task:  # fmt: skip
    """An Inspect task of ``tasks``: their records, the query verbatim at temperature 0,
    ``runs`` epochs (the mean over them), taxpraben's reading (and ``judge``'s) and figures."""
    config = GenerateConfig(temperature=0.0, max_tokens=max_tokens)
    scoring = taxpraben_scorer(profile, judge, judge_base_url, judge_api_key_env)
    return Task(dataset=taxpraben_dataset(tasks, data, limit), solver=query_verbatim(seed), scorer=scoring,
                epochs=Epochs(runs, "mean"), config=config, name=tasks[0].lower() if len(tasks) == 1 else "taxpraben")  # fmt: skip


def _one_task(name: str) -> Callable[..., Task]:
    def make(data: str = "sample", runs: int = RUNS, seed: int = 0, profile: str = "taxpraben",
             limit: int | None = None, max_tokens: int | None = None, judge: str | None = None,
             judge_base_url: str | None = None, judge_api_key_env: str | None = None) -> Task:  # fmt: skip
        return taxpraben_task([name], data, runs, seed, profile, limit, max_tokens, judge, judge_base_url,
                              judge_api_key_env)  # fmt: skip

    make.__name__ = name.lower()
    make.__doc__ = f"TaxPraBen {name} ({task_spec(name).name_zh}), scored by taxpraben's readers."
    return task(name=name.lower())(make)


@task(name="taxpraben")
def taxpraben(data: str = "sample", runs: int = RUNS, seed: int = 0, profile: str = "taxpraben",
              limit: int | None = None, max_tokens: int | None = None, judge: str | None = None,
              judge_base_url: str | None = None, judge_api_key_env: str | None = None) -> Task:  # fmt: skip
    """All 14 TaxPraBen datasets in one task: per-task figures and the Overall Average."""
    return taxpraben_task(list(load_registry()), data, runs, seed, profile, limit, max_tokens, judge, judge_base_url,
                          judge_api_key_env)  # fmt: skip


for _name in load_registry():
    globals()[_name.lower()] = _one_task(_name)

"""Tasks scored while the later ones still generate (``run``): :class:`EarlyScores`.

Scoring a task needs nothing of the other tasks but the bootstrap's generator, which is drawn
from task after task in data order. So once a task's generation is complete (every run of
every record answered or failed for good: :class:`~taxpraben.jobs.completion.TaskCompletion`)
and every task before it is scored, ``run`` scores it on the scoring thread, after the
readings of its answers, with the very function scoring uses at the end
(:func:`~taxpraben.scoring.task_scores.score_task`); its samples.jsonl lines wait in a
temporary file. The end of the run then scores only the tasks left and writes the files
(the tail of a run at concurrency 256 held the scoring of every task: 150 ms of ~500).

When it applies (:meth:`EarlyScores.applies`): the scorers load nothing (semantic metrics off,
or no task of the job needs one: their values are then the same empty ones for every task) and
no judge reads the items (it reads every task's items at once). A task whose generations are
shared between runs, or whose runs read different records, is left to the end, and the
tasks after it with it.

What the end takes (:meth:`EarlyScores.taken`): the tasks scored early, only if they are the
first tasks of the data in its order, with the same records in the same order, the same runs,
and each item's prediction the very one scoring was handed; otherwise none of them, and scoring
starts over from the first task (nothing was handed on before that check).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

import numpy as np

from taxpraben.kinds import kind_of
from taxpraben.scoring.items import Readings, SemanticValues
from taxpraben.scoring.semantic import build_scorers
from taxpraben.scoring.settings import ScoringSettings
from taxpraben.scoring.task_scores import TaskScores, new_generator, sample_text, score_task
from taxpraben.tasks import Registry

if TYPE_CHECKING:
    from taxpraben.costs.ledger import CostOf
    from taxpraben.data.loader import LoadedData
    from taxpraben.records import Record
    from taxpraben.results.predictions import Prediction


@dataclass
class Taken:
    """What the end of a run takes: the tasks scored early (the first ones of the data, in
    its order) and the bootstrap's generator as they left it."""

    tasks: dict[str, TaskScores]
    rng: np.random.Generator | None


class EarlyScores:
    """The tasks of a run scored as each one's generation completes (see the module doc).

    :meth:`complete` is called on the scoring thread (one thread: no lock), :meth:`taken`
    and :meth:`text_of` at the end, on the main thread, once every early job is done
    (:class:`~taxpraben.jobs.read_ahead.ScoreAlongside` waits for them)."""

    def __init__(
        self, registry: Registry, settings: ScoringSettings, readings: Readings, order: Sequence[str],
        cost_of: CostOf | None = None,
    ) -> None:  # fmt: skip
        self._registry = registry
        self._settings = settings
        self._readings = readings
        self._order = list(order)
        self._cost_of = cost_of
        self._run_ids = list(range(settings.runs)) if settings.runs is not None else None
        self._rng = new_generator(settings)
        self._values = SemanticValues(bert_f1=None, bart_raw=None)
        self._waiting: dict[str, list[tuple[Record, int, Prediction]]] = {}
        self._scored: dict[str, TaskScores] = {}
        #: Per task scored: its records' ids in order, and the prediction of each item.
        self._ids: dict[str, list[str]] = {}
        self._used: dict[str, dict[tuple[str, int], Prediction]] = {}
        self._spills: dict[str, IO[str]] = {}
        self._stopped = self._run_ids is None

    @staticmethod
    def applies(registry: Registry, settings: ScoringSettings, tasks: Sequence[str]) -> bool:
        """Whether a run of ``tasks`` (with no judge) can score early: scorers that load nothing."""
        if settings.runs is None:
            return False
        needed = set().union(*(kind_of(registry[t]).scorers(registry[t]) for t in tasks if t in registry))
        return not settings.semantic or not needed

    # ------------------------------------------------------------ the scoring thread

    def complete(self, task: str, entries: list[tuple[Record, int, Prediction]]) -> None:
        """``task``'s generation is complete: it is scored, and each task after it whose
        generation completed before, as long as each is the next one of the data."""
        if self._stopped:
            return
        self._waiting[task] = entries
        while len(self._scored) < len(self._order):
            upcoming = self._order[len(self._scored)]
            ready = self._waiting.pop(upcoming, None)
            if ready is None:
                return
            try:
                if not self._score(upcoming, ready):
                    self._stopped = True
            except Exception:  # scored at the end instead, where its error shows as it always has
                self._stopped = True
            if self._stopped:
                self._waiting.clear()
                return

    def _score(self, task: str, entries: list[tuple[Record, int, Prediction]]) -> bool:
        assert self._run_ids is not None
        spec = self._registry[task]
        first = self._run_ids[0] if self._run_ids else None
        records = [record for record, run, _ in entries if run == first]
        used: dict[tuple[str, int], Prediction] = {}
        for record, run, prediction in entries:
            if prediction.run != run or prediction.id != record.id or (record.id, run) in used:
                return False  # a generation shared between runs (or not this item's): left to the end
            used[(record.id, run)] = prediction
        if len(used) != len(records) * len(self._run_ids) or len({r.id for r in records}) != len(records):
            return False
        rows = [[self._readings.read(spec, record, run, used[(record.id, run)]) for record in records]
                for run in self._run_ids]  # fmt: skip
        unavailable = build_scorers(self._settings, kind_of(spec).scorers(spec)).unavailable
        scores = score_task(spec, records, rows, self._run_ids, self._values, unavailable, self._rng,
                            self._settings.bootstrap, self._cost_of)  # fmt: skip
        spill = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed by text_of or close)
        spill.write(sample_text(scores.lines))
        scores.lines = []  # on disk until the end writes samples.jsonl
        self._spills[task] = spill
        self._scored[task] = scores
        self._ids[task] = [r.id for r in records]
        self._used[task] = used
        return True

    # ------------------------------------------------------------ the end

    def taken(
        self, loaded: LoadedData, run_ids: list[int], by_key: dict[tuple[str, str, int], Prediction],
        *, shared_generation: bool = False,
    ) -> Taken | None:  # fmt: skip
        """The tasks scored early that scoring of ``loaded`` with ``by_key`` takes as they
        are (see the module doc), or None (then none of them)."""
        if not self._scored or run_ids != self._run_ids or shared_generation:
            self.close()
            return None
        scored = list(self._scored)
        if list(loaded.records)[: len(scored)] != scored:
            self.close()
            return None
        for task in scored:
            if [r.id for r in loaded.records[task]] != self._ids[task] or any(
                by_key.get((task, item_id, run)) is not prediction
                for (item_id, run), prediction in self._used[task].items()
            ):
                self.close()
                return None
        return Taken(dict(self._scored), self._rng)

    def scored(self) -> list[TaskScores]:
        """The tasks scored so far, in data order."""
        return list(self._scored.values())

    def text_of(self, task: str) -> str:
        """The samples.jsonl text of ``task`` (scored early), read back once."""
        spill = self._spills.pop(task)
        with spill:
            spill.seek(0)
            return spill.read()

    def close(self) -> None:
        """Drop what was scored early (and its files)."""
        for spill in self._spills.values():
            spill.close()
        self._spills = {}
        self._scored = {}

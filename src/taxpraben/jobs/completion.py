"""Which tasks of ``run`` have their generation complete, while the later tasks still generate
(:class:`TaskCompletion`): what the judge asks for (:class:`~taxpraben.jobs.judge.JudgeAlongside`)
and what is scored early (:class:`~taxpraben.scoring.early.EarlyScores`) wait for."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taxpraben.models.base import Request
    from taxpraben.records import Record
    from taxpraben.results.predictions import Prediction

#: A task's generation, complete: each of its requests' record and run with the prediction
#: handed for the request's generation, in the order the runner read the requests.
Entries = list[tuple["Record", int, "Prediction"]]

#: Told each task once its generation is complete (on the event loop's thread).
OnComplete = Callable[[str, Entries], None]


class TaskCompletion:
    """Tells each listener of every task once each of its generations (all its runs) is
    answered or failed for good and its data file is read, from the runner's hooks: ``read``
    (its ``on_read``), ``answered`` (its ``on_answer``) and the data's ``fed``
    (``stream_requests``'). Before the first answer it only notes what was read: nothing is
    looked at while the first requests are being sent. All on the event loop's thread."""

    def __init__(self, listeners: Sequence[OnComplete]) -> None:
        self._listeners = list(listeners)
        #: Per task, its requests as the runner read them, with their generation keys; how
        #: many it has, once the data says (``fed``).
        self._requests: dict[str, list[tuple[str, Request]]] = {}
        self._expected: dict[str, int] = {}
        self._key_of: dict[tuple[str, str, int], str] = {}
        #: The prediction handed for each generation key.
        self._outcomes: dict[str, Prediction] = {}
        #: Tasks whose requests were all read, not yet looked at; per task the keys it waits for.
        self._told: list[str] = []
        self._waiting: dict[str, set[str]] = {}
        self._by_key: dict[str, list[str]] = {}
        self._started = False

    def read(self, key: str, request: Request) -> None:
        """The runner's ``on_read``: one request read from the feed, with its key."""
        task = request.record.task
        read = self._requests.setdefault(task, [])
        read.append((key, request))
        self._key_of[request.key] = key
        if len(read) == self._expected.get(task):
            self._tell(task)

    def fed(self, task: str, requests: int) -> None:
        """``task`` has ``requests`` requests, all handed out by the data (``stream_requests``'
        ``fed``): it is told once the runner has read as many (a stage between the two, such
        as ``--batch``'s, may hold them for a while)."""
        self._expected[task] = requests
        if len(self._requests.get(task, ())) >= requests:
            self._tell(task)

    def _tell(self, task: str) -> None:
        self._told.append(task)
        if self._started:
            self._look()

    def answered(self, request: Request, prediction: Prediction) -> None:
        """One generation answered or failed for good (the runner's ``on_answer``)."""
        key = self._key_of.get(request.key)
        if key is None:  # not read through this runner: its task is left to scoring
            return
        self._outcomes[key] = prediction
        if not self._started:
            self._started = True
            self._look()
        for task in self._by_key.pop(key, ()):
            waiting = self._waiting[task]
            waiting.discard(key)
            if not waiting:
                self._complete(task)

    def _look(self) -> None:
        """The tasks told so far: those with every key answered are complete; the others
        wait for their missing keys."""
        told, self._told = self._told, []
        for task in told:
            waiting = {key for key, _ in self._requests.get(task, ()) if key not in self._outcomes}
            if not waiting:
                self._complete(task)
                continue
            self._waiting[task] = waiting
            for key in waiting:
                self._by_key.setdefault(key, []).append(task)

    def _complete(self, task: str) -> None:
        self._waiting.pop(task, None)
        entries = [(request.record, request.run, self._outcomes[key]) for key, request in self._requests.pop(task, ())]
        for listener in self._listeners:
            listener(task, entries)


def answering(*hooks: Callable[[Request, Prediction], None] | None) -> Callable[[Request, Prediction], None] | None:
    """One ``on_answer`` that calls each of ``hooks`` (those not None) in turn."""
    called = [hook for hook in hooks if hook is not None]
    if len(called) <= 1:
        return called[0] if called else None

    def on_answer(request: Request, prediction: Prediction) -> None:
        for hook in called:
            hook(request, prediction)

    return on_answer

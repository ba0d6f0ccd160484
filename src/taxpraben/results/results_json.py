"""results.json as a whole (:class:`Results`)."""

from __future__ import annotations

from taxpraben.results.figures import Groups, Ledger, OverallStat, Review, TaskResult
from taxpraben.results.file_object import SCHEMA_VERSION, FileObject, described, required
from taxpraben.results.meta import Meta


class Results(FileObject):
    """``results.json``: everything a report or leaderboard shows."""

    schema_version: int = required(f"The layout's version; this code writes and reads {SCHEMA_VERSION}.")
    meta: Meta = described("How the results were made.", default_factory=Meta)
    tasks: dict[str, TaskResult] = required("Per task, by name.")
    groups: Groups = described("Task scores by output kind and by Bloom level.", default_factory=Groups)
    overall: OverallStat = described(
        "Overall Average: the unweighted mean of the computed tasks' scores, per run.",
        default_factory=OverallStat,
    )
    ledger: Ledger | None = described("The tasks' ledgers added up: truncation and cost of the whole run.")
    review: Review | None = described("People's check of the readings (`taxpraben review`).",
                                   when="`report` of a directory with review.jsonl")

"""What is said beside an Overall Average: each way it is not the paper's figure.

A figure is only what it knows. Beside every Overall Average (report.md, report.html, the
terminal, summary.csv, the leaderboard) stand, in this order: ``partial: 13 of 14`` (tasks of
the benchmark missing), ``non-standard scorer`` (BERTScore/BARTScore not set up as the paper's:
:func:`taxpraben.manifest.is_paper_scorer`), ``limited: first 2 per task`` (``--limit`` kept
fewer records than the data has) and ``1 run`` (fewer runs than the paper's 5: no spread).

The scorer setup of a result (:func:`scorer_setup_of`) is ``meta.manifest.scorer_setup``; for
results written before it, it is derived from ``meta.scorers`` as the writer derives it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from taxpraben.coverage import coverage_of
from taxpraben.manifest import comparable_setup, describe_setup, is_paper_scorer, scorer_setup

if TYPE_CHECKING:
    from taxpraben.results import Results
    from taxpraben.results.json_value import JSONObject

#: The paper's runs per figure (every figure is the mean over 5 independent runs).
PAPER_RUNS = 5
#: Beside an Overall Average whose semantic scorers are not the paper's.
NON_STANDARD_SCORER = "non-standard scorer"


def scorer_setup_of(results: Results) -> dict[str, JSONObject]:
    """The setup of the semantic scorers that made ``results`` (see the module doc). Read by
    attribute, not serialised: ``run``'s reports build no validator they need not (tests/test_cli.py)."""
    manifest = results.meta.manifest
    recorded = getattr(manifest, "scorer_setup", None)
    if isinstance(recorded, dict):
        return {name: entry for name, entry in recorded.items() if isinstance(entry, dict)}
    revisions: JSONObject = {}
    for name, revision in (manifest.scorers if manifest is not None else {}).items():
        revisions[name] = {"revision": revision.revision, "weights_sha256": revision.weights_sha256}
    scorers: JSONObject = {name: info.to_json() for name, info in results.meta.scorers.items()}
    return scorer_setup(scorers, revisions)


def non_standard_scorer(results: Results) -> bool:
    """True when a semantic scorer of ``results`` scored with a setup other than the paper's."""
    return is_paper_scorer(scorer_setup_of(results)) is False


def limit_words(limit: object) -> str:
    """``meta.limit`` as words: ``first 50 per task`` (a count), ``first 10% per task`` (a fraction)."""
    if isinstance(limit, float) and 0 < limit < 1:
        return f"first {limit * 100:g}% per task"
    return f"first {limit} per task"


def overall_flags(results: Results) -> list[str]:
    """The flags beside the Overall Average of ``results`` (module doc), in order; [] for the
    paper's figure."""
    flags = []
    coverage = coverage_of(results)
    if coverage.partial:
        flags.append(coverage.label)
    if non_standard_scorer(results):
        flags.append(NON_STANDARD_SCORER)
    if results.meta.limit is not None:
        flags.append(f"limited: {limit_words(results.meta.limit)}")
    runs = results.meta.runs or len(results.overall.runs)
    if runs and runs < PAPER_RUNS:
        flags.append(f"{runs} run" + ("s" if runs > 1 else ""))
    return flags


def flags_text(results: Results) -> str:
    """:func:`overall_flags` joined by `` · `` ('' when there is none)."""
    return " · ".join(overall_flags(results))


def scorer_refusal(results: Mapping[str, Results]) -> tuple[str | None, dict[str, str]]:
    """Results (by label) whose semantic scorers were set up differently (model, revision or
    weights, layer, idf, truncation, dtype): the problem, each setup in words, and each label's
    table marker; (None, {}) when every setup is one. Results without semantic scores do not
    count: only the setups of results that scored with a scorer are compared."""
    setups = {label: scorer_setup_of(r) for label, r in results.items()}
    compared = {label: setup for label, setup in setups.items() if setup}
    if len({comparable_setup(setup) for setup in compared.values()}) <= 1:
        return None, {}
    markers = {label: f"not comparable: scorer {describe_setup(setup)}" for label, setup in compared.items()}
    listing = "; ".join(f"{label}: {describe_setup(setup)}" for label, setup in compared.items())
    return f"different scorer setups ({listing}): every BERTScore and BARTScore figure moves with them", markers

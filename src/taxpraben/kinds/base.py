"""What a task kind is: the protocol every kind implements, the metrics it declares, and
the values scoring passes through it.

A task's *kind* (its spec's ``type:``) decides how one prediction is read and scored, which
metrics the task reports and how they are aggregated, and which semantic scorers it needs.
Everything that depends on the kind lives in the kind's module; scoring, loading, the
baselines and the reports ask the kind (``taxpraben.kinds.kind_of(spec)``).

Scoring is two-phase so that the semantic scorers see every text pair of a whole
evaluation at once (golds repeat over runs; identical predictions repeat too):

1. :meth:`TaskKind.prepare` parses the prediction, scores everything exact and lists the
   text pairs that need BERTScore / BARTScore;
2. the pipeline scores all pairs in one batch per scorer (:class:`SemanticValues`);
3. :meth:`TaskKind.finish` combines both into the item's scores and its score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import random

    import numpy as np

    from taxpraben.records import Record
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.results.samples import Sample, Status, TextPair
    from taxpraben.task_spec import TaskSpec

#: How a figure is shown to people: a fraction (as points out of 100), a raw value, a rate (%).
Display = Literal["fraction", "raw", "rate"]
#: How a record's fields are scored: JSON-shaped fields (mixed) or aspects of a text answer.
FieldMode = Literal["fields", "aspects"]


class SpecMismatch(ValueError):
    """A task spec that does not fit its kind; ``key`` is the spec key at fault."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"key {key}: {message}")
        self.key = key


@dataclass(frozen=True)
class Noted:
    """How an output was read, as samples.jsonl says it (:func:`noted`): ``read_by``
    ("rule:<name>"), the ``evidence`` span of the raw prediction, the rule's ``confidence``;
    a format failure: the ``veto`` that decided it. All None: nothing read."""

    read_by: str | None = None
    evidence: tuple[int, int] | None = None
    confidence: str | None = None
    veto: str | None = None


def noted(status: Status, prediction: str, rule: str | None, source: str | None = None,
          answers: Sequence[str] = (), span: tuple[int, int] | None = None) -> Noted:
    """How an item of ``status`` was read: by ``rule`` (a format failure: the veto ``rule``),
    from the stretch ``source`` of the reader's text holding one of ``answers`` (the texts the
    answer may be written as, preferred first); the evidence span is found in the raw
    ``prediction`` (:func:`taxpraben.parsing.evidence.evidence_span`), or is ``span`` when the
    rule read the raw prediction itself."""
    from taxpraben.parsing.evidence import evidence_span
    from taxpraben.parsing.rules import confidence_of

    if status != "ok":
        return Noted(veto=rule if rule and rule.startswith("veto.") else None)
    if not rule:
        return Noted()
    evidence = span if span is not None else evidence_span(prediction, source, answers)
    return Noted(f"rule:{rule}", evidence, confidence_of(rule))


@dataclass(frozen=True)
class Prepared:
    """What a kind's :meth:`~TaskKind.prepare` read and scored of one prediction (a frozen
    value; the caller makes the item of it): the status, what was extracted, why nothing was,
    the exact scores, the labels (classification), the fields (mixed, aspects), the text
    pairs for the semantic scorers and how it was read."""

    status: Status = "ok"
    extracted: JSONValue = None
    failure: str | None = None
    scores: dict[str, float | None] = field(default_factory=dict)
    label_gold: str | None = None
    label_pred: str | None = None
    fields: dict[str, JSONObject] | None = None
    pairs: tuple[TextPair, ...] = ()
    reading: Noted = Noted()


#: What a kind's :meth:`~Kind.finish_parts` adds: semantic scores, and the fields with theirs.
Parts = tuple[dict[str, "float | None"], "dict[str, JSONObject] | None"]


@dataclass(frozen=True)
class Finished:
    """A finished item's scores, its score (None: a needed scorer is unavailable) and its
    fields with their semantic scores: new values, the item is not changed."""

    scores: dict[str, float | None]
    score: float | None
    fields: dict[str, JSONObject] | None = None


def with_prepared(sample: Sample, prepared: Prepared) -> Sample:
    """A new sample: ``sample`` with what its kind read and scored (:meth:`TaskKind.prepare`'s value)."""
    how = prepared.reading
    return sample.evolve(
        status=prepared.status, extracted=prepared.extracted, failure=prepared.failure,
        scores=dict(prepared.scores), label_gold=prepared.label_gold, label_pred=prepared.label_pred,
        fields=prepared.fields, pairs=prepared.pairs, read_by=how.read_by,
        evidence=list(how.evidence) if how.evidence is not None else None, confidence=how.confidence, veto=how.veto,
    )  # fmt: skip


def with_finished(sample: Sample, finished: Finished) -> Sample:
    """A new sample: ``sample`` with its scores, score and fields finished (:meth:`TaskKind.finish`)."""
    return sample.evolve(scores=finished.scores, score=finished.score, fields=finished.fields)


@dataclass(frozen=True)
class SemanticValues:
    """Semantic scores looked up by (candidate, reference); None when the scorer is unavailable."""

    bert_f1: dict[tuple[str, str], float] | None
    bart_raw: dict[tuple[str, str], float] | None


#: A metric computed for one item from its prepared state (and the semantic values).
ItemMetric = Callable[["Sample", SemanticValues], "float | None"]


@dataclass(frozen=True)
class Metric:
    """A metric a kind declares: its key in results.json, how people see it, how it is made.

    The spec's ``metrics:`` selects among a kind's declared metrics. ``always`` metrics are
    reported whatever the selection (diagnostics such as the missing-label rate);
    ``companion_of`` ones whenever the metric they accompany is (raw BARTScore). A selected
    ``in_score`` metric is part of the item's score (the mean of its selected parts).
    ``item`` computes an added metric for one item; the built-in metrics are computed by
    their kind. The task figure of an item metric is its mean over the items that have it.
    """

    key: str
    label: str
    description: str = ""
    #: The semantic scorer it needs ("bertscore" or "bartscore"), if any.
    scorer: str | None = None
    in_score: bool = True
    always: bool = False
    companion_of: str | None = None
    display: Display = "fraction"
    #: Position among the columns of the paper table; None: not a column there.
    column: int | None = None
    item: ItemMetric | None = None
    #: The range its values can take (a task figure's t-interval is clipped to it): a
    #: fraction in [0, 1] unless the metric says otherwise (raw BARTScore: at most 0).
    bounds: tuple[float, float] = (0.0, 1.0)

    @property
    def selectable(self) -> bool:
        """Whether a spec may name it in ``metrics:`` (diagnostics and companions come alone)."""
        return not self.always and self.companion_of is None


@runtime_checkable
class TaskKind(Protocol):
    """What every kind provides; :class:`Kind` implements the parts most kinds share."""

    name: str
    label: str

    @property
    def metrics(self) -> tuple[Metric, ...]: ...

    def check_spec(self, spec: TaskSpec) -> None: ...

    def check_gold(self, spec: TaskSpec, obj: JSONObject, answer: JSONValue, choices: tuple[str, ...] | None,
                   bad: Callable[[str, str], None]) -> tuple[JSONValue, int | None]: ...

    def field_mode(self, spec: TaskSpec) -> FieldMode | None: ...

    def reading_kind(self, spec: TaskSpec) -> str: ...

    def scorers(self, spec: TaskSpec) -> set[str]: ...

    def prepare(self, spec: TaskSpec, record: Record, item: Sample, text: str, failed: bool) -> Prepared | None: ...

    def finish(self, spec: TaskSpec, item: Sample, values: SemanticValues) -> Finished: ...

    def run_metrics(self, spec: TaskSpec, items: Sequence[Sample]) -> tuple[dict[str, float | None], float | None]: ...

    def bootstrap(self, spec: TaskSpec, items_by_run: list[list[Sample]], idx: np.ndarray,
                  ) -> tuple[dict[str, list[float] | None], np.ndarray | None]: ...

    def field_figures(self, spec: TaskSpec, items_by_run: list[list[Sample]]) -> JSONObject | None: ...

    def baseline_answer(self, baseline: str, spec: TaskSpec, record: Record, rng: random.Random) -> str | None: ...


def chain_for(spec: TaskSpec, reading_kind: str) -> tuple[str, ...]:
    """The rule names ``spec``'s reader of ``reading_kind`` runs, in order: the spec's own
    chain, the chain of that kind in the set it names, or the default set's
    (:func:`taxpraben.parsing.rules.chain_names`)."""
    from taxpraben.parsing.rules import chain_names  # pure data, imported with the first reading

    return chain_names(spec.reading_chain, reading_kind)


def mean_or_none(xs: Sequence[float | None]) -> float | None:
    """The mean, or None when there is nothing to average or a part is not computed."""
    present = [x for x in xs if x is not None]
    if not xs or len(present) < len(xs):
        return None
    return sum(present) / len(present)


def bert_f1(values: SemanticValues, pair: TextPair) -> float | None:
    """A pair's BERTScore F1: 0 when the prediction lacks the text, None when not computed."""
    if pair.missing:
        return 0.0
    if values.bert_f1 is None:
        return None
    return values.bert_f1[(pair.candidate, pair.reference)]


class Kind:
    """The parts most kinds share: metric selection, the item score as the mean of its
    selected parts, task figures as means over items, and the item bootstrap.

    A kind subclasses it, sets ``name``, ``label`` and ``declared`` (its metrics), and
    implements :meth:`prepare` (and :meth:`finish_parts` when it has semantic parts).
    Metrics registered later for the kind (:func:`taxpraben.kinds.register_metric`) are
    added to ``declared`` by the registry.
    """

    name: str = ""
    label: str = ""
    declared: tuple[Metric, ...] = ()

    # ------------------------------------------------------------------ declarations

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return self.declared

    def metric(self, key: str) -> Metric | None:
        return next((m for m in self.declared if m.key == key), None)

    def selected(self, spec: TaskSpec) -> tuple[Metric, ...]:
        """The metrics the task reports, in declaration order."""
        chosen = set(spec.metrics)
        return tuple(
            m for m in self.declared
            if m.key in chosen or m.always or (m.companion_of is not None and m.companion_of in chosen)
        )

    def score_parts(self, spec: TaskSpec) -> tuple[str, ...]:
        """The selected metrics whose mean is an item's score."""
        chosen = set(spec.metrics)
        return tuple(m.key for m in self.declared if m.in_score and m.key in chosen)

    def check_spec(self, spec: TaskSpec) -> None:
        """Raise :class:`SpecMismatch` (the key, and a sentence for the spec's author) when
        the spec does not fit the kind."""
        selectable = {m.key for m in self.declared if m.selectable}
        unknown = [m for m in spec.metrics if m not in selectable]
        if unknown:
            raise SpecMismatch(
                "metrics", f"{unknown} do not apply to a {self.name} task (allowed: {sorted(selectable)})"
            )
        if not self.score_parts(spec):
            parts = sorted(m.key for m in self.declared if m.in_score)
            raise SpecMismatch("metrics", f"a {self.name} task's metrics must include one of {parts} (they make its score)")
        for section in ("classification", "structured", "fields"):
            if getattr(spec, section) is not None and section not in self.sections:
                raise SpecMismatch(section, f"'{section}' options do not apply to {self.name} tasks")

    #: The spec sections (classification, structured, fields) this kind reads.
    sections: frozenset[str] = frozenset()

    def scorers(self, spec: TaskSpec) -> set[str]:
        """The semantic scorers the task's selected metrics need."""
        return {m.scorer for m in self.selected(spec) if m.scorer is not None}

    def field_mode(self, spec: TaskSpec) -> FieldMode | None:
        return None

    def reading_kind(self, spec: TaskSpec) -> str:
        """Which chain of reading rules reads its outputs (a key of
        :data:`taxpraben.parsing.rules.CHAINS`): "text" unless the kind says otherwise."""
        return "fields" if spec.fields is not None else "text"

    # ------------------------------------------------------------------ data

    def check_gold(self, spec: TaskSpec, obj: JSONObject, answer: JSONValue, choices: tuple[str, ...] | None,
                   bad: Callable[[str, str], None]) -> tuple[JSONValue, int | None]:
        """The record's gold as scoring reads it (and the gold choice index), reporting
        through ``bad(message, field)`` what cannot be scored."""
        return answer, None

    def baseline_answer(self, baseline: str, spec: TaskSpec, record: Record, rng: random.Random) -> str | None:
        """A kind's own answer for a reference baseline (``first-choice``, ``random``); None
        leaves it to the baseline's generic rule."""
        return None

    # ------------------------------------------------------------------ items

    def prepare(self, spec: TaskSpec, record: Record, item: Sample, text: str, failed: bool) -> Prepared | None:
        """Read ``text`` (the cleaned prediction; ``item.text`` the raw one) with the
        spec's chain of the kind's reading kind (:func:`chain_for`: the profile's chain set
        is the spec's, see :mod:`taxpraben.kinds.profiles`) and score its exact parts: the
        :class:`Prepared` value the caller makes the item of (``failed``: the generation
        failed, its status is "error"). A kind registered by a plugin may still write into
        ``item`` and return None."""
        raise NotImplementedError

    def finish_parts(self, spec: TaskSpec, item: Sample, values: SemanticValues) -> Parts:
        """The item's semantic scores (kinds with text pairs) and its fields with theirs: new
        values (none here: its fields as they are)."""
        return {}, item.fields

    def finish(self, spec: TaskSpec, item: Sample, values: SemanticValues) -> Finished:
        """The item's scores, its score (the mean of its selected parts) and its fields: new
        values; the item metrics see an item that has them."""
        added, fields = self.finish_parts(spec, item, values)
        scores = {**item.scores, **added}
        selected = self.selected(spec)
        for m in selected:
            if m.item is not None:  # each sees the sample with the scores made before it (a new one)
                scores = {**scores, m.key: m.item(item.evolve(scores=scores, fields=fields), values)}
        unselected = {m.key for m in self.declared} - {m.key for m in selected}
        scores = {key: value for key, value in scores.items() if key not in unselected}
        return Finished(scores, mean_or_none([scores[k] for k in self.score_parts(spec) if k in scores]), fields)

    # ------------------------------------------------------------------ task figures

    def reported(self, spec: TaskSpec) -> list[str]:
        return [m.key for m in self.selected(spec)]

    def run_metrics(self, spec: TaskSpec, items: Sequence[Sample]) -> tuple[dict[str, float | None], float | None]:
        """Each metric's mean over the items that have it (None when one is not computed),
        and the task score: the mean of the item scores."""
        import numpy as np  # not at the top: loading data needs the kinds, not numpy
        metrics: dict[str, float | None] = {}
        for key in self.reported(spec):
            vals = [it.scores[key] for it in items if key in it.scores]
            metrics[key] = None if not vals or any(v is None for v in vals) else float(np.mean([v for v in vals if v is not None]))
        item_scores = [it.score for it in items]
        score = None if any(s is None for s in item_scores) else float(np.mean([s for s in item_scores if s is not None]))
        return metrics, score

    def bootstrap(self, spec: TaskSpec, items_by_run: list[list[Sample]], idx: np.ndarray,
                  ) -> tuple[dict[str, list[float] | None], np.ndarray | None]:
        """Sample-level bootstrap: resample items (paired across runs), average over runs."""
        import numpy as np

        from taxpraben.aggregate import percentile_interval
        intervals: dict[str, list[float] | None] = {}
        for key in self.reported(spec):
            present = np.array([[key in it.scores for it in items] for items in items_by_run])
            vals = [[it.scores.get(key, 0.0) for it in items] for items in items_by_run]
            if any(v is None for row in vals for v in row) or not present.any():
                intervals[key] = None
                continue
            # Mean over the resampled items that have the metric (all of them but for
            # records whose gold lacks a part); a resample with none is skipped.
            m = np.array(vals, dtype=float)
            sums, counts = (m * present)[:, idx].sum(axis=2), present[:, idx].sum(axis=2)
            ok = (counts > 0).all(axis=0)
            reps = (sums[:, ok] / counts[:, ok]).mean(axis=0)
            intervals[key] = percentile_interval(reps) if reps.size else None
        scores = [[it.score for it in items] for items in items_by_run]
        if any(s is None for row in scores for s in row):
            return intervals, None
        m = np.array(scores, dtype=float)
        return intervals, m[:, idx].mean(axis=2).mean(axis=0)

    def field_figures(self, spec: TaskSpec, items_by_run: list[list[Sample]]) -> JSONObject | None:
        return None

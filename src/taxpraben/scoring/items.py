"""Scoring one prediction against one record, per output type (DESIGN.md section 2).

Scoring is two-phase so that the semantic scorers see every text pair of a whole
evaluation at once (golds repeat over runs; identical predictions repeat too):

1. :func:`prepare_item` cleans and parses the prediction, scores everything exact, and
   lists the text pairs that need BERTScore / BARTScore;
2. the pipeline scores all pairs in one batch per scorer;
3. :func:`finalize_item` combines both into the item's scores.

An item whose prediction cannot be parsed is a ``format_failure`` and scores 0; an item
whose generation failed (or that has no prediction) is an ``error`` and scores 0. Neither
is ever dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from taxpraben.data.records import Record
from taxpraben.metrics.classification import MISSING_LABEL
from taxpraben.parsing import taxben
from taxpraben.parsing.choices import extract_choice_index
from taxpraben.parsing.clean import clean_prediction
from taxpraben.parsing.fields import (
    align_fields,
    field_text,
    field_value_matches,
    gold_fields,
    parse_fields,
    record_fields,
)
from taxpraben.parsing.letters import (
    extract_letter_set,
    listed_option_letters,
    listed_option_texts,
)
from taxpraben.parsing.numbers import (
    expects_percent,
    extract_final_number,
    gold_unit,
    numbers_equal,
    read_gold_number,
)
from taxpraben.parsing.region import is_refusal
from taxpraben.parsing.spans import extract_span, span_match
from taxpraben.scoring.settings import Profile
from taxpraben.tasks import OutputType, TaskSpec

Status = Literal["ok", "format_failure", "error"]


@dataclass(frozen=True)
class TextPair:
    """A (prediction text, gold text) pair for the semantic scorers.

    ``missing`` means the prediction has no such text (a failed item, an absent field):
    it scores 0, but BARTScore still scores the empty prediction for the raw figure.
    """

    name: str
    candidate: str
    reference: str
    missing: bool = False


@dataclass
class PreparedItem:
    task: str
    id: str
    run: int
    status: Status
    prediction: str
    gold: str
    extracted: Any = None
    scores: dict[str, float] = field(default_factory=dict)
    #: mixed / aspects: per field {"pred", "gold", "score", "status", "kind", "matched_by"}
    fields: dict[str, dict[str, Any]] | None = None
    pairs: list[TextPair] = field(default_factory=list)
    error: str | None = None
    #: classification: the gold label and the predicted label (or "missing")
    label_gold: str | None = None
    label_pred: str | None = None


@dataclass(frozen=True)
class SemanticValues:
    """Semantic scores looked up by (candidate, reference); None when the scorer is unavailable."""

    bert_f1: dict[tuple[str, str], float] | None
    bart_raw: dict[tuple[str, str], float] | None


def _json_safe(value: Any) -> Any:
    if isinstance(value, (frozenset, set)):
        return "".join(sorted(value))
    return value


def prepare_item(
    spec: TaskSpec,
    record: Record,
    run: int,
    prediction: str | None,
    error: str | None,
    profile: Profile = "taxpraben",
) -> PreparedItem:
    """Parse one prediction and score its exact parts; list the text pairs it needs."""
    gold_text = record.gold_label
    item = PreparedItem(
        task=spec.name, id=record.id, run=run, status="ok", prediction=prediction or "", gold=gold_text
    )
    failed = prediction is None or (error is not None and not (prediction or "").strip())
    if failed:
        item.status = "error"
        item.error = error or "no prediction"
    text = "" if failed else clean_prediction(prediction or "")

    if spec.type is OutputType.classification:
        _prepare_classification(spec, record, item, text, failed, profile)
    elif spec.type is OutputType.structured:
        _prepare_structured(spec, record, item, text, failed, profile)
    elif spec.is_multi_aspect or spec.type is OutputType.mixed:
        _prepare_fields(spec, record, item, text, failed)
    else:
        # TaxBen scores the raw generation (TaxBen.py:177-184): no cleaning in its profile.
        _prepare_generation(record, item, item.prediction if profile == "taxben" else text, failed)
    return item


def _prepare_classification(
    spec: TaskSpec, record: Record, item: PreparedItem, text: str, failed: bool, profile: Profile
) -> None:
    assert record.choices is not None
    opts = spec.classification_options
    choices = record.choices
    label: str | None = None
    if not failed:
        if profile == "taxben":
            label = taxben.classification_label(item.prediction, choices)
        else:
            index = extract_choice_index(
                text,
                choices,
                option_letters=_lettered(opts.option_letters, choices, record.query),
                markers=opts.answer_markers,
                query=record.query,
                aliases=opts.aliases,
                names=_option_names(choices, record.query),
            )
            label = None if index is None else option_label(choices, index)
    if label is None and not failed:
        item.status = "format_failure"
    if profile == "taxben":  # TaxBen's labels are lower-cased choices, for ACC and F1 alike
        item.label_gold = taxben.classification_gold(record.gold_label)
    else:
        item.label_gold = option_label(choices, record.gold) if record.gold is not None else record.gold_label
    item.label_pred = label if label is not None else MISSING_LABEL
    item.extracted = item.label_pred
    item.scores = {"acc": float(item.label_pred == item.label_gold)}


def _lettered(spec_says: bool, choices: tuple[str, ...], query: str) -> bool:
    """Options are lettered when the spec says so, when the choices are the letters
    themselves ("A".."D"), or when the question lists one letter per choice."""
    if spec_says or all(c.strip().upper() == chr(65 + i) for i, c in enumerate(choices)):
        return True
    return len(listed_option_letters(query, "ABCDEFGH")) == len(choices) >= 2


def _option_names(choices: tuple[str, ...], query: str) -> list[str] | None:
    """When the choices are the letters themselves, the option texts the question lists."""
    if not all(c.strip().upper() == chr(65 + i) for i, c in enumerate(choices)):
        return None
    listed = listed_option_texts(query)
    names = [listed.get(chr(65 + i), "") for i in range(len(choices))]
    return names if all(names) else None


def option_label(choices: tuple[str, ...], index: int) -> str:
    """The label of option ``index``: its text, or "B. text" when another option has the
    same text (repeated options are told apart by their letter)."""
    text = choices[index]
    if choices.count(text) > 1:
        return f"{chr(65 + index)}. {text}"
    return text


def _prepare_structured(
    spec: TaskSpec, record: Record, item: PreparedItem, text: str, failed: bool, profile: Profile
) -> None:
    opts = spec.structured
    assert opts is not None
    if profile == "taxben":
        _prepare_structured_taxben(opts.kind, record, item, failed)
        return
    em = 0.0
    if opts.kind == "number":
        # Both sides in the gold's unit: the one its text is written in, else the one the
        # question asks for (parsing.numbers.gold_unit); compared at N decimals of it.
        unit = gold_unit(record.answer, record.query)
        gold = unit.convert(read_gold_number(record.answer))
        want_percent = expects_percent(gold, record.query)
        match = None if failed else extract_final_number(text, expect_percent=want_percent)
        if match is not None:
            match = unit.convert(match)
            if match.refund and gold.value < 0 < match.value:  # "应退税2520元" for gold -2520
                match = replace(match, value=-match.value)
            item.extracted = unit.show(match.value) + ("%" if match.is_percent else "")
            em = float(
                numbers_equal(match, gold, decimals=opts.decimals, percent_as_fraction=opts.percent_as_fraction)
            )
        elif not failed:
            item.status = "format_failure"
    elif opts.kind == "letters":
        gold_set = frozenset(str(record.answer).strip().upper())
        letters = None
        if not failed:
            letters = extract_letter_set(text, opts.letters, query=record.query)
        if letters is not None:
            item.extracted = "".join(sorted(letters))
            em = float(letters == gold_set)
        elif not failed:
            item.status = "format_failure"
    else:  # span
        if not failed:
            span = extract_span(text, clause="，" not in record.answer_text)
            item.extracted = span
            if span.strip() and not (span == text and is_refusal(text)):
                em = float(span_match(text, record.answer_text))
            else:
                item.status = "format_failure"
    item.scores = {"em": em}


def _prepare_structured_taxben(kind: str, record: Record, item: PreparedItem, failed: bool) -> None:
    """TaxBen's rules (:mod:`taxpraben.parsing.taxben`) on the raw prediction.

    ``extracted`` is TaxBen's own answer: the ``"{:.2f}"`` string or ``"未知"`` (TaxCalc), the
    letter string in output order (TaxMCQ), the gold when the output contains it (TaxRead).
    An answer TaxBen cannot read (``"未知"``, no letter run) is a format failure, and so is a
    blank TaxRead answer; the scores are TaxBen's either way.
    """
    em = 0.0
    if not failed:
        raw = item.prediction
        if kind == "number":
            item.extracted = taxben.calc_answer(raw)
            em = float(taxben.calc_correct(raw, record.answer))
            unreadable = item.extracted == taxben.UNKNOWN
        elif kind == "letters":
            item.extracted = taxben.mcq_letters(raw)
            em = float(taxben.mcq_correct(raw, record.answer))
            unreadable = item.extracted is None
        else:
            em = float(taxben.read_correct(raw, record.answer_text))
            item.extracted = record.answer_text if em else None
            unreadable = not raw.strip()
        if unreadable:
            item.status = "format_failure"
    item.scores = {"em": em}


def _prepare_generation(record: Record, item: PreparedItem, text: str, failed: bool) -> None:
    missing = failed or not text.strip()
    if missing and not failed:
        item.status = "format_failure"
    item.extracted = None
    item.pairs = [TextPair("text", "" if missing else text, record.answer_text, missing)]


def _gold_fields(record: Record) -> dict[str, Any] | None:
    """The gold's fields (an object, a JSON string or text read like a prediction); None
    when none can be read: the record is then scored as one rationale."""
    return gold_fields(record.answer)


#: The one field of a record whose gold has no readable fields: the whole answer.
WHOLE_ANSWER = "全文"


def _prepare_whole_answer(record: Record, item: PreparedItem, text: str, failed: bool) -> None:
    """A record whose gold has no fields: the whole prediction against the whole gold."""
    missing = failed or not text.strip()
    if missing and not failed:
        item.status = "format_failure"
    item.extracted = None
    item.pairs = [TextPair(WHOLE_ANSWER, "" if missing else text, record.answer_text, missing)]
    item.fields = {
        WHOLE_ANSWER: {
            "kind": "text", "pred": None if missing else text, "gold": record.answer_text, "score": None,
            "status": "missing" if missing else "ok", "matched_by": "whole", "inferred": True,
        }
    }  # fmt: skip


def _prepare_fields(spec: TaskSpec, record: Record, item: PreparedItem, text: str, failed: bool) -> None:
    """Align the prediction's fields to the record's own gold fields and score the exact ones.

    The fields are the gold's keys (:func:`~taxpraben.parsing.fields.record_fields`): the
    spec's rules where it names them, kinds inferred from the gold value otherwise.
    """
    assert spec.fields is not None
    gold = _gold_fields(record)
    if gold is None:
        _prepare_whole_answer(record, item, text, failed)
        return
    fields = record_fields(gold, spec.fields.fields, aspects=spec.is_multi_aspect)
    rules = [f.rule for f in fields]
    parsed = None if failed or not text.strip() else parse_fields(text)
    if parsed is None and not failed:
        item.status = "format_failure"
    aligned = align_fields(parsed or {}, rules, spec.fields.fuzzy_threshold)
    item.fields = {}
    item.extracted = {name: _json_safe(a.value) for name, a in aligned.items() if a.value is not None}
    for f in fields:
        rule = f.rule
        got = aligned[rule.name]
        present = got.value is not None and field_text(got.value).strip() != ""
        info: dict[str, Any] = {
            "kind": rule.kind,
            "pred": _json_safe(got.value),
            "gold": f.gold,
            "status": "ok" if present else "missing",
            "matched_by": got.how,
            "inferred": f.inferred,
        }
        if f.spec_name is not None and f.spec_name != rule.name:
            info["spec_field"] = f.spec_name
        if rule.kind == "text":
            cand = field_text(got.value) if present else ""
            item.pairs.append(TextPair(rule.name, cand, field_text(f.gold), not present))
            info["score"] = None  # filled in by finalize_item
        else:
            info["score"] = float(present and field_value_matches(got.value, f.gold, rule))
        item.fields[rule.name] = info


def _normalise_bart(raw: float) -> float:
    return math.exp(raw) if raw <= 0 else 1.0


def finalize_item(spec: TaskSpec, item: PreparedItem, values: SemanticValues) -> dict[str, Any]:
    """Combine exact and semantic parts into the item's scores and its samples.jsonl line.

    Returns the line; ``line["score"]`` is None when a needed scorer is unavailable.
    """
    scores = dict(item.scores)
    score: float | None
    if spec.type is OutputType.classification:
        score = scores["acc"]
    elif spec.type is OutputType.structured:
        score = scores["em"]
    elif spec.type is OutputType.generation:
        score = _finalize_generation(item, values, scores)
    else:
        score = _finalize_mixed(item, values, scores)
    line: dict[str, Any] = {
        "task": item.task,
        "id": item.id,
        "run": item.run,
        "status": item.status,
        "prediction": item.prediction,
        "gold": item.gold,
        "extracted": item.extracted,
        "scores": scores,
        "score": score,
        "error": item.error,
    }
    if item.fields is not None:
        line["fields"] = item.fields
    return line


def _bert(values: SemanticValues, pair: TextPair) -> float | None:
    if pair.missing:
        return 0.0
    if values.bert_f1 is None:
        return None
    return values.bert_f1[(pair.candidate, pair.reference)]


def _bart_raw(values: SemanticValues, pair: TextPair) -> float | None:
    if values.bart_raw is None:
        return None
    return values.bart_raw[(pair.candidate, pair.reference)]


def _mean(xs: list[float | None]) -> float | None:
    if not xs or any(x is None for x in xs):
        return None
    return sum(xs) / len(xs)  # type: ignore[arg-type]


def _finalize_generation(item: PreparedItem, values: SemanticValues, scores: dict[str, Any]) -> float | None:
    berts = [_bert(values, p) for p in item.pairs]
    raws = [_bart_raw(values, p) for p in item.pairs]
    norms = [None if r is None else (0.0 if p.missing else _normalise_bart(r)) for p, r in zip(item.pairs, raws, strict=True)]
    if item.fields is not None:
        for p, b, n in zip(item.pairs, berts, norms, strict=True):
            info = item.fields[p.name]
            info["bertscore"] = b
            info["bartscore"] = n
            info["score"] = None if b is None or n is None else (b + n) / 2
    scores["bertscore"] = _mean(berts)
    scores["bartscore"] = _mean(norms)
    scores["bartscore_raw"] = _mean(raws)
    if scores["bertscore"] is None or scores["bartscore"] is None:
        return None
    return (scores["bertscore"] + scores["bartscore"]) / 2


def _finalize_mixed(item: PreparedItem, values: SemanticValues, scores: dict[str, Any]) -> float | None:
    assert item.fields is not None
    exact = [info["score"] for info in item.fields.values() if info["kind"] != "text"]
    berts = []
    for pair in item.pairs:
        b = _bert(values, pair)
        item.fields[pair.name]["score"] = b
        berts.append(b)
    # A record's fields are its gold's keys: one without exact fields (or without text
    # fields) has no "em" (no "bertscore") and its score is the part it has.
    parts: list[float | None] = []
    if exact:
        scores["em"] = sum(exact) / len(exact)
        parts.append(scores["em"])
    if berts:
        scores["bertscore"] = _mean(berts)
        parts.append(scores["bertscore"])
    return _mean(parts)

"""Generation (TaxRecite, TaxSum, TaxQA, TaxBoard, TaxOpinion, TaxRisk): BERTScore and BARTScore.

The cleaned answer is scored against the gold text; a multi-aspect task (a spec with
``fields``, TaxRisk) is scored per aspect and averaged. BARTScore is the mean
log-likelihood of the gold given the answer; results.json reports it raw and normalised
to [0, 1] as exp(raw) (so that it can be averaged with BERTScore into the item score).
The chain named ``taxben`` reads the raw output (``taxben.raw-output``), as TaxBen scores it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from taxpraben.kinds.base import (
    FieldMode,
    Kind,
    Metric,
    Parts,
    Prepared,
    SemanticValues,
    bert_f1,
    chain_for,
    mean_or_none,
)
from taxpraben.kinds.field_golds import (
    check_field_gold,
    field_figures,
    prepare_fields,
    whole_output_reading,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from taxpraben.records import Record
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.results.samples import Sample, Status
    from taxpraben.task_spec import TaskSpec


class GenerationKind(Kind):
    name = "generation"
    label = "Generation"
    sections = frozenset({"fields"})
    declared = (
        Metric("bertscore", "BERTScore", "BERTScore F1 (chinese-xlnet-base)", scorer="bertscore", column=50),
        Metric("bartscore", "BARTScore", "exp of BARTScore (bart-large-cnn), in [0, 1]", scorer="bartscore",
               column=60),
        Metric("bartscore_raw", "BARTScore (raw)", "BARTScore as a mean log-likelihood", scorer="bartscore",
               in_score=False, companion_of="bartscore", display="raw", column=70,
               bounds=(-math.inf, 0.0)),  # a mean log-likelihood
    )

    def field_mode(self, spec: TaskSpec) -> FieldMode | None:
        return "aspects" if spec.fields is not None else None

    def check_gold(self, spec: TaskSpec, obj: JSONObject, answer: JSONValue, choices: tuple[str, ...] | None,
                   bad: Callable[[str, str], None]) -> tuple[JSONValue, int | None]:
        if spec.fields is None:
            return answer, None
        return check_field_gold(answer, spec, True, bad), None

    def prepare(self, spec: TaskSpec, record: Record, item: Sample, text: str, failed: bool) -> Prepared:
        if spec.fields is not None:
            return prepare_fields(spec, record, item.text, text, failed, aspects=True)
        from taxpraben.parsing.readers.text import read_text
        from taxpraben.results.samples import (
            TextPair,  # pydantic's: loaded with scoring, not with the kinds
        )

        # the whole output is the answer: cleaned (text.whole-output), or raw (taxben.raw-output)
        reading = None if failed else read_text(text, chain_for(spec, "text"), raw=item.text)
        missing = reading is None or reading.failure is not None
        status: Status = "error" if failed else ("format_failure" if missing else "ok")
        candidate = "" if missing or reading is None else str(reading.value)
        return Prepared(status, pairs=(TextPair("text", candidate, record.answer_text, missing),),
                        reading=whole_output_reading(status, item.text, reading))

    def finish_parts(self, spec: TaskSpec, item: Sample, values: SemanticValues) -> Parts:
        berts = [bert_f1(values, p) for p in item.pairs]
        raws = [None if values.bart_raw is None else values.bart_raw[(p.candidate, p.reference)] for p in item.pairs]
        norms: list[float | None] = [None] * len(raws)
        if values.bart_raw is not None:  # the scorer's module only when it scored (not with --no-semantic)
            from taxpraben.metrics.bartscore import normalize_bartscore

            norms = [None if r is None else (0.0 if p.missing else normalize_bartscore(r))
                     for p, r in zip(item.pairs, raws, strict=True)]
        fields = None
        if item.fields is not None:
            fields = {name: dict(info) for name, info in item.fields.items()}
            for p, b, n in zip(item.pairs, berts, norms, strict=True):
                fields[p.name].update(bertscore=b, bartscore=n, score=None if b is None or n is None else (b + n) / 2)
        scores = {"bertscore": mean_or_none(berts), "bartscore": mean_or_none(norms),
                  "bartscore_raw": mean_or_none(raws)}
        return scores, fields

    def field_figures(self, spec: TaskSpec, items_by_run: list[list[Sample]]) -> JSONObject | None:
        if spec.fields is None:
            return None
        # Aspects keep both semantic scores in their entries.
        return field_figures(spec, items_by_run, ("bertscore", "bartscore"), lambda metric: metric)


KIND = GenerationKind()

"""Mixed (TaxInspect, TaxPlan): exact fields and a rationale in one answer.

The answer's fields are aligned to the gold's keys; number and category fields score by
exact match (``em``: their mean), text fields by BERTScore (``bertscore``: their mean), and
the item's score is the mean of the two parts. A record whose gold lacks exact (or text)
fields has no ``em`` (no ``bertscore``), and its score is the part it has.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from taxpraben.kinds.base import Kind, Metric, SpecMismatch, bert_f1, chain_for, mean_or_none, noted
from taxpraben.kinds.field_golds import check_field_gold, field_figures, prepare_fields

if TYPE_CHECKING:
    from collections.abc import Callable

    from taxpraben.kinds.base import FieldMode, Parts, Prepared, SemanticValues
    from taxpraben.records import Record
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.results.samples import Sample
    from taxpraben.task_spec import TaskSpec


#: Why a mixed output that parsed was not read: none of the task's fields is in it.
NO_FIELD_READ = "no field of the task read"  # its veto: the one that decides it (readers/fields.py)


class MixedKind(Kind):
    name = "mixed"
    label = "Mixed"
    sections = frozenset({"fields"})
    declared = (
        Metric("em", "EM", "exact match of the number and category fields", column=40),
        Metric("bertscore", "BERTScore", "BERTScore F1 of the text (rationale) fields", scorer="bertscore",
               column=50),
    )

    def check_spec(self, spec: TaskSpec) -> None:
        if spec.fields is None:
            raise SpecMismatch("fields", "a mixed task needs a 'fields' section listing its fields")
        kinds = {f.kind for f in spec.field_rules}
        if "text" not in kinds or not kinds & {"number", "category"}:
            raise SpecMismatch(
                "fields", "a mixed task needs at least one exact field (number or category) "
                "and one text (rationale) field"
            )
        super().check_spec(spec)

    def field_mode(self, spec: TaskSpec) -> FieldMode | None:
        return "fields"

    def check_gold(self, spec: TaskSpec, obj: JSONObject, answer: JSONValue, choices: tuple[str, ...] | None,
                   bad: Callable[[str, str], None]) -> tuple[JSONValue, int | None]:
        return check_field_gold(answer, spec, False, bad), None

    def reading_kind(self, spec: TaskSpec) -> str:
        return "fields"

    def prepare(self, spec: TaskSpec, record: Record, item: Sample, text: str, failed: bool) -> Prepared:
        from taxpraben.parsing.readers.shared import COPY_OF_PROMPT_RULE

        failure: str | None = None
        if not failed and text.strip() and COPY_OF_PROMPT_RULE.name in chain_for(spec, "fields"):
            from taxpraben.parsing.latex import strip_latex
            from taxpraben.parsing.prompt_copy import own_answer

            # A copy of the prompt (its JSON template included) is no answer, when the chain
            # vetoes copies (TaxBen's does not: it credits a copy of the template). What a real
            # answer shares with the template (its keys, a 0.00) stays: fields are read whole.
            failure = own_answer(strip_latex(text), record.query).failure
            if failure is not None:
                text = ""
        prepared = prepare_fields(spec, record, item.text, text, failed, aspects=False, failure=failure)
        if prepared.status == "ok" and prepared.fields and all(f["status"] == "missing"
                                                               for f in prepared.fields.values()):
            # It parsed (a JSON object, "key: value" lines) but no field of the task was in it:
            # nothing was read, a format failure (it scores 0 either way, every field missing).
            prepared = replace(prepared, status="format_failure", failure=NO_FIELD_READ)
        if prepared.status == "format_failure":
            from taxpraben.parsing.region import NO_ANSWER, veto_of

            failure = prepared.failure or NO_ANSWER  # nothing read: no rule, no evidence
            prepared = replace(prepared, failure=failure,
                               reading=noted("format_failure", item.text, veto_of(failure)))
        return prepared

    def finish_parts(self, spec: TaskSpec, item: Sample, values: SemanticValues) -> Parts:
        assert item.fields is not None
        fields = {name: dict(info) for name, info in item.fields.items()}
        exact = [info["score"] for info in fields.values() if info["kind"] != "text"]
        berts = []
        for pair in item.pairs:
            b = bert_f1(values, pair)
            fields[pair.name]["score"] = b
            berts.append(b)
        scores: dict[str, float | None] = {}
        if exact:
            scores["em"] = sum(exact) / len(exact)
        if berts:
            scores["bertscore"] = mean_or_none(berts)
        return scores, fields

    def field_figures(self, spec: TaskSpec, items_by_run: list[list[Sample]]) -> JSONObject | None:
        # A text field's entry holds its BERTScore as its score.
        return field_figures(spec, items_by_run, ("bertscore",), lambda metric: "score")


KIND = MixedKind()

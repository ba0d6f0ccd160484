"""One samples.jsonl line (:class:`SampleLine`) and the score of one of its fields."""

from __future__ import annotations

from typing import Any, Literal

from taxpraben.results.file_object import FileObject, Number, described, required


class FieldScore(FileObject):
    """One field (or aspect) of one item (``samples.jsonl`` ``fields.NAME``)."""

    pred: Any = described("What was read from the prediction for the field; null when absent.")
    gold: Any = described("The gold value.")
    score: float | None = described("The field's score; null until (or unless) a semantic scorer gave one.")
    status: str | None = described("ok | missing | format_failure.")
    kind: str | None = described("number | category | text | ...")
    matched_by: str | None = described("How the prediction's key was aligned: exact, normalised, synonym, fuzzy, whole, ...")
    inferred: bool | None = described("Whether the kind was inferred from the gold value.")
    spec_field: str | None = described("The spec rule's name.", when="the key is one of the rule's synonyms")
    evidence: list[int] | None = described("Where the field's value is stated: [start, end) character offsets into "
                                        "the prediction (a judge reading: its quote).", when="known")
    bertscore: float | None = described("BERTScore F1 of the aspect.", when="aspects of a generation task")
    bartscore: float | None = described("Normalised BARTScore of the aspect.", when="aspects of a generation task")


class SampleLine(FileObject):
    """One line of ``samples.jsonl``: one (task, id, run)."""

    task: str = required("The dataset.")
    id: str = required("The record's id.")
    run: int = required("The run index.")
    status: Literal["ok", "format_failure", "error"] = required(
        "ok | format_failure (the answer could not be read) | error (generation failed)."
    )
    prediction: str | None = described("The raw prediction (\"\" when there is none).", default="")
    gold: Any = described("The gold as text (choices[gold] for classification).")
    extracted: Any = described("What scoring read from the prediction: label, number, letters, span or fields.")
    # Number: a plugin's item metric may give an integer; it is written as given.
    scores: dict[str, Number | None] = described("Per-item metric values.", default_factory=dict)
    score: float | None = described("The item's contribution to the task score.")
    error: str | None = described("The generation error, if any.")
    finish_reason: str | None = described(
        "Why generation stopped, as the backend said (length: cut at --max-tokens).",
        when="the backend said",
    )
    usage: dict[str, Any] | None = described(
        "Token counts of the generation: prompt_tokens, completion_tokens, and where the backend "
        "reported them reasoning_tokens and cached_prompt_tokens.",
        when="the backend reported them",
    )
    cached: bool | None = described(
        "True: the answer came from the completion cache (nothing was paid for it in this run).",
        when="true",
    )
    failure: str | None = described(
        "Why no answer was read: copy of the prompt, answers another question, several different "
        "answers, hedges between options, no answer asserted, no answer found, ...",
        when="status format_failure",
    )
    fields: dict[str, FieldScore] | None = described(
        "Per field, named by the gold's keys; a gold with no readable field is one text field 全文.",
        when="mixed tasks and multi-aspect generation tasks",
    )
    query: str | None = described("The prompt.", when="the first run's line of each item")
    extracted_by: Literal["rule", "judge", "none"] | None = described(
        "Who read the answer: rule, judge (the rules could not; --judge), none (neither did)."
    )
    read_by: str | None = described(
        "Which reader made the reading: \"rule:<name>\" (a rule of `taxpraben rules`), \"judge:<model>\" "
        "(--judge), null when nothing was read (a format failure or an error)."
    )
    evidence: list[int] | None = described("Where the answer is stated: [start, end) character offsets into "
                                           "prediction (a judge reading: its quote).", when="known")
    confidence: Literal["high", "low"] | None = described(
        "The reading rule's confidence: high (a stated answer) or low (a fallback: a last number, an "
        "option named in passing, a whole output, a field matched fuzzily); null when nothing was read."
    )
    veto: str | None = described("The veto rule that decided a format failure (veto.hedge, veto.no-answer, ...).",
                              when="status format_failure")
    judge_reply: str | None = described("The judge's raw reply.", when="the judge was asked for the item")
    judge_extracted: Any = described("The judge's reading of an audited item, beside the rules' (extracted; for a "
                                  "field task, each asked field's value, null where the judge read none).",
                                  when="audited items (--judge-audit)")
    judge_agrees: bool | None = described("Whether the rules and the judge read the same answer.",
                                       when="audited items (--judge-audit)")
    judge_rejected: str | None = described("Why the judge's reading was rejected (its quote no evidence: quote not in "
                                        "output, in a copy of the prompt, reads another value, repeats the prompt's "
                                        "example, no quote); for a field task, per field.",
                                        when="the judge's reading was rejected")

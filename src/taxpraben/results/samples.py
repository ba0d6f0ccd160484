"""One sample (:class:`Sample`): one (task, id, run), the same frozen object from scoring to the
report, one line of samples.jsonl; the score of one of its fields; the judge's edits of it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import ConfigDict, field_validator

from taxpraben.results.file_object import FileObject, Number, described, required
from taxpraben.results.json_value import JSONObject, JSONValue


class FieldScore(FileObject):
    """One field (or aspect) of one item (``samples.jsonl`` ``fields.NAME``)."""

    pred: JSONValue = described("What was read from the prediction for the field; null when absent.")
    gold: JSONValue = described("The gold value.")
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


class JudgeEdit(FileObject):
    """One edit of a sample by the judge (``samples.jsonl`` ``judge_history[k]``)."""

    edit: str = required("replied (its reply kept) | adopted (its reading replaced the rules') | unanswered "
                          "(it read no answer) | audited (its reading set beside the rules').")
    by: str = required("Who made it: \"judge:<model>\".")
    before: JSONObject = described("Each key the edit changed, with its value before the edit.",
                                    default_factory=dict)


class Sample(FileObject):
    """One sample: one (task, id, run), the same object from scoring to the report, one line of
    ``samples.jsonl``. Frozen: new values make a new sample (``model_copy(update=...)``)."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True, defer_build=True, frozen=True)

    task: str = required("The dataset.")
    id: str = required("The record's id.")
    run: int = required("The run index.")
    status: Literal["ok", "format_failure", "error"] = required(
        "ok | format_failure (the answer could not be read) | error (generation failed)."
    )
    prediction: str | None = described("The raw prediction (\"\" when there is none).", default="")
    gold: JSONValue = described("The gold as text (choices[gold] for classification).")
    extracted: JSONValue = described("What scoring read from the prediction: label, number, letters, span or fields.")
    # Number: a plugin's item metric may give an integer; it is written as given.
    scores: dict[str, Number | None] = described("Per-item metric values.", default_factory=dict)
    score: float | None = described("The item's contribution to the task score.")
    error: str | None = described("The generation error, if any.")
    finish_reason: str | None = described(
        "Why generation stopped, as the backend said (length: cut at --max-tokens).",
        when="the backend said",
    )
    usage: JSONObject | None = described(
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
    fields: dict[str, JSONObject] | None = described(
        "Per field, named by the gold's keys; a gold with no readable field is one text field 全文.",
        when="mixed tasks and multi-aspect generation tasks", doc_type=dict[str, FieldScore] | None,
    )
    query: str | None = described("The prompt.", when="the first run's line of each item")
    extracted_by: Literal["rule", "judge", "none"] | None = described(
        "Who read the answer: rule, judge (the rules could not; --judge), none (neither did)."
    )
    read_by: str | None = described(
        "Which reader made the reading: \"rule:<name>\" (a rule of `taxpraben rules`), \"judge:<model>\" "
        "(--judge), null when nothing was read (a format failure or an error)."
    )
    # Declared once (it was declared twice; the later text, the one in force, in the first place).
    evidence: list[int] | None = described("Where the answer is stated: [start, end) character offsets into "
                                        "prediction (a judge reading: its quote).", when="known")
    confidence: Literal["high", "low"] | None = described(
        "The reading rule's confidence: high (a stated answer) or low (a fallback: a last number, an "
        "option named in passing, a whole output, a field matched fuzzily); null when nothing was read."
    )
    veto: str | None = described("The veto rule that decided a format failure (veto.hedge, veto.no-answer, ...).",
                              when="status format_failure")
    judge_reply: str | None = described("The judge's raw reply.", when="the judge was asked for the item")
    judge_extracted: JSONValue = described("The judge's reading of an audited item, beside the rules' (extracted; for a "
                                  "field task, each asked field's value, null where the judge read none).",
                                  when="audited items (--judge-audit)")
    judge_agrees: bool | None = described("Whether the rules and the judge read the same answer.",
                                       when="audited items (--judge-audit)")
    judge_rejected: str | None = described("Why the judge's reading was rejected (its quote no evidence: quote not in "
                                        "output, in a copy of the prompt, reads another value, repeats the prompt's "
                                        "example, no quote); for a field task, per field.",
                                        when="the judge's reading was rejected")


    judge_history: list[JSONObject] | None = described(
        "The judge's edits of the sample, in order: what each was (replied, adopted, unanswered, audited), "
        "who made it, and the value before it of each key it changed (so the rules' reading stays known).",
        when="the judge changed the sample", doc_type=list[JudgeEdit] | None,
    )

    @field_validator("judge_history", mode="before")
    @classmethod
    def _checked_history(cls, value: JSONValue) -> JSONValue:
        """Each edit checked as a :class:`JudgeEdit` and kept as the object it was given."""
        if isinstance(value, list):
            return [JudgeEdit.model_validate(edit).to_json() for edit in value]
        return value

    @field_validator("fields", mode="before")
    @classmethod
    def _checked_fields(cls, value: JSONValue) -> JSONValue:
        """Each field checked as a :class:`FieldScore` and kept as the object it was given."""
        if isinstance(value, dict):
            return {str(name): FieldScore.model_validate(v).to_json() for name, v in value.items()}
        return value

    @classmethod
    def trusted(cls, line: JSONObject) -> Sample:
        """The sample of ``line`` made by this process from its own items (already typed):
        built without validation (as ``model_construct`` builds), its keys in the line's order."""
        values = _SAMPLE_DEFAULTS.copy()
        extra = {}
        for key, value in line.items():
            if key in values:
                values[key] = value
            else:
                extra[key] = value
        for name, factory in _SAMPLE_FACTORIES.items():
            if name not in line:
                values[name] = factory()
        sample = cls.__new__(cls)
        # What model_construct sets, without its per-field loop (a sample per item and run).
        object.__setattr__(sample, "__dict__", values)
        object.__setattr__(sample, "__pydantic_fields_set__", set(line) - extra.keys())
        object.__setattr__(sample, "__pydantic_extra__", extra)
        object.__setattr__(sample, "__pydantic_private__", {"_order": tuple(line)})
        return sample

    def to_json(self) -> JSONObject:
        """The samples.jsonl object: the keys given, in their order. A sample's values are
        plain JSON values, so the object is made from them directly (one per item and run;
        nested values are shared with the frozen sample, not copied); any other sample (keys
        given in no remembered order) through the model, as every file object."""
        order, given = self._order, self.__pydantic_fields_set__
        extra = self.__pydantic_extra__ or {}
        if order is None or not given.issubset(order) or not extra.keys() <= set(order):
            return super().to_json()
        values = self.__dict__
        return {key: values[key] if key in values else extra[key] for key in order if key in given or key in extra}

    @property
    def span(self) -> tuple[int, int] | None:
        """``evidence`` as a ``(start, end)`` pair; None when absent or not such a pair."""
        value = self.evidence
        if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value):
            return int(value[0]), int(value[1])
        return None

    @property
    def text(self) -> str:
        """The raw prediction ("" when there is none)."""
        return self.prediction or ""

    @property
    def truncated(self) -> bool:
        """Whether the answer was cut at the token budget (``finish_reason`` length)."""
        return self.finish_reason == "length"

    @property
    def shown_failure(self) -> str | None:
        """Why a format failure was not read (None for the other statuses)."""
        return self.failure if self.status == "format_failure" else None


#: The defaults of :class:`Sample`'s fields (immutable ones), and the fields made by a factory.
#: Every field is in the defaults (a factory's field with None, replaced when not given).
_SAMPLE_DEFAULTS: JSONObject = {name: info.default if info.default_factory is None else None
                                    for name, info in Sample.model_fields.items()}  # fmt: skip
_SAMPLE_FACTORIES: dict[str, Callable[[], JSONValue]] = {
    name: info.default_factory for name, info in Sample.model_fields.items()  # type: ignore[misc]  # pydantic types a factory as taking the data or not; these take none
    if info.default_factory is not None
}

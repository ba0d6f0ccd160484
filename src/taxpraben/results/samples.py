"""One sample (:class:`Sample`): one (task, id, run), the same frozen object from the reader to
the report: read and scored in memory, written as one line of samples.jsonl, read back by the
report; the score of one of its fields; the judge's edits of it; the text pairs it gives the
semantic scorers.

A sample is never changed once built: every step of scoring makes a new one
(:meth:`Sample.evolve`, :meth:`Sample.edited`), as Inspect AI's score edits do.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack

from pydantic import ConfigDict, PrivateAttr, field_validator

from taxpraben.results.file_object import FileObject, Number, described, required
from taxpraben.results.json_value import JSONObject, JSONValue

if TYPE_CHECKING:
    from taxpraben.results.predictions import Prediction

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


class SampleEdit(TypedDict, total=False):
    """What a second reader may change of a sample (:meth:`Sample.edited`)."""

    status: Status
    extracted: JSONValue
    scores: dict[str, float | None]
    fields: dict[str, JSONObject] | None
    failure: str | None
    extracted_by: Literal["rule", "judge", "none"] | None
    judge_reply: str | None
    judge_extracted: JSONValue
    judge_agrees: bool | None
    read_by: str | None
    evidence: list[int] | None
    confidence: Literal["high", "low"] | None
    veto: str | None
    judge_rejected: str | None


class FieldScore(FileObject):
    """One field (or aspect) of one item (``samples.jsonl`` ``fields.NAME``)."""

    pred: JSONValue = described("What was read from the prediction for the field; null when absent.")
    gold: JSONValue = described("The gold value.")
    score: float | None = described("The field's score; null until (or unless) a semantic scorer gave one.")
    status: str | None = described("ok | missing | format_failure (a value that states no number: a formula "
                                   "with a word or a variable among its terms).")
    failure: str | None = described("Why the field's value was not read as a number.",
                                    when="status format_failure")
    kind: str | None = described("number | category | text | ...")
    matched_by: str | None = described("How the prediction's key was aligned: exact, normalised, synonym, fuzzy, whole, ...")
    inferred: bool | None = described("Whether the kind was inferred from the gold value.")
    spec_field: str | None = described("The spec rule's name.", when="the key is one of the rule's synonyms")
    evidence: list[int] | None = described("Where the field was read: [start, end) character offsets into the "
                                        "prediction of its value after its key (a JSON value, the value of a "
                                        "'key: value' line, a table cell; a judge reading: its quote).",
                                        when="known")
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
    """One sample: one (task, id, run), the same object from the reader to the report, one line
    of `samples.jsonl`. Frozen: each step of scoring (the reading, the judge's edits, the
    finishing) makes a new sample."""

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
                                        "prediction (a judge reading: its quote; a fields task: from the first "
                                        "to the last of its fields' own spans, fields.NAME.evidence).",
                                        when="known")
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

    # A sample is built by scoring (`of`) for its record (named by task and id) and its
    # generation, read by its task's kind (kinds.base.with_prepared), edited by the judge
    # (`edited`, each edit kept in `judge_history`), finished (kinds.base.with_finished), then
    # written to samples.jsonl and shown by the report as it is. Besides what the file holds, a
    # sample scored in this process keeps what scoring works with and never writes: its
    # generation (the predictions line: latency, model), the text pairs it gives the semantic
    # scorers, its labels (classification). A sample read back from samples.jsonl has none.
    _scored: bool = PrivateAttr(default=False)
    _generation: Prediction | None = PrivateAttr(default=None)
    _pairs: tuple[TextPair, ...] = PrivateAttr(default=())
    _label_gold: str | None = PrivateAttr(default=None)
    _label_pred: str | None = PrivateAttr(default=None)

    @classmethod
    def of(cls, task: str, id: str, run: int, generation: Prediction | None, *, gold: JSONValue,
           status: Status = "ok", error: str | None = None) -> Sample:
        """The sample of run ``run`` of record ``id`` of ``task`` before it is read: its gold
        (as text), its generation (None: the predictions hold none for it), its status and the
        generation's error. Built without validation (as :meth:`trusted`): every value is this
        process's own."""
        values = _SAMPLE_DEFAULTS.copy()
        values.update(task=task, id=id, run=run, status=status, gold=gold, error=error, scores={},
                      **_generated(generation))  # fmt: skip
        private = {**_PRIVATE_DEFAULTS, "_scored": True, "_generation": generation}
        return cls._built(values, _SCORED_FIELDS_SET, {}, private)

    @classmethod
    def _built(cls, values: JSONObject, given: set[str], extra: JSONObject, private: dict[str, object]) -> Sample:
        """A sample of these values, without validation: what ``model_construct`` sets, without
        its per-field loop (a sample is made several times per item and run)."""
        sample = cls.__new__(cls)
        object.__setattr__(sample, "__dict__", values)
        object.__setattr__(sample, "__pydantic_fields_set__", given)
        object.__setattr__(sample, "__pydantic_extra__", extra)
        object.__setattr__(sample, "__pydantic_private__", private)
        return sample

    def evolve(self, **changes: object) -> Sample:
        """A new sample: this one with ``changes``, which name its fields or what scoring works
        with (``pairs``, ``label_gold``, ``label_pred``). This sample is not changed; values not
        changed are shared (nothing writes into a sample's values). TypeError for another name."""
        unknown = changes.keys() - _EVOLVABLE
        if unknown:
            raise TypeError(f"a sample has no field {', '.join(sorted(unknown))}")
        values = self.__dict__.copy()
        private = own = self._private()
        given = self.__pydantic_fields_set__
        for name, value in changes.items():
            if name in _WORKING:
                if private is own:
                    private = dict(own)
                private["_" + name] = value
            else:
                values[name] = value
        if not own["_scored"]:  # read back: the changed keys are given now
            given = given | (changes.keys() - _WORKING)
        return self._built(values, given, self.__pydantic_extra__ or {}, private)

    def for_run(self, run: int, generation: Prediction) -> Sample:
        """This sample's reading as the reading of ``run``, whose generation gave the same answer
        (the same text and error): a new sample with that run and that generation's facts. The
        reading's values are shared, not copied: nothing writes into a sample's values
        (tests/test_one_sample.py)."""
        return self.evolve(run=run, **_generated(generation))._with_generation(generation)

    def _with_generation(self, generation: Prediction) -> Sample:
        private = {**self._private(), "_generation": generation}
        return self._built(self.__dict__, self.__pydantic_fields_set__, self.__pydantic_extra__ or {}, private)

    def edited(self, edit: str, by: str, **changes: Unpack[SampleEdit]) -> Sample:
        """A new sample: this one with ``changes`` as the second reader ``by`` decided, and the
        edit added to its :attr:`judge_history`: what it was (``edit``: replied, adopted,
        unanswered, audited), who made it and each changed key's value before it (so the rules'
        reading stays known, as Inspect AI keeps a score's edits). This sample is not changed."""
        values = self.__dict__
        before: JSONObject = {key: copy.deepcopy(values[key]) for key, value in changes.items() if values[key] != value}
        history = [*(self.judge_history or ())]  # the earlier edits, shared: an edit is never changed
        if before:
            history.append({"edit": edit, "by": by, "before": before})
        return self.evolve(**changes, judge_history=history or None)

    def _private(self) -> dict[str, object]:
        """Its private values (what scoring works with, and the key order it was read in)."""
        return self.__pydantic_private__ if self.__pydantic_private__ is not None else _PRIVATE_DEFAULTS

    @property
    def generation(self) -> Prediction | None:
        """The generation it read (the predictions line); None when there was none, or when
        the sample was read back from a file."""
        return self._generation

    @property
    def pairs(self) -> tuple[TextPair, ...]:
        """The (prediction text, gold text) pairs it gives the semantic scorers."""
        return self._pairs

    @property
    def label_gold(self) -> str | None:
        """Classification: the gold label as the reading compares it."""
        return self._label_gold

    @property
    def label_pred(self) -> str | None:
        """Classification: the predicted label (or "missing")."""
        return self._label_pred

    @property
    def reader(self) -> Literal["rule", "judge", "none"]:
        """Who decided the reading: :attr:`extracted_by`, else "rule" for a read sample and
        "none" for the others."""
        if self.extracted_by is not None:
            return self.extracted_by
        return "rule" if self.status == "ok" else "none"

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
        object.__setattr__(sample, "__pydantic_private__", {**_PRIVATE_DEFAULTS, "_order": tuple(line)})
        return sample

    def to_json(self) -> JSONObject:
        """The samples.jsonl object. A sample scored in this process: its keys in the file's
        order, each optional one written when it applies (:meth:`_scored_line`); a sample read
        back: the keys given, in their order. A sample's values are plain JSON values, so the
        object is made from them directly (one per item and run; nested values are shared with
        the frozen sample, not copied); any other sample (keys given in no remembered order)
        through the model, as every file object."""
        if self._scored:
            return self._scored_line()
        order, given = self._order, self.__pydantic_fields_set__
        extra = self.__pydantic_extra__ or {}
        if order is None or not given.issubset(order) or not extra.keys() <= set(order):
            return super().to_json()
        values = self.__dict__
        return {key: values[key] if key in values else extra[key] for key in order if key in given or key in extra}

    def _scored_line(self) -> JSONObject:
        """The line of a sample scored here: the keys every line has, then each optional key
        when it applies (as the schema's "when" says), then any extra key."""
        v = self.__dict__
        line: JSONObject = {key: v[key] for key in _ALWAYS_WRITTEN}
        if v["extracted_by"] is not None:
            line["extracted_by"] = v["extracted_by"]
        line["read_by"], line["evidence"], line["confidence"] = v["read_by"], v["evidence"], v["confidence"]
        failed = v["status"] == "format_failure"
        if failed and v["veto"] is not None:
            line["veto"] = v["veto"]
        if v["judge_reply"] is not None:
            line["judge_reply"] = v["judge_reply"]
        if v["judge_agrees"] is not None:
            line["judge_extracted"], line["judge_agrees"] = v["judge_extracted"], v["judge_agrees"]
        if v["judge_rejected"] is not None:
            line["judge_rejected"] = v["judge_rejected"]
        if v["judge_history"]:
            line["judge_history"] = v["judge_history"]
        if v["finish_reason"] is not None:
            line["finish_reason"] = v["finish_reason"]
        if v["usage"]:
            line["usage"] = v["usage"]
        if v["cached"]:
            line["cached"] = True
        if failed and v["failure"] is not None:
            line["failure"] = v["failure"]
        for key in _WRITTEN_UNLESS_NULL:
            if v[key] is not None:
                line[key] = v[key]
        if self.__pydantic_extra__:
            line.update(self.__pydantic_extra__)
        return line

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

#: What a scored sample keeps besides its fields (:meth:`Sample.evolve` changes them by name
#: without the underscore), and their values before scoring sets them.
_PRIVATE_DEFAULTS: dict[str, object] = {name: attr.get_default() for name, attr in Sample.__private_attributes__.items()}
_WORKING = frozenset(name[1:] for name in _PRIVATE_DEFAULTS if name not in {"_order", "_scored", "_generation"})
_EVOLVABLE = frozenset(Sample.model_fields) | _WORKING
#: The fields-set of every sample scored in this process (all declared: its line is written by
#: :meth:`Sample._scored_line`, not from the keys given); never changed.
_SCORED_FIELDS_SET = set(Sample.model_fields)
#: The line of a scored sample: the keys always written, in order; the last ones, written unless
#: null (the others between are written as :meth:`Sample._scored_line` says).
_ALWAYS_WRITTEN = ("task", "id", "run", "status", "prediction", "gold", "extracted", "scores", "score", "error")
_WRITTEN_UNLESS_NULL = ("fields", "query")


def _generated(generation: Prediction | None) -> JSONObject:
    """A sample's facts of its generation: the prediction ("" when there is none), why it
    stopped, its token counts, whether it came from the cache."""
    if generation is None:
        return {"prediction": "", "finish_reason": None, "usage": None, "cached": None}
    return {"prediction": generation.prediction, "finish_reason": generation.finish_reason,
            "usage": generation.usage or None, "cached": True if generation.cached else None}  # fmt: skip

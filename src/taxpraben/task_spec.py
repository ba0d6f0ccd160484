"""The declarative task specification: one YAML file per dataset.

A spec says what a dataset is (name, Chinese name, description), how it is scored
(its kind, the metrics it selects among the kind's, and the options the kind reads) and where it sits in Bloom's
taxonomy. Adding a TaxPraBen-style dataset means writing one of these files; no code
changes. Validation is strict (unknown keys are errors) so a typo in a spec is caught
when it is loaded, not silently ignored.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class BloomLevel(str, Enum):
    remember = "remember"
    understand = "understand"
    apply = "apply"
    analyze = "analyze"
    evaluate = "evaluate"
    create = "create"


#: Order used in tables (Bloom's taxonomy, lowest to highest).
BLOOM_ORDER: tuple[BloomLevel, ...] = tuple(BloomLevel)

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClassificationOptions(_Strict):
    """How a classification answer is mapped to a label."""

    #: Choices are presented as lettered options (A, B, C, ...): a bare letter in the
    #: answer selects ``choices[index_of_letter]``.
    option_letters: bool = False
    #: Phrases after which the answer's label is expected ("答案", "属于", ...).
    answer_markers: list[str] = Field(
        default_factory=lambda: [
            "答案", "结论", "属于", "应为", "选择", "分类为", "类别",
            "主要涉及", "主要是", "应认定为", "认定为", "构成", "而是", "应以",
        ]
    )
    #: Other names a grader accepts for a choice: abbreviations (个税 for 个人所得税) and
    #: former names (偷税罪 for 逃税罪). Keys are choice texts.
    aliases: dict[str, list[str]] = Field(default_factory=dict)


class StructuredOptions(_Strict):
    """Exact-match scoring of a deterministic answer."""

    kind: Literal["number", "letters", "span"]
    #: number: both sides are rounded to this many decimals before comparison.
    decimals: int = Field(2, ge=0, le=8)
    #: letters: the option letters that may appear in an answer.
    letters: str = "ABCDE"
    #: number: accept the gold written as a fraction when the prediction is a percent
    #: (gold 0.12, prediction "12%"), see parsing.numbers.
    percent_as_fraction: bool = True


#: How a field is scored: number and category by exact match, text by BERTScore.
FieldKind = Literal["number", "category", "text"]


class FieldRule(_Strict):
    """One field of a JSON-shaped answer (TaxInspect, TaxPlan) or one aspect (TaxRisk).

    A record's fields are its gold's own keys: a rule gives the kind, synonyms and decimals
    of a key it names (by name or synonym); a key no rule names gets a kind inferred from
    its gold value (see ``taxpraben.parsing.fields.record_fields``), and a rule the gold
    lacks is not scored for that record.
    """

    name: str = Field(min_length=1)
    #: number and category are scored by exact match; text by BERTScore.
    kind: FieldKind = "text"
    #: Other keys a model may use for this field (aligned before fuzzy matching).
    synonyms: list[str] = Field(default_factory=list)
    decimals: int = Field(2, ge=0, le=8)


class FieldOptions(_Strict):
    """Field alignment for mixed answers and multi-aspect generation."""

    fields: list[FieldRule] = Field(min_length=1)
    #: Minimum similarity (0..1, difflib ratio) for a fuzzy key match.
    fuzzy_threshold: float = Field(0.6, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _unique_names(self) -> FieldOptions:
        seen: set[str] = set()
        for rule in self.fields:
            for key in (rule.name, *rule.synonyms):
                if key in seen:
                    raise ValueError(f"field name or synonym {key!r} is used twice")
                seen.add(key)
        return self


class TaskSpec(_Strict):
    """A TaxPraBen dataset and how it is scored."""

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_\-]*$")
    name_zh: str
    description: str
    #: The task's kind (taxpraben.kinds): classification, generation, structured, mixed, or
    #: a kind a plugin registered. Whether the rest of the spec fits the kind is checked
    #: when the spec is loaded (``TaskKind.check_spec``).
    type: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    bloom: BloomLevel
    metrics: list[str] = Field(min_length=1)
    #: Size of the dataset in the paper (informational; None when unknown).
    paper_size: int | None = None
    classification: ClassificationOptions | None = None
    structured: StructuredOptions | None = None
    #: Fields for mixed tasks; aspects for multi-aspect generation (TaxRisk).
    fields: FieldOptions | None = None
    #: Options of a kind registered by a plugin (the kind validates them).
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _fields_as_a_list(cls, data: Any) -> Any:
        """``fields:`` may be the list of field rules itself (``fields: [{name: ...}]``),
        short for ``fields: {fields: [...]}`` when the defaults of the rest suit."""
        if isinstance(data, dict) and isinstance(data.get("fields"), list):
            data = {**data, "fields": {"fields": data["fields"]}}
        return data

    @property
    def classification_options(self) -> ClassificationOptions:
        return self.classification or ClassificationOptions()

    @property
    def field_rules(self) -> list[FieldRule]:
        """The spec's field (or aspect) rules; empty when it has none."""
        return self.fields.fields if self.fields is not None else []

"""The declarative task specification: one YAML file per dataset.

A spec says what a dataset is (name, Chinese name, description), how it is scored
(output type, metrics and the options its type needs) and where it sits in Bloom's
taxonomy. Adding a TaxPraBen-style dataset means writing one of these files; no code
changes. Validation is strict (unknown keys are errors) so a typo in a spec is caught
when it is loaded, not silently ignored.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class OutputType(str, Enum):
    classification = "classification"
    generation = "generation"
    structured = "structured"
    mixed = "mixed"


class BloomLevel(str, Enum):
    remember = "remember"
    understand = "understand"
    apply = "apply"
    analyze = "analyze"
    evaluate = "evaluate"
    create = "create"


#: Order used in tables (Bloom's taxonomy, lowest to highest).
BLOOM_ORDER: tuple[BloomLevel, ...] = tuple(BloomLevel)

#: The metrics each output type may report; the first ones feed the task score.
METRICS_BY_TYPE: dict[OutputType, frozenset[str]] = {
    OutputType.classification: frozenset({"acc", "f1", "macro_f1", "missing_rate"}),
    OutputType.generation: frozenset({"bertscore", "bartscore"}),
    OutputType.structured: frozenset({"em"}),
    OutputType.mixed: frozenset({"em", "bertscore"}),
}


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
    type: OutputType
    bloom: BloomLevel
    metrics: list[str] = Field(min_length=1)
    #: Size of the dataset in the paper (informational; None when unknown).
    paper_size: int | None = None
    classification: ClassificationOptions | None = None
    structured: StructuredOptions | None = None
    #: Fields for mixed tasks; aspects for multi-aspect generation (TaxRisk).
    fields: FieldOptions | None = None

    @model_validator(mode="after")
    def _options_fit_type(self) -> TaskSpec:
        allowed = METRICS_BY_TYPE[self.type]
        unknown = [m for m in self.metrics if m not in allowed]
        if unknown:
            raise ValueError(
                f"metrics {unknown} do not apply to a {self.type.value} task "
                f"(allowed: {sorted(allowed)})"
            )
        if self.type is OutputType.structured and self.structured is None:
            raise ValueError("a structured task needs a 'structured' section (kind: number|letters|span)")
        if self.type is OutputType.mixed and self.fields is None:
            raise ValueError("a mixed task needs a 'fields' section listing its fields")
        if self.type is OutputType.mixed and self.fields is not None:
            kinds = {f.kind for f in self.fields.fields}
            if "text" not in kinds or not kinds & {"number", "category"}:
                raise ValueError(
                    "a mixed task needs at least one exact field (number or category) "
                    "and one text (rationale) field"
                )
        if self.type is not OutputType.structured and self.structured is not None:
            raise ValueError("'structured' options only apply to structured tasks")
        if self.type is not OutputType.classification and self.classification is not None:
            raise ValueError("'classification' options only apply to classification tasks")
        if self.fields is not None and self.type not in (OutputType.mixed, OutputType.generation):
            raise ValueError("'fields' only apply to mixed tasks and multi-aspect generation tasks")
        return self

    @property
    def classification_options(self) -> ClassificationOptions:
        return self.classification or ClassificationOptions()

    @property
    def is_multi_aspect(self) -> bool:
        return self.type is OutputType.generation and self.fields is not None

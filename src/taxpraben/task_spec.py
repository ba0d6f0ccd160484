"""The declarative task specification: one YAML file per dataset.

A spec says what a dataset is (name, Chinese name, description), how it is scored
(its kind, the metrics it selects among the kind's, and the options the kind reads) and where it sits in Bloom's
taxonomy. Adding a TaxPraBen-style dataset means writing one of these files; no code
changes. Validation is strict (unknown keys are errors) so a typo in a spec is caught
when it is loaded, not silently ignored.

The specs are frozen standard-library dataclasses that pydantic validates
(:func:`validate_spec`, a ``TypeAdapter``: types, ranges and patterns from the
``Annotated`` constraints below, unknown keys refused by ``__pydantic_config__``), not
pydantic models: building them from a spec file that is known good needs no pydantic at all
(:func:`build_spec`), and pydantic's import and model building were a quarter of the time
``run`` took to send its first request (0.1 s of 0.4, issue 24). ``run`` builds its specs so
and has pydantic check them while the first requests go out (``Registry.check``).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, cast

if TYPE_CHECKING:
    from pydantic import ConfigDict, GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema

    from taxpraben.results.json_value import JSONObject, JSONValue


class BloomLevel(str, Enum):
    remember = "remember"
    understand = "understand"
    apply = "apply"
    analyze = "analyze"
    evaluate = "evaluate"
    create = "create"


#: Order used in tables (Bloom's taxonomy, lowest to highest).
BLOOM_ORDER: tuple[BloomLevel, ...] = tuple(BloomLevel)

class _Checked:
    """``Annotated`` metadata: constraints pydantic checks, as keys of the field's core schema
    (``ge``, ``le``, ``min_length``, ``pattern``: pydantic's own checks and messages, "Input
    should be less than or equal to 8"), read by pydantic without this module importing it or
    ``annotated_types`` (8-13 ms of ``run``'s start-up, for three of its classes).

    ``strict=True``: the value must already be of the type (2, not "2"; true, not "yes"). A
    spec built without pydantic (:func:`build_spec`) holds the file's values as they are, so
    pydantic must not read them as others: every command refuses what ``run`` would have to."""

    def __init__(self, **schema: Any) -> None:
        self.schema = schema

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return cast("CoreSchema", {**handler(source), **self.schema})  # the schema with the constraints added


_STRICT = _Checked(strict=True)
_DECIMALS = _Checked(ge=0, le=8, strict=True)
_NOT_EMPTY = _Checked(min_length=1)

#: What pydantic reads of each spec class: a key the class does not name is an error.
_FORBID_EXTRA: ConfigDict = {"extra": "forbid"}


@dataclass(frozen=True)
class ClassificationOptions:
    """How a classification answer is mapped to a label."""

    __pydantic_config__: ClassVar[ConfigDict] = _FORBID_EXTRA

    #: Choices are presented as lettered options (A, B, C, ...): a bare letter in the
    #: answer selects ``choices[index_of_letter]``.
    option_letters: Annotated[bool, _STRICT] = False
    #: Phrases after which the answer's label is expected ("答案", "属于", ...).
    answer_markers: list[str] = field(
        default_factory=lambda: [
            "答案", "结论", "属于", "应为", "选择", "分类为", "类别",
            "主要涉及", "主要是", "应认定为", "认定为", "构成", "而是", "应以",
        ]
    )
    #: Other names a grader accepts for a choice: abbreviations (个税 for 个人所得税) and
    #: former names (偷税罪 for 逃税罪). Keys are choice texts.
    aliases: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class StructuredOptions:
    """Exact-match scoring of a deterministic answer."""

    __pydantic_config__: ClassVar[ConfigDict] = _FORBID_EXTRA

    kind: Literal["number", "letters", "span"]
    #: number: both sides are rounded to this many decimals before comparison.
    decimals: Annotated[int, _DECIMALS] = 2
    #: letters: the option letters that may appear in an answer.
    letters: str = "ABCDE"
    #: number: accept the gold written as a fraction when the prediction is a percent
    #: (gold 0.12, prediction "12%"), see parsing.numbers.
    percent_as_fraction: Annotated[bool, _STRICT] = True


#: How a field is scored: number and category by exact match, text by BERTScore.
FieldKind = Literal["number", "category", "text"]


@dataclass(frozen=True)
class FieldRule:
    """One field of a JSON-shaped answer (TaxInspect, TaxPlan) or one aspect (TaxRisk).

    A record's fields are its gold's own keys: a rule gives the kind, synonyms and decimals
    of a key it names (by name or synonym); a key no rule names gets a kind inferred from
    its gold value (see ``taxpraben.parsing.record_fields.record_fields``), and a rule the gold
    lacks is not scored for that record.
    """

    __pydantic_config__: ClassVar[ConfigDict] = _FORBID_EXTRA

    name: Annotated[str, _NOT_EMPTY]
    #: number and category are scored by exact match; text by BERTScore.
    kind: FieldKind = "text"
    #: Other keys a model may use for this field (aligned before fuzzy matching).
    synonyms: list[str] = field(default_factory=list)
    decimals: Annotated[int, _DECIMALS] = 2


@dataclass(frozen=True)
class FieldOptions:
    """Field alignment for mixed answers and multi-aspect generation."""

    __pydantic_config__: ClassVar[ConfigDict] = _FORBID_EXTRA

    fields: Annotated[list[FieldRule], _NOT_EMPTY]
    #: Minimum similarity (0..1, difflib ratio) for a fuzzy key match.
    fuzzy_threshold: Annotated[float, _Checked(ge=0.0, le=1.0, strict=True)] = 0.6

    def __post_init__(self) -> None:  # pydantic runs it after validating (a ValueError: its error)
        if type(self.fuzzy_threshold) is int:  # 1 for 1.0: one value, one JSON text (the manifest's hash)
            object.__setattr__(self, "fuzzy_threshold", float(self.fuzzy_threshold))
        seen: set[str] = set()
        for rule in self.fields:
            for key in (rule.name, *rule.synonyms):
                if key in seen:
                    raise ValueError(f"field name or synonym {key!r} is used twice")
                seen.add(key)


@dataclass(frozen=True)
class ReadingOptions:
    """How the task's outputs are read: ``chain``, the name of a chain set (``taxpraben``,
    ``taxben``: ``taxpraben rules``), whose chain of the task's reading kind reads; or the
    reading rules of its kind's reader in the order they are tried (names of ``taxpraben
    rules``; every name must be a rule of the task's reading kind). Without it the default
    chain set (``taxpraben``) reads."""

    __pydantic_config__: ClassVar[ConfigDict] = _FORBID_EXTRA

    chain: Annotated[list[str], _NOT_EMPTY] | Annotated[str, _NOT_EMPTY] | None = None


@dataclass(frozen=True)
class TaskSpec:
    """A TaxPraBen dataset and how it is scored."""

    __pydantic_config__: ClassVar[ConfigDict] = _FORBID_EXTRA

    name: Annotated[str, _Checked(pattern=r"^[A-Za-z][A-Za-z0-9_\-]*$")]
    name_zh: str
    description: str
    #: The task's kind (taxpraben.kinds): classification, generation, structured, mixed, or
    #: a kind a plugin registered. Whether the rest of the spec fits the kind is checked
    #: when the spec is loaded (``TaskKind.check_spec``).
    type: Annotated[str, _Checked(pattern=r"^[a-z][a-z0-9_]*$")]
    bloom: BloomLevel
    metrics: Annotated[list[str], _NOT_EMPTY]
    #: Size of the dataset in the paper (informational; None when unknown).
    paper_size: Annotated[int, _STRICT] | None = None
    classification: ClassificationOptions | None = None
    structured: StructuredOptions | None = None
    #: Fields for mixed tasks; aspects for multi-aspect generation (TaxRisk).
    fields: FieldOptions | None = None
    #: Options of a kind registered by a plugin (the kind validates them).
    options: dict[str, Any] = field(default_factory=dict)
    #: The chain of reading rules its reader runs (None: its kind's default chain).
    reading: ReadingOptions | None = None

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """pydantic's schema of the spec, which leaves ``reading`` out of a dump when it is
        None: a spec without its own chain dumps (and hashes) as before the key existed."""
        schema = handler(source)
        _exclude_when_none(schema, "reading")
        return schema

    @property
    def reading_chain(self) -> str | tuple[str, ...] | None:
        """The spec's own chain: the name of a chain set, or rule names in order; None for
        the default chain set."""
        chain = self.reading.chain if self.reading is not None else None
        if not chain:
            return None
        return chain if isinstance(chain, str) else tuple(chain)

    @property
    def classification_options(self) -> ClassificationOptions:
        return self.classification or ClassificationOptions()

    @property
    def field_rules(self) -> list[FieldRule]:
        """The spec's field (or aspect) rules; empty when it has none."""
        return self.fields.fields if self.fields is not None else []


def _is_none(value: object) -> bool:
    return value is None


def _exclude_when_none(schema: object, name: str) -> None:
    """Mark the dataclass field ``name`` in a pydantic core schema to be left out of dumps
    when None."""
    if isinstance(schema, dict):
        if schema.get("type") == "dataclass-field" and schema.get("name") == name:
            schema["serialization_exclude_if"] = _is_none
            return
        for value in schema.values():
            _exclude_when_none(value, name)
    elif isinstance(schema, list):
        for value in schema:
            _exclude_when_none(value, name)


def spec_input(raw: JSONObject) -> JSONObject:
    """A spec file's mapping as the classes take it: ``fields:`` may be the list of field
    rules itself (``fields: [{name: ...}]``), short for ``fields: {fields: [...]}`` when the
    defaults of the rest suit."""
    if isinstance(raw.get("fields"), list):
        return {**raw, "fields": {"fields": raw["fields"]}}
    return raw


def validate_spec(raw: JSONObject) -> TaskSpec:
    """The spec of a spec file's mapping, validated by pydantic: its ``ValidationError``
    names each key that is wrong and why."""
    return _adapter().validate_python(spec_input(raw))


def build_spec(raw: JSONObject) -> TaskSpec:
    """The spec of a spec file's mapping built as it is, with no check of its values' types
    or ranges (:func:`validate_spec` makes them): a key it does not know, a missing one or an
    unknown Bloom level raises TypeError or ValueError. For specs that are checked after
    (``Registry.check``)."""
    data = dict(spec_input(raw))
    sections = {"classification": ClassificationOptions, "structured": StructuredOptions, "reading": ReadingOptions}
    for key, cls in sections.items():
        if isinstance(data.get(key), dict):
            data[key] = cls(**data[key])
    if isinstance(data.get("fields"), dict):
        options = dict(data["fields"])
        if isinstance(options.get("fields"), list):
            options["fields"] = [FieldRule(**rule) if isinstance(rule, dict) else rule for rule in options["fields"]]
        data["fields"] = FieldOptions(**options)
    if "bloom" in data:
        data["bloom"] = BloomLevel(data["bloom"])
    return TaskSpec(**data)


def spec_json(spec: TaskSpec) -> JSONObject:
    """The spec as JSON values (what pydantic's ``dump_python(mode="json")`` gives): the
    manifest hashes it). A spec without ``reading`` is written without the key, as before
    it existed, so its hash stays what it was."""
    data = dataclasses.asdict(spec)
    if data.get("reading") is None:
        data.pop("reading", None)
    values: JSONObject = _json_values(data)
    return values


def _json_values(value: object) -> JSONValue:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _json_values(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_values(v) for v in value]
    return value


@functools.cache
def _adapter() -> TypeAdapter[TaskSpec]:
    """pydantic's validator of the specs, made once, when first asked for."""
    from pydantic import TypeAdapter

    return TypeAdapter(TaskSpec)

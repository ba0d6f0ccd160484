"""The task registry: bundled specs, user task directories, and spec validation errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from taxpraben.kinds import kind_of
from taxpraben.task_spec import TaskSpec, build_spec, spec_json, validate_spec
from taxpraben.tasks import (
    PAPER_ORDER,
    TASK_DIR_ENV,
    BloomLevel,
    Registry,
    TaskSpecError,
    load_registry,
)

EXPECTED = {
    "TaxRecite": ("generation", "remember"),
    "TaxSum": ("generation", "understand"),
    "TaxTopic": ("classification", "understand"),
    "TaxRead": ("structured", "understand"),
    "TaxCalc": ("structured", "apply"),
    "TaxSCQ": ("classification", "apply"),
    "TaxMCQ": ("structured", "apply"),
    "TaxQA": ("generation", "apply"),
    "TaxBoard": ("generation", "apply"),
    "TaxCrime": ("classification", "analyze"),
    "TaxOpinion": ("generation", "analyze"),
    "TaxRisk": ("generation", "evaluate"),
    "TaxInspect": ("mixed", "evaluate"),
    "TaxPlan": ("mixed", "create"),
}


def test_bundled_registry_has_the_14_datasets_in_paper_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TASK_DIR_ENV, raising=False)
    reg = load_registry()
    assert list(reg) == list(PAPER_ORDER)
    for name, (kind, bloom) in EXPECTED.items():
        assert reg[name].type == kind
        assert reg[name].bloom.value == bloom


def test_type_specific_options() -> None:
    reg = load_registry(use_env=False)
    assert reg["TaxCalc"].structured.kind == "number" and reg["TaxCalc"].structured.decimals == 2
    assert reg["TaxMCQ"].structured.kind == "letters" and reg["TaxMCQ"].structured.letters == "ABCDE"
    assert reg["TaxSCQ"].classification_options.option_letters is True
    assert reg["TaxRisk"].fields is not None and kind_of(reg["TaxRisk"]).field_mode(reg["TaxRisk"]) == "aspects"
    kinds = {f.name: f.kind for f in reg["TaxInspect"].field_rules}
    assert kinds["分析理由"] == "text" and kinds["少缴税款"] == "number"


NEW_SPEC = """\
name: TaxStamp
name_zh: 印花税计算
description: Stamp duty on contracts.
type: structured
bloom: apply
metrics: [em]
structured:
  kind: number
  decimals: 2
"""


def test_user_task_dir_adds_a_dataset_without_code(tmp_path: Path) -> None:
    (tmp_path / "TaxStamp.yaml").write_text(NEW_SPEC, encoding="utf-8")
    reg = load_registry([tmp_path], use_env=False)
    assert "TaxStamp" in reg and len(reg) == 15
    assert reg["TaxStamp"].type == "structured"


def test_env_task_dir_and_override_of_a_bundled_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    override = (Path(__file__).parents[1] / "src/taxpraben/tasks/specs/TaxCrime.yaml").read_text(encoding="utf-8")
    (tmp_path / "TaxCrime.yaml").write_text(override.replace("bloom: analyze", "bloom: evaluate"), encoding="utf-8")
    monkeypatch.setenv(TASK_DIR_ENV, str(tmp_path))
    reg = load_registry()
    assert reg["TaxCrime"].bloom is BloomLevel.evaluate
    assert reg.sources["TaxCrime"] == tmp_path / "TaxCrime.yaml"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (NEW_SPEC.replace("type: structured", "type: ranking"), "key type"),
        (NEW_SPEC.replace("bloom: apply", "bloom: memorise"), "key bloom"),
        (NEW_SPEC.replace("metrics: [em]", "metrics: [bleu]"), "do not apply"),
        (NEW_SPEC.replace("structured:\n  kind: number\n  decimals: 2\n", ""), "needs a 'structured' section"),
        (NEW_SPEC.replace("decimals: 2", "decimals: 2\n  digits: 3"), "key structured.digits"),
        (NEW_SPEC + "colour: red\n", "key colour: Extra inputs are not permitted"),
        (NEW_SPEC.replace("decimals: 2", "decimals: 9"), "key structured.decimals: Input should be less than or equal to 8"),
        # Values are read strictly: a spec built from the file as it is (run's) is the checked one.
        (NEW_SPEC.replace("decimals: 2", 'decimals: "2"'), "key structured.decimals: Input should be a valid integer"),
        (NEW_SPEC + 'paper_size: "120"\n', "key paper_size: Input should be a valid integer"),
        (NEW_SPEC.replace("decimals: 2", "percent_as_fraction: 'yes'"), "key structured.percent_as_fraction: Input should be a valid boolean"),
        (NEW_SPEC.replace("name: TaxStamp", "name: 7Stamp"), "key name: String should match pattern"),
        (NEW_SPEC.replace("metrics: [em]", "metrics: []"), "key metrics: List should have at least 1 item"),
        (NEW_SPEC.replace("name: TaxStamp", "name: OtherName"), "must match the file name"),
        ("- just\n- a list\n", "must be a mapping"),
        ("name: [unclosed\n", "cannot read task spec"),
    ],
)
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "built-then-checked"])
def test_bad_spec_names_file_and_key(tmp_path: Path, text: str, expected: str, checked: bool) -> None:
    """The same message whether pydantic checks the spec as it is loaded or after (``run``)."""
    path = tmp_path / "TaxStamp.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TaskSpecError) as info:
        load_registry([tmp_path], use_env=False, checked=checked).check()
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_mixed_spec_needs_exact_and_text_fields(tmp_path: Path) -> None:
    text = """\
name: TaxOdd
name_zh: 测试
description: x
type: mixed
bloom: create
metrics: [em, bertscore]
fields:
  fields:
    - name: 理由
      kind: text
"""
    (tmp_path / "TaxOdd.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(TaskSpecError, match="at least one exact field"):
        load_registry([tmp_path], use_env=False)


def test_missing_task_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TaskSpecError, match="does not exist"):
        load_registry([tmp_path / "nope"], use_env=False)


def test_select_suggests_the_closest_name() -> None:
    reg = load_registry(use_env=False)
    assert [s.name for s in reg.select(["taxcalc", "TaxMCQ"])] == ["TaxCalc", "TaxMCQ"]
    with pytest.raises(KeyError, match="did you mean 'TaxCalc'"):
        reg.select(["TaxCalk"])


def test_fields_may_be_given_as_the_list_of_rules(tmp_path: Path) -> None:
    nested = (Path(__file__).resolve().parent.parent / "src/taxpraben/tasks/specs/TaxPlan.yaml").read_text("utf-8")
    head, _, rules = nested.partition("fields:\n  fields:\n")
    assert rules, "TaxPlan's spec lists its fields under fields: fields:"
    flat = head + "fields:\n" + "\n".join(line[2:] for line in rules.splitlines()) + "\n"
    (tmp_path / "TaxPlan.yaml").write_text(flat, encoding="utf-8")
    bundled = load_registry(use_env=False)["TaxPlan"]
    assert load_registry([tmp_path], use_env=False)["TaxPlan"].field_rules == bundled.field_rules
    assert [r.name for r in bundled.field_rules]


SPEC_DIR = Path(__file__).parents[1] / "src/taxpraben/tasks/specs"


@pytest.mark.parametrize("path", sorted(SPEC_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_a_spec_built_without_pydantic_is_the_validated_one(path: Path) -> None:
    """``run`` builds the specs from their files without pydantic (its import and schema
    building were 0.1 s of the start, issue 24) and has them checked later: what it builds is
    what pydantic validates, and hashes (manifest) to the same JSON as pydantic dumps."""
    from pydantic import TypeAdapter

    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    built, validated = build_spec(raw), validate_spec(raw)
    assert built == validated
    assert spec_json(built) == TypeAdapter(TaskSpec).dump_python(validated, mode="json")
    assert isinstance(validated, TaskSpec) and type(validated.bloom) is BloomLevel


def test_an_unchecked_registry_equals_the_checked_one_and_is_checked_once(tmp_path: Path) -> None:
    (tmp_path / "TaxStamp.yaml").write_text(NEW_SPEC, encoding="utf-8")
    checked = load_registry([tmp_path], use_env=False)
    unchecked = load_registry([tmp_path], use_env=False, checked=False)
    assert checked == unchecked and list(checked) == list(unchecked) and checked.sources == unchecked.sources
    assert checked.unchecked == {} and set(unchecked.unchecked) == set(unchecked.sources.values())
    unchecked.check()
    assert unchecked.unchecked == {}


def test_a_value_out_of_range_waits_for_the_check(tmp_path: Path) -> None:
    """Built unchecked, a spec whose keys are right loads; its value is refused by the check."""
    path = tmp_path / "TaxStamp.yaml"
    path.write_text(NEW_SPEC.replace("decimals: 2", "decimals: 9"), encoding="utf-8")
    registry = load_registry([tmp_path], use_env=False, checked=False)
    assert registry["TaxStamp"].structured is not None and registry["TaxStamp"].structured.decimals == 9
    with pytest.raises(TaskSpecError, match=r"TaxStamp.yaml: invalid task spec\n  key structured.decimals"):
        registry.check()
    assert path in registry.unchecked  # still unchecked: a second check says it again


def test_an_overridden_spec_is_not_checked_for_the_file_it_replaced(tmp_path: Path) -> None:
    override = (SPEC_DIR / "TaxCalc.yaml").read_text(encoding="utf-8")
    (tmp_path / "TaxCalc.yaml").write_text(override, encoding="utf-8")
    registry = load_registry([tmp_path], use_env=False, checked=False)
    assert SPEC_DIR / "TaxCalc.yaml" not in registry.unchecked and tmp_path / "TaxCalc.yaml" in registry.unchecked


def test_the_check_refuses_a_spec_that_is_not_what_its_file_says(tmp_path: Path) -> None:
    """The guard behind the strict reading: a spec in use that pydantic reads otherwise from
    its file is refused, naming the file, not used unchecked."""
    path = tmp_path / "TaxStamp.yaml"
    raw = yaml.safe_load(NEW_SPEC)
    registry = Registry({"TaxStamp": build_spec({**raw, "description": "other"})}, {"TaxStamp": path}, {path: raw})
    with pytest.raises(TaskSpecError, match=r"TaxStamp.yaml: invalid task spec\n  read as .*'Stamp duty on contracts\.'"):
        registry.check()


def test_an_integer_threshold_is_one_value_in_both_readings() -> None:
    raw = {"name": "TaxOdd", "name_zh": "测试", "description": "x", "type": "mixed", "bloom": "create",
           "metrics": ["em"], "fields": {"fields": [{"name": "a", "kind": "number"}], "fuzzy_threshold": 1}}  # fmt: skip
    built, validated = build_spec(raw), validate_spec(raw)
    assert built.fields is not None and type(built.fields.fuzzy_threshold) is float
    assert spec_json(built) == spec_json(validated)


@pytest.mark.parametrize(
    ("fields", "loc", "message"),
    [
        ({"fields": [{"name": "a", "kind": "number"}], "fuzzy_threshold": 1.5},
         ("fields", "fuzzy_threshold"), "Input should be less than or equal to 1"),
        ({"fields": [{"name": "a", "kind": "number"}], "fuzzy_threshold": "0.6"},
         ("fields", "fuzzy_threshold"), "Input should be a valid number"),
        ({"fields": [{"name": "", "kind": "number"}]}, ("fields", "fields", 0, "name"),
         "String should have at least 1 character"),
        ({"fields": []}, ("fields", "fields"), "List should have at least 1 item after validation, not 0"),
        ({"fields": [{"name": "a", "decimals": -1}]}, ("fields", "fields", 0, "decimals"),
         "Input should be greater than or equal to 0"),
    ],
)
def test_the_field_rules_constraints_are_pydantics(fields: dict[str, object], loc: tuple[object, ...], message: str) -> None:
    from pydantic import ValidationError

    raw = {"name": "TaxOdd", "name_zh": "测试", "description": "x", "type": "mixed", "bloom": "create",
           "metrics": ["em"], "fields": fields}  # fmt: skip
    with pytest.raises(ValidationError) as info:
        validate_spec(raw)
    assert [(e["loc"], e["msg"]) for e in info.value.errors()] == [(loc, message)]


def test_the_bundled_snapshot_is_what_the_bundled_yaml_reads() -> None:
    """run reads the bundled specs from tasks/bundled_specs.json (no PyYAML before its first
    request): it must hold exactly what the YAML files read, types included, and their hash.
    After editing a bundled spec: python -c "from taxpraben.tasks.registry import
    write_bundled_snapshot as w; w()"."""
    import json

    from taxpraben.tasks import registry

    stored = json.loads(registry.BUNDLED_SNAPSHOT.read_text(encoding="utf-8"))
    assert stored == registry.bundled_snapshot(), "tasks/bundled_specs.json is stale: remake it (see above)"
    paths = registry.spec_files(registry._bundled_spec_dir())
    for path in paths:  # equal by type too (1 == 1.0 == True in Python)
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert json.dumps(stored["specs"][path.name], sort_keys=True) == json.dumps(raw, sort_keys=True)
    assert registry._bundled_raw(paths) == stored["specs"]


def test_a_bundled_spec_that_differs_from_the_snapshot_is_read_from_its_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bundled file edited in place (its bytes no longer those the snapshot was made from)
    is read as YAML, as before the snapshot: the registry is what the files say."""
    import shutil

    from taxpraben.tasks import registry

    specs = tmp_path / "specs"
    shutil.copytree(registry._bundled_spec_dir(), specs)
    monkeypatch.setattr(registry, "_bundled_spec_dir", lambda: specs)
    monkeypatch.delenv(TASK_DIR_ENV, raising=False)
    assert registry._bundled_raw(registry.spec_files(specs)) is not None  # the copy: the snapshot's bytes
    path = specs / "TaxCalc.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("bloom: apply", "bloom: analyze"), encoding="utf-8")
    assert registry._bundled_raw(registry.spec_files(specs)) is None
    assert load_registry()["TaxCalc"].bloom == "analyze"
    assert load_registry(checked=False)["TaxCalc"].bloom == "analyze"

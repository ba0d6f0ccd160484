"""The task registry: bundled specs, user task directories, and spec validation errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from taxpraben.kinds import kind_of
from taxpraben.tasks import (
    PAPER_ORDER,
    TASK_DIR_ENV,
    BloomLevel,
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
        (NEW_SPEC + "colour: red\n", "key colour"),
        (NEW_SPEC.replace("name: TaxStamp", "name: OtherName"), "must match the file name"),
        ("- just\n- a list\n", "must be a mapping"),
        ("name: [unclosed\n", "cannot read task spec"),
    ],
)
def test_bad_spec_names_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "TaxStamp.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TaskSpecError) as info:
        load_registry([tmp_path], use_env=False)
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

"""JSON found in model output: a repair is taken only as far as the text holds it.

json-repair guesses; a guess can change an answer (``{"滞纳金" 47450}`` came back as
``{"滞纳金": 7450}``). These tests hold the rule of ``parsing/jsonish.py``: every number a
repair gives is written in the text, every string and key is there, and a field read from
a broken object has the value the model wrote for it or no value at all.
"""

from __future__ import annotations

import json
from typing import Any

import json_repair
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxpraben.parsing.jsonish import find_json_values
from taxpraben.parsing.readers.fields import parse_fields

SETTINGS = settings(max_examples=300, deadline=None)


@pytest.mark.parametrize(("text", "expected"), [
    # A missing colon: json-repair alone drops the first digit of the value.
    ('{"滞纳金" 47450}', {"滞纳金": 47450}),
    ('{"应纳税额": 100, "滞纳金" 47450}', {"应纳税额": 100, "滞纳金": 47450}),
    ('{"a" -300}', {"a": -300}),  # json-repair alone: 300
    ('{"total" 1,234}', {"total": "1,234"}),  # json-repair alone: ""
    ('{"a" "12"}', {"a": "12"}),
    ('{"a": {"b" 1, "c" [2]}, "d\\"" 3}', {"a": {"b": 1, "c": [2]}, 'd"': 3}),
    ('{“滞纳金” 47450}', {"滞纳金": 47450}),
    # A bare percentage: json-repair alone reads 5 (and 5 is not 5% = 0.05).
    ('{"税率": 5%, "税额": 100}', {"税率": "5%", "税额": 100}),
    ('{"a": [5%, 6%]}', {"a": ["5%", "6%"]}),
    ('{"税率": 13 %}', {"税率": "13 %"}),
    ('{"a": "比例, 5%"', {"a": "比例, 5%"}),  # inside a string: untouched
    # Chinese colons and commas around ASCII quotes: not one key '税率"：5%，"税额'.
    ('{"税率"：5%，"税额"：100}', {"税率": "5%", "税额": 100}),
    ('{"税率"：13%}', {"税率": "13%"}),
    # Strings in an array are items, not keys that lost their colon.
    ('{"答案": ["A", "B" "C"]}', {"答案": ["A", "B", "C"]}),
    ('{"a": ["x", "y" 2]}', {"a": ["x", "y", 2]}),
    # A missing comma: the value json-repair gives (7450) is not written: that entry is
    # left out, the rest stands.
    ('{"a": 1 "b" 47450}', {"a": 1}),
    # Faithful repairs stay as they were.
    ('{"a": [1 2]}', {"a": [1, 2]}),
    ('{"a": 1e3,}', {"a": 1000.0}),
    ("{'a': '税', 'b': True}", {"a": "税", "b": True}),
    ('{"a": 47,450}', {"a": "47,450"}),
    ("{a: 12.50", {"a": 12.5}),
    ('{"答案": "B",}', {"答案": "B"}),
    ('{“答案”：“B”，}', {"答案": "B"}),  # Chinese punctuation
    ('{"a": "x\\ny"}', {"a": "x\ny"}),
    ('{"a": "\\u4e00" ', {"a": "一"}),
    ('{"a":,"b":2}', {"a": "", "b": 2}),
    # A bare formula: json-repair alone reads its first operand (260000) or a list of two.
    ('{"滞纳金": 260000*0.0005*365, "罚款": 1}', {"滞纳金": "260000*0.0005*365", "罚款": 1}),
    ('{"滞纳金": (260000*0.0005)*365}', {"滞纳金": "(260000*0.0005)*365"}),
    ('{"a": 260000 × 0.05% × 365 = 47450}', {"a": "260000 × 0.05% × 365 = 47450"}),
    ('{"a": 1000-200,\n "b": 3}', {"a": "1000-200", "b": 3}),
    ('{"a": 47450.00 // 260000*0.05%*365\n, "b": 1}', {"a": 47450.0, "b": 1}),  # a comment
    ('{"a": -300, "b": 2}', {"a": -300, "b": 2}),
    ('{"a": "260000*0.0005"}', {"a": "260000*0.0005"}),
])  # fmt: skip
def test_a_repair_keeps_what_the_text_writes(text: str, expected: dict[str, Any]) -> None:
    assert find_json_values(text) == [expected]
    if not any(isinstance(v, dict) for v in expected.values()):  # parse_fields flattens nested objects
        assert parse_fields(text) == expected


def test_a_formula_for_a_field_is_scored_as_its_value() -> None:
    from taxpraben.parsing.field_match import field_value_matches
    from taxpraben.task_spec import FieldRule

    amount = FieldRule(name="滞纳金", kind="number")
    read = parse_fields('{"违法性质": "偷税", "滞纳金": 260000*0.0005*365, "罚款": 130000}')
    assert read is not None and read["罚款"] == 130000
    assert field_value_matches(read["滞纳金"], "47450", amount)
    assert not field_value_matches(260000, "47450", amount)  # what json-repair alone gave
    assert field_value_matches("260,000×0.05%×365元", "47450", amount)
    assert field_value_matches("260000×0.05%×365=47450", "47450", amount)  # the result written
    assert not field_value_matches("260000×0.05%×365=47000", "47450", amount)  # ... is the answer


def test_a_percentage_in_broken_json_is_scored_as_the_percentage() -> None:
    from taxpraben.parsing.field_match import field_value_matches
    from taxpraben.task_spec import FieldRule

    rate = FieldRule(name="税率", kind="number")
    read = parse_fields('{"税率": 5%, "税额": 100')
    assert read is not None and field_value_matches(read["税率"], "0.05", rate)
    assert not field_value_matches(5, "0.05", rate)  # what json-repair alone gave


def test_the_guesses_these_cases_guard_against_are_json_repairs_own() -> None:
    """If json-repair stops guessing these, the cases above still hold; this says why they exist."""
    assert json_repair.loads('{"滞纳金" 47450}') != {"滞纳金": 47450}
    assert json_repair.loads('{"a": 1 "b" 47450}') != {"a": 1, "b": 47450}
    assert json_repair.loads('{"税率": 5%}') == {"税率": 5}
    assert json_repair.loads('{"a": 260000*0.0005*365}') == {"a": 260000}


def test_a_list_with_an_item_the_text_does_not_hold_is_left_out_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    # An answer list missing one of its items is another answer: none of it is taken.
    monkeypatch.setattr(json_repair, "loads", lambda text, **_: {"答案": ["A", "C", "D"], "理由": "见上"})
    assert find_json_values('{"答案": ["A", "C", "E?"], "理由": "见上"') == [{"理由": "见上"}]
    monkeypatch.setattr(json_repair, "loads", lambda text, **_: ["A", "Z"])
    assert find_json_values('["A", "B"') == []
    monkeypatch.setattr(json_repair, "loads", lambda text, **_: {"是否": False, "键": None})
    assert find_json_values('{"是否": true, "键": ') == [{"键": None}]  # false is not written; null claims nothing


KEYS = st.text(alphabet="税额滞纳金应补退罚款所得abc", min_size=1, max_size=6)
VALUES = st.one_of(st.integers(-10**9, 10**9), st.decimals(-10**6, 10**6, places=2).map(float))
OBJECTS = st.dictionaries(KEYS, VALUES, min_size=1, max_size=5)


def _corrupt(text: str, how: str, at: int) -> str:
    """``text`` with one fault a model makes: a colon, a comma, a quote or the closing brace
    missing, a trailing comma, Chinese punctuation."""
    if how == "cn":
        return text.replace('"', "“", 1).replace(":", "：")
    if how == "trailing":
        return text[:-1] + ",}"
    if how == "unclosed":
        return text[:-1]
    char = {"colon": ":", "comma": ",", "quote": '"'}[how]
    places = [i for i, c in enumerate(text) if c == char]
    if not places:
        return text
    i = places[at % len(places)]
    return text[:i] + " " + text[i + 1:]


@SETTINGS
@given(OBJECTS, st.sampled_from(["colon", "comma", "quote", "cn", "trailing", "unclosed"]), st.integers(0, 20))
def test_a_field_read_from_a_broken_object_has_the_value_written_for_it(
    obj: dict[str, Any], how: str, at: int
) -> None:
    """The property behind the rule: whatever a fault does to an object, a number read for
    one of its keys is the number the model wrote for that key, never another."""
    text = _corrupt(json.dumps(obj, ensure_ascii=False), how, at)
    for found in find_json_values(text):
        if not isinstance(found, dict):
            continue
        for key, value in found.items():
            if key in obj and isinstance(value, (int, float)) and not isinstance(value, bool):
                assert value == obj[key], (text, found)

"""The table of realistic model outputs (tests/helpers/parsing_cases.py), run through the parsers."""

from __future__ import annotations

from decimal import Decimal

import pytest

from helpers.parsing_cases import (
    CHOICE_CASES,
    FIELD_CASES,
    FIELD_VALUE_CASES,
    LETTER_CASES,
    NUMBER_CASES,
    SPAN_CASES,
)
from taxpraben.parsing.field_match import align_fields, field_value_matches
from taxpraben.parsing.numbers import numbers_equal
from taxpraben.parsing.readers.fields import parse_fields
from taxpraben.parsing.readers.label import extract_choice
from taxpraben.parsing.readers.letters import extract_letter_set
from taxpraben.parsing.readers.number import extract_final_number
from taxpraben.parsing.readers.span import extract_span, span_match
from taxpraben.parsing.readers.taxben import read_correct
from taxpraben.tasks import load_registry

REGISTRY = load_registry(use_env=False)


def test_the_table_is_large_enough() -> None:
    total = sum(
        map(
            len,
            (NUMBER_CASES, CHOICE_CASES, LETTER_CASES, SPAN_CASES, FIELD_CASES, FIELD_VALUE_CASES),
        )
    )
    assert total >= 150


@pytest.mark.parametrize(("output", "expected", "gold", "correct"), NUMBER_CASES)
def test_taxcalc_final_number(output: str, expected: str | None, gold: str, correct: bool) -> None:
    found = extract_final_number(output)
    if expected is None:
        assert found is None
    else:
        assert found is not None
        assert found.value == Decimal(expected)
    assert numbers_equal(found, gold, decimals=2) is correct


@pytest.mark.parametrize(("task", "choices", "output", "expected", "gold"), CHOICE_CASES)
def test_classification_label(
    task: str, choices: list[str], output: str, expected: str | None, gold: str
) -> None:
    options = REGISTRY[task].classification_options
    label = extract_choice(
        output, choices, option_letters=options.option_letters, markers=options.answer_markers
    )
    assert label == expected
    assert label is None or label in choices
    assert (label == gold) is (expected == gold)


@pytest.mark.parametrize(("output", "expected", "gold"), LETTER_CASES)
def test_taxmcq_letter_set(output: str, expected: str | None, gold: str) -> None:
    found = extract_letter_set(output, REGISTRY["TaxMCQ"].structured.letters)
    assert found == (None if expected is None else frozenset(expected))
    assert (found == frozenset(gold)) is (expected is not None and set(expected) == set(gold))


@pytest.mark.parametrize(("output", "expected", "gold", "em", "taxben"), SPAN_CASES)
def test_taxread_span(output: str, expected: str, gold: str, em: bool, taxben: bool) -> None:
    assert extract_span(output) == expected
    assert span_match(output, gold) is em
    assert read_correct(output, gold) is taxben  # TaxBen's rule: the gold in the raw output


@pytest.mark.parametrize(("task", "output", "values", "hows"), FIELD_CASES)
def test_mixed_field_alignment(
    task: str, output: str, values: dict[str, object], hows: dict[str, str]
) -> None:
    options = REGISTRY[task].fields
    parsed = parse_fields(output)
    aligned = align_fields(parsed or {}, options.fields, options.fuzzy_threshold)
    assert list(aligned) == [rule.name for rule in options.fields]
    assert {name: field.how for name, field in aligned.items()} == hows
    for name, value in values.items():
        assert aligned[name].value == value, name
    if not values:
        assert parsed is None


@pytest.mark.parametrize(("task", "field", "pred", "gold", "matches"), FIELD_VALUE_CASES)
def test_field_value_exact_match(
    task: str, field: str, pred: object, gold: object, matches: bool
) -> None:
    rule = next(r for r in REGISTRY[task].field_rules if r.name == field)
    assert field_value_matches(pred, gold, rule) is matches

"""Unit tests of parsing.letters: TaxMCQ option-letter sets and TaxBen's regex."""

from __future__ import annotations

import pytest

from taxpraben.parsing.readers.letters import extract_letter_set


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ABD", "ABD"),
        ("A、B和D", "ABD"),
        ("A,B,D", "ABD"),
        ("A，B，D", "ABD"),
        ("A/B/D", "ABD"),
        ("A;B;D", "ABD"),
        ("A B D", "ABD"),
        ("A与D", "AD"),
        ("A及D", "AD"),
        ("A以及D", "AD"),
        ("选项A与D", "AD"),
        ("A项和D项", "AD"),
        ("(A)(B)", "AB"),
        ("AAB", "AB"),
        ("答案：ACD", "ACD"),
        ("答案：A", "A"),
        ('{"答案": ["A", "C"]}', "AC"),
        ('{"answer": "A,C"}', "AC"),
        ('{"答案": "ACD", "解析": "B错误"}', "ACD"),
        # after the last answer marker
        ("A正确，B错误。答案：AC", "AC"),
        ("答案：AB。后来发现应选CD", "CD"),
        # a marker whose letters are far away is not used
        ("答案解析如下，请仔细阅读各个选项的内容后再作判断。A、C", "AC"),
        # letters outside the allowed set and inside English words
        ("VAT和CEO都不是选项，答案：BE", "BE"),
        ("Answer: B", "B"),
        ("答案：ABF", None),  # "ABF" is not a run of option letters
        ("答案：ａｂｃ", "ABC"),  # lower case right after a final-answer marker
        ("the abc of tax: VAT", None),  # lower case elsewhere is English
        ("无", None),
        ("", None),
    ],
)
def test_extract_letter_set(text: str, expected: str | None) -> None:
    assert extract_letter_set(text) == (None if expected is None else frozenset(expected))


def test_allowed_letters_are_a_parameter() -> None:
    assert extract_letter_set("答案：ABF", "ABCDEF") == frozenset("ABF")
    assert extract_letter_set("答案：AB", "CD") is None


def test_reasoning_is_ignored() -> None:
    assert extract_letter_set("<think>ABCD</think>答案：BD") == frozenset("BD")

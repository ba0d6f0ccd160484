"""Unit tests of parsing.readers.label: JSON field, option letters, named choices, TaxBen rule."""

from __future__ import annotations

import pytest

from taxpraben.parsing.readers.label import extract_choice

ABCD = ["增值税", "企业所得税", "个人所得税", "消费税"]
TOPICS = ["增值税", "土地增值税", "所得税", "企业所得税", "个人所得税"]
MARKERS = ["答案", "结论", "属于", "应为", "选择", "分类为", "类别"]


def lettered(text: str, choices: list[str] = ABCD) -> str | None:
    return extract_choice(text, choices, option_letters=True, markers=MARKERS)


def named(text: str, choices: list[str] = TOPICS, markers: list[str] = MARKERS) -> str | None:
    return extract_choice(text, choices, option_letters=False, markers=markers)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"答案": "B"}', "企业所得税"),
        ('{"answer": "b"}', "企业所得税"),  # a lone lower-case letter as the answer value
        ('{"Answer": "个人所得税"}', "个人所得税"),
        ('{"final_answer": "(D)"}', "消费税"),
        ('{"答案": ["C"]}', "个人所得税"),
        ('{"解析": "A不对", "答案": "D. 消费税"}', "消费税"),
        ('{"result": {"答案": "A"}}', "增值税"),
        # the JSON value names nothing: fall through to the text
        ('{"答案": "不确定"} 我选B', "企业所得税"),
    ],
)
def test_json_answer_field(text: str, expected: str | None) -> None:
    assert lettered(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("答案：B", "企业所得税"),
        ("答案是B", "企业所得税"),
        ("答案为 B 项", "企业所得税"),
        ("正确答案：（C）", "个人所得税"),
        ("正确选项为【A】", "增值税"),
        ("选B", "企业所得税"),
        ("应选择D", "消费税"),
        ("故选A。", "增值税"),
        ("Answer: C", "个人所得税"),
        ("the answer is (D)", "消费税"),
        ("B", "企业所得税"),
        ("B.", "企业所得税"),
        ("(B)", "企业所得税"),
        ("B、企业所得税", "企业所得税"),
        ("**C**", "个人所得税"),
        ("选项C的说法正确", "个人所得税"),
        ("C项正确", "个人所得税"),
        ("我认为是D。", "消费税"),
        # the last explicit marker wins
        ("答案：A。等等，重新考虑后答案：C", "个人所得税"),
        ("选项A错误，选项B正确，故选B", "企业所得税"),
        # letters out of range are ignored
        ("答案：E", None),
        ("答案：F，也就是B", "企业所得税"),
    ],
)
def test_option_letters(text: str, expected: str | None) -> None:
    assert lettered(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "VAT is a consumption tax",  # letters inside English words
        "CEO和CFO都要申报",
        "A股市场",  # A-shares: a word
        "选项A与选项B都不对",  # two different weak letters: ambiguous
        "A和C都有可能",
    ],
)
def test_no_letter_false_positives(text: str) -> None:
    assert lettered(text) is None


def test_letters_are_ignored_without_option_letters() -> None:
    assert named("答案：B", TOPICS) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("企业所得税", "企业所得税"),
        ("该文主要讨论所得税", "所得税"),
        # overlap: the longer choice hides the shorter one inside it
        ("本文讨论企业所得税汇算清缴", "企业所得税"),
        ("本文讨论土地增值税清算", "土地增值税"),
        ("本文讨论土地增值税清算，也涉及增值税", "土地增值税"),
        # two options offered together give no one answer; one also given alone is it
        ("个人所得税与增值税", None),
        ("增值税或个人所得税", None),
        ("个人所得税与增值税相比，本文讨论的是个人所得税", "个人所得税"),
        # after the last marker
        ("文中提到增值税，但属于企业所得税", "企业所得税"),
        ("答案：增值税。结论：个人所得税", "个人所得税"),
        # a marker followed by no choice is skipped
        ("答案：个人所得税，这属于常见问题", "个人所得税"),
        # negated markers and negated mentions
        ("不属于增值税，而属于土地增值税", "土地增值税"),
        ("属于企业所得税，不属于增值税", "企业所得税"),
        ("并非增值税，是所得税", "所得税"),
        # case-insensitive Latin, folded characters
        ("答案：ＶＡＴ", "VAT"),
        ("答案：vat", "VAT"),
        ("无关内容", None),
        ("", None),
    ],
)
def test_named_choice(text: str, expected: str | None) -> None:
    assert named(text, [*TOPICS, "VAT"]) == expected


def test_markers_come_from_the_caller() -> None:
    text = "罪名：逃税罪，而不是抗税罪"
    crimes = ["抗税罪", "逃税罪"]
    assert extract_choice(text, crimes, option_letters=False, markers=["罪名"]) == "逃税罪"
    assert (
        extract_choice("抗税罪？构成逃税罪", crimes, option_letters=False, markers=["构成"])
        == "逃税罪"
    )
    # Without the marker: the last sentence that names a choice.
    assert (
        extract_choice("抗税罪？构成逃税罪", crimes, option_letters=False, markers=[]) == "逃税罪"
    )
    assert extract_choice("抗税罪，逃税罪", crimes, option_letters=False, markers=[]) == "抗税罪"


def test_result_is_always_a_choice_or_none() -> None:
    assert extract_choice("答案：B", [], option_letters=True, markers=MARKERS) is None
    dup = ["增值税", "增值税", "消费税"]
    assert extract_choice("增值税", dup, option_letters=False, markers=[]) == "增值税"
    assert extract_choice("答案：A", ["", "x"], option_letters=True, markers=[]) == ""


def test_reasoning_is_not_read() -> None:
    assert lettered("<think>答案：A</think>答案：C") == "个人所得税"
    assert named("<think>属于增值税</think>") is None


CRIMES = ["逃税罪", "抗税罪", "逃避追缴欠税罪", "骗取出口退税罪", "虚开增值税专用发票罪", "虚开发票罪"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("本案不构成逃税罪，而应认定为逃避追缴欠税罪。", "逃避追缴欠税罪"),
        ("本案不构成逃税罪，应以逃避追缴欠税罪论处。", "逃避追缴欠税罪"),
        ("被告人不涉嫌抗税罪，其行为定性为逃税罪。", "逃税罪"),
        ("该案被告人构成虚开增值税专用发票罪。", "虚开增值税专用发票罪"),
        # The only charge named, and ruled out: the output asserts no charge (a charge it
        # denies is not its answer, whatever the gold).
        ("不构成逃税罪。", None),
    ],
)
def test_negated_charges_are_passed_over(text: str, expected: str) -> None:
    from taxpraben.tasks import load_registry

    markers = load_registry(use_env=False)["TaxCrime"].classification_options.answer_markers
    assert extract_choice(text, CRIMES, option_letters=False, markers=markers) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("因此选AB\n\n答案：A", "增值税"),  # an earlier letter set, answered later: the answer stands
        ("因此选A\n\n答案：B或C", None),  # the latest answer hedges: hedged
        ("答案：A或B", None),
    ],
)
def test_an_earlier_hedge_does_not_undo_a_later_answer(text: str, expected: str | None) -> None:
    from taxpraben.parsing.readers.label import extract_choice

    choices = ["增值税", "企业所得税", "个人所得税", "消费税"]
    assert extract_choice(text, choices, option_letters=True, markers=["属于"]) == expected

"""Unit tests of parsing.readers.span: normalisation, extraction, EM and TaxBen's substring rule."""

from __future__ import annotations

import pytest

from taxpraben.parsing.readers.span import extract_span, normalize_span, span_match


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("三十日", "30日"),
        ("  三十 日 。", "30日"),
        ("次年三月一日至六月三十日", "次年3月1日至6月30日"),
        ("第六十三条第一款", "第63条第1款"),
        ("百分之十二", "12%"),
        ("3%—5%", "3%至5%"),
        ("一般纳税人", "一般纳税人"),
        ("《增值税暂行条例》", "增值税暂行条例"),
        ("“不征税收入”！", "不征税收入"),
        ("纳税人、扣缴义务人", "纳税人扣缴义务人"),
        ("【A类】", "a类"),
        ("Withholding Agent", "withholdingagent"),
        ("ＡＢＣ", "abc"),
        ("12,000元", "12000元"),
        ("12.5%", "12.5%"),
        ("12.5 %", "12.5%"),
        ("-300元", "-300元"),
        ("1-3月", "1至3月"),  # a range is compared with 至
        ("12.50", "12.50"),
        ("第3.条", "第3条"),
        ("", ""),
        ("。，、", ""),
    ],
)
def test_normalize_span(text: str, normalized: str) -> None:
    assert normalize_span(text) == normalized


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("三十日", "三十日"),
        ("答案：三十日", "三十日"),
        ("答案是三十日。理由如下", "三十日"),
        ("答：三十日内；依据……", "三十日内"),
        ("答案：\n三十日", "三十日"),
        ("最终答案：**三十日**", "三十日"),
        ("Answer: thirty days. Because", "thirty days"),  # an English sentence ends at ". "
        ('{"答案": "三十日"}', "三十日"),
        ('```json\n{"answer": "三十日。其他"}\n```', "三十日"),
        ("先说答案：十日。最终答案：三十日", "三十日"),
        ("<think>答案：十日</think>三十日", "三十日"),
        ("根据规定，应为三十日。", "根据规定，应为三十日。"),
        ("", ""),
    ],
)
def test_extract_span(text: str, span: str) -> None:
    assert extract_span(text) == span


@pytest.mark.parametrize(
    ("pred", "gold", "em"),
    [
        ("答案：三十日", "三十日", True),
        ("答案：三十日。", "三十日", True),
        ("答案：企业所得税", "所得税", False),
        ("答案：12,000元", "12000元", True),
        ("答案：12000", "12000元", True),  # one amount, equal: the unit adds nothing
        ("答案：12000", "12000%", False),
        ("答案：三十日", "30日", True),  # numerals that count are compared in digits
        ("答案：不是三年", "三年", False),
        ("答案：取得所得的次年三月一日至六月三十日", "次年三月一日至六月三十日", True),
        ("答案：60日内", "60日", True),
        ("以后三年内", "三年", True),  # the law's wording around the period
        ("取得增值税专用发票112份", "112份", True),  # a count: the sentence's only number
        ("共112份", "112份", True),
        ("一百一十二份", "112份", True),
        ("112张", "112份", False),  # another unit
        ("处以0.6倍罚款", "0.6倍", True),
        ("0.6倍的罚款，即1284万元", "0.6倍", False),  # two numbers: which one answers is unsaid
        ("次年3月31日", "三月三十一日", True),
        ("截至6月30日", "6月30日", True),
        ("税后三年", "三年", False),
        ("综上所述，罚款金额为162500元。", "162,500.00元", True),
        ("综上所述，罚款金额为162500元，滞纳金800元。", "162,500.00元", False),
        ("anything", "", False),
        ("", "", False),
        ("答案：", "。", False),
    ],
)
def test_span_match(pred: str, gold: str, em: bool) -> None:
    assert span_match(pred, gold) is em


def test_span_after_a_marker_ends_at_the_clause() -> None:
    out = "根据材料，答案是2024年6月30日，依据是《增值税暂行条例》。"
    assert extract_span(out) == "2024年6月30日"
    assert span_match(out, "2024年6月30日")
    # a gold with a Chinese comma is compared with the whole first sentence
    out2 = "答案：先申报，后缴纳。其余略。"
    assert span_match(out2, "先申报，后缴纳")

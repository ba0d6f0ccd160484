"""Evidence spans: where in the raw output a reading was read (parsing/evidence.py)."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from taxpraben.parsing.evidence import covering_span, evidence_span, keyed


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200))
def test_a_key_maps_every_character_back_in_order(text: str) -> None:
    key, offsets = keyed(text)
    assert len(key) == len(offsets)
    assert offsets == sorted(offsets) and all(0 <= i < len(text) for i in offsets)
    for ch, i in zip(key, offsets, strict=True):  # each key character comes from its raw one
        raw = text[i]
        assert ch in unicodedata.normalize("NFKC", raw).translate({0x2212: "-"}) or raw in "−–—﹣－"


def test_the_key_drops_whitespace_markdown_and_latex_and_folds_full_width() -> None:
    assert keyed("**答案**：Ｃ")[0] == "答案:C"
    assert keyed("$\\boxed{44{,}000\\ \\text{元}}$")[0] == "44,000元"
    assert keyed("−2,520")[0] == "-2,520"


def test_the_answer_inside_the_latest_occurrence_of_its_source() -> None:
    raw = "<think>答案：B</think>\n分析……\n**答案：C**"
    start, end = evidence_span(raw, "答案:C", ["信息技术服务", "C"])
    assert raw[start:end] == "C" and start == raw.rindex("C")
    # the source alone when no answer text is in it; None when nothing is found
    start, end = evidence_span(raw, "答案:C", ["不动产"])
    assert raw[start:end] == "答案：C"
    assert evidence_span("这道题考查税率", "答案:C", ["C"]) is None


def test_a_source_whose_middle_was_blanked_is_found_by_its_ends() -> None:
    raw = '```json\n{"answer": ["A", "B", "D"]}\n```'
    start, end = evidence_span(raw, "A、B、D", ["ABD"])
    assert raw[start:end] == 'A", "B", "D'


def test_a_value_latex_computed_is_found_by_its_line() -> None:
    raw = "解：\n$\\frac{1}{3}$."
    start, end = evidence_span(raw, " 0.333333 .", ["0.333333"])
    assert raw[start:end] == "$\\frac{1}{3}$."


def test_covering_span_covers_each_value() -> None:
    raw = '结论如下：{"违法性质": "偷税", "少缴税款": 260000}'
    start, end = covering_span(raw, ["偷税", "260000"])
    assert raw[start:end] == '偷税", "少缴税款": 260000'
    assert covering_span(raw, ["逃税"]) is None


def _keyed_run_by_run(text: str) -> tuple[str, list[int]]:
    """keyed as first written: each run made half-width on its own."""
    from taxpraben.parsing import evidence

    chars: list[str] = []
    offsets: list[int] = []
    for m in evidence._KEPT.finditer(text):
        run = m.group()
        if run[0] == "\\":
            continue
        run = run.translate(evidence._HALF)
        if (run.isascii() or unicodedata.is_normalized("NFKC", run)) and not evidence._DASH.search(run):
            chars.append(run)
            offsets.extend(range(m.start(), m.end()))
            continue
        for k, c in enumerate(run):
            for f in (c if c.isascii() else unicodedata.normalize("NFKC", c)).translate(evidence._DASHES):
                if not f.isspace() and f not in evidence._SKIPPED:
                    chars.append(f)
                    offsets.append(m.start() + k)
    return "".join(chars), offsets


_WIDE_TEXTS = st.text(st.one_of(st.sampled_from("＼＊＿｀＃＞｜～｛｝＄－：（）Ａｚ０9 \n*_\\{}$税e\u0301ﬁ"), st.characters()))


@given(_WIDE_TEXTS)
def test_the_key_is_the_one_made_run_by_run_and_character_by_character(text: str) -> None:
    assert keyed(text) == _keyed_run_by_run(text)

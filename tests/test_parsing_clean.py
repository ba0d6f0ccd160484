"""Unit tests of parsing.clean: reasoning blocks, fences, character folding, whitespace."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taxpraben.parsing.clean import (
    clean_prediction,
    fold_characters,
    normalize_text,
    strip_reasoning,
    unwrap_code_fences,
)


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("<think>推理</think>答案：B", "答案:B"),
        ("<THINK>推理</Think>答案", "答案"),
        ("<think>一</think>中间<think>二</think>结尾", "中间\n结尾"),
        ('<think type="x">推理</think>B', "B"),
        ("<thinking>推理</thinking>B", "B"),
        # a stray closing tag: the opening one was in the prompt template
        ("推理很长\n很长</think>\n\n答案：13000", "答案:13000"),
        ("a</think>b</think>c", "c"),
        # unclosed opening tag: reasoning to the end ...
        ("<think>推理 100×13%=13", ""),
        ("前言<think>推理", "前言"),
        # ... unless a final-answer heading line follows
        ("<think>推理\n**答案**：13000", "**答案**:13000"),
        ("<think>推理\n答案：A\n再想想\n最终答案：B", "最终答案:B"),
        ("<think>推理\n## Final Answer\n42", "## Final Answer\n42"),
        ("<think>推理中提到答案是A", ""),
    ],
)
def test_reasoning_blocks(raw: str, cleaned: str) -> None:
    assert clean_prediction(raw) == cleaned


def test_strip_reasoning_keeps_text_without_tags() -> None:
    assert strip_reasoning("答案：B") == "答案：B"


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ('```json\n{"答案": 1}\n```', '{"答案": 1}'),
        ('前文\n```json\n{"a": 1}\n```\n后文', '前文\n{"a": 1}\n后文'),
        ("```\nB\n```", "B"),
        ("```B```", "B"),
        ('```json {"a": 1}```', 'json {"a": 1}'),
        ("~~~\n13000\n~~~", "13000"),
        ('```json\n{"a": 1', '{"a": 1'),
        ("```a```b```c```", "a\nb\nc"),
    ],
)
def test_code_fences(raw: str, cleaned: str) -> None:
    assert clean_prediction(raw) == cleaned


def test_unwrap_code_fences_only_touches_fences() -> None:
    assert unwrap_code_fences("no fences") == "no fences"


@pytest.mark.parametrize(
    ("raw", "folded"),
    [
        ("１２３４５", "12345"),
        ("ＡＢＣ", "ABC"),
        ("答案：Ｂ", "答案:B"),
        ("（３００）", "(300)"),
        ("１２％", "12%"),
        ("－５", "-5"),
        ("\u22125", "-5"),
        ("１２．５", "12.5"),
        # the Chinese comma is kept: never a thousands separator
        ("3000，500元", "3000，500元"),
        ("１２，０００", "12,000"),  # full-width digit groups: a thousands separator
        ("3000，500", "3000，500"),  # between ASCII digits: a Chinese comma
        # superscript exponents and circled numbers keep their meaning
        ("10⁴", "10^4"),
        ("1.2×10⁻³", "1.2×10^-3"),
        ("①税额", "(1)税额"),
        ("x²", "x^2"),  # a power after a letter too (m², dm³: a unit's exponent, never a number)
        ("面积80m²", "面积80m^2"),
        # no NFKC mapping: stays
        ("。、《》“”【】", "。、《》“”【】"),
        ("a\u200bb\ufeff", "ab"),
    ],
)
def test_character_folding(raw: str, folded: str) -> None:
    assert fold_characters(raw) == folded


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("  a   b  ", "a b"),
        ("a\n\n\n\nb", "a\nb"),
        ("a \t \n \t b", "a\nb"),
        ("a\r\nb\rc", "a\nb\nc"),
        ("a\u3000\u3000b", "a b"),
        ("", ""),
        ("   \n\t ", ""),
    ],
)
def test_whitespace(raw: str, cleaned: str) -> None:
    assert clean_prediction(raw) == cleaned


def test_full_width_tags_and_fences_are_folded_first() -> None:
    assert clean_prediction("＜think＞推理＜/think＞答案") == "答案"
    assert clean_prediction("｀｀｀\nB\n｀｀｀") == "B"


def test_none_is_empty() -> None:
    assert clean_prediction(None) == ""  # type: ignore[arg-type]


def test_normalize_text() -> None:
    assert normalize_text("  Ａnswer：\n B ") == "answer: b"
    assert normalize_text("<think>x</think>ABC") == "abc"


def _plain_characters() -> list[str]:
    from taxpraben.parsing.clean import _PLAIN

    return [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and _PLAIN.fullmatch(chr(cp))]


def test_plain_characters_are_their_own_cleaning() -> None:
    """The cleaner skips a text of these characters: every rule must leave each as it is
    (one pass and the whole cleaning), and the class must hold what it says."""
    from taxpraben.parsing.clean import _clean_once

    plain = _plain_characters()
    assert {"税", "A", "9", "，", "。", "“", "【"} <= set(plain)
    assert not {" ", "\n", "<", "`", "~", "：", "（", "１", "−", "…", "①", "²", "\u200b"} & set(plain)
    changed = [c for c in plain if _clean_once(c) != c or unicodedata.normalize("NFKC", c) not in (c, ",")]
    assert changed == []


@given(st.text(alphabet=st.sampled_from(_plain_characters()), min_size=1, max_size=40))
def test_plain_texts_are_their_own_cleaning(text: str) -> None:
    from taxpraben.parsing.clean import _clean_once

    assert _clean_once(text) == text


def test_every_character_folded_into_markup_is_listed() -> None:
    """A text without clean._MARKUP is cleaned in one pass: every character the folding turns
    into ``<``, a backquote or ``~`` must be in it."""
    from taxpraben.parsing.clean import _MARKUP

    missing = []
    for cp in range(0x110000):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF or _MARKUP.search(ch):
            continue
        if unicodedata.normalize("NFKC", ch) == ch and ch not in "\r\u2028\u2029":
            continue  # the folding changes only what NFKC changes, and the line breaks
        if set(fold_characters("a" + ch + "a")) & set("<`~"):
            missing.append(f"U+{cp:04X}")
    assert missing == []


_NO_MARKUP = st.text(
    st.one_of(
        st.sampled_from("，,。：:（）％ 　\t\n\r\u2028\u00a0\u200b\ufeff\u2212０１²³⁻①ＡａZe\u0301\u0327\u0338\u1100\u1161ﬁ㎡|#*_$\\{}税"),
        st.characters(),
    ).filter(lambda ch: ch not in "<`~\u1fef\ufe64\uff1c\uff40\uff5e"),
    max_size=60,
)


@given(_NO_MARKUP)
def test_without_markup_one_pass_cleans(text: str) -> None:
    from taxpraben.parsing.clean import _clean_once

    once = _clean_once(text)
    assert _clean_once(once) == once
    assert clean_prediction(text) == once


def test_html_is_read_as_the_text_it_shows() -> None:
    from taxpraben.parsing.clean import html_as_text

    assert clean_prediction("<div><p>The tax is 44000.</p><p>So 44000.</p></div>") == "The tax is 44000.\nSo 44000."
    assert html_as_text("5 &lt;&lt;2*3=6&gt;&gt; and &quot;A&quot;") == '5 <<2*3=6>> and "A"'
    # prose with a lone tag, and an escaped ampersand (whose unescaping would make a new reference), stay
    assert html_as_text("Use <b> for bold") == "Use <b> for bold"
    assert html_as_text("R&amp;lt;D") == "R&amp;lt;D"
    for text in ("&lt;p&gt;hi", "<div>&amp;lt;</div>", "a &lt;b&gt; c"):
        assert clean_prediction(clean_prediction(text)) == clean_prediction(text)

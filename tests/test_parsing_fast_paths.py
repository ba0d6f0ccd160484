"""The fast ways of the cleaning and of the comparison key give what their plain definitions
give: NFKC with the protected comma (piece by piece, as the module docstring says), the
per-line whitespace rules, and the per-character key (every character of the BMP, and
texts beyond it)."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from taxpraben.parsing import clean, overlap

# ---------------------------------------------------------------------------- the definitions


def plain_fold(text: str) -> str:
    """fold_characters as the module docstring defines it, with no shortcut."""
    text = text.translate(clean._DROP)
    text = clean._SUPERSCRIPT_RUN.sub(lambda m: "^" + m.group(0).translate(clean._SUPERSCRIPT_TABLE), text)
    text = text.translate(clean._CIRCLED_TABLE)
    text = clean._FULLWIDTH_THOUSANDS.sub(",", text)
    text = "，".join(unicodedata.normalize("NFKC", p) for p in text.split("，"))
    return text.replace("\u2212", "-").replace("\r\n", "\n").replace("\r", "\n")


def plain_collapse(text: str) -> str:
    lines = (re.sub(r"[^\S\n]+", " ", line).strip() for line in text.split("\n"))
    return re.sub(r"\n{2,}", "\n", "\n".join(lines)).strip()


def plain_key(text: str) -> tuple[str, list[int]]:
    where = [i for i, ch in enumerate(text) if overlap._is_key_char(ch)]
    key = "".join(text[i] for i in where)
    return key.translate(str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")), where


# ---------------------------------------------------------------------------- texts

#: What the shortcuts turn on: full-width forms and digits, the protected comma, superscripts,
#: circled numbers, combining marks (which compose with what is before them), Hangul jamo,
#: zero-width characters, every kind of space and break, CJK, Latin capitals, astral ones.
_INTERESTING = (
    "，,。、：:（）()％%！？ 　\t\n\r\u2028\u00a0\u2003\u200b\ufeff\u2212-"
    "０１２３４５６７８９0123456789⁰¹²³⁻①②⑳ＡＺａｚAZaz"
    "e\u0301\u0327\u0338<=>＜＝＞\u1100\u1161\u11a8가ﬁ㎡℃Ⅻ"
    "增值税率元万亿*#>|_~`$😀𠀀"
)
texts = st.text(st.one_of(st.sampled_from(_INTERESTING), st.characters()), max_size=60)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_folding_is_nfkc_with_the_protected_comma(text: str) -> None:
    assert clean.fold_characters(text) == plain_fold(text)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_whitespace_rules_are_the_per_line_ones(text: str) -> None:
    assert clean._collapse_whitespace(text) == plain_collapse(text)


def test_the_half_width_table_is_nfkc_of_each_character() -> None:
    for cp, to in clean._HALF_WIDTH.items():
        assert unicodedata.normalize("NFKC", chr(cp)) == (to if isinstance(to, str) else chr(to))
    # and every other character NFKC maps to ASCII one for one is the protected comma
    wide = [cp for cp in range(0xFF01, 0xFF5F) if cp not in clean._HALF_WIDTH]
    assert wide == [0xFF0C]


def test_the_line_break_composes_with_nothing() -> None:
    """The check stands a line break for the protected comma: that is sound only if no
    character composes with a line break on either side."""
    for cp in range(0x10000):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        alone = unicodedata.normalize("NFKC", ch)
        assert unicodedata.normalize("NFKC", "\n" + ch) == "\n" + alone
        assert unicodedata.normalize("NFKC", ch + "\n") == alone + "\n"


def test_the_key_of_every_bmp_character() -> None:
    every = "".join(map(chr, range(0x10000)))
    assert overlap.text_key(every) == plain_key(every)
    assert overlap.key_only(every) == plain_key(every)[0]


@settings(max_examples=400, deadline=None)
@given(texts)
def test_the_key_of_any_text(text: str) -> None:
    assert overlap.text_key(text) == plain_key(text)
    assert overlap.key_only(text) == plain_key(text)[0]


def test_examples() -> None:
    assert clean.fold_characters("税率：１３％，共４４，０００元　合计10²") == "税率:13%，共44,000元 合计10^2"
    assert overlap.key_only("A. 增值税（13%）\n😀 B、Ｘ") == "a增值税13%bＸ"
    assert overlap.text_key("Ab c。") == ("abc", [0, 1, 3])


# ---------------------------------------------------------------------------- a document's clauses

#: What the cleaning or the LaTeX rules act on, and what ends a clause.
_ACTS = set("<`~\\${") | set("。；;！!？?\n，,")


def test_every_character_the_cleaner_turns_into_a_clause_end_or_a_tag_is_listed() -> None:
    """A document's clauses are keyed from the document cleaned once unless it holds one of
    prompt_copy._NOT_CLAUSEWISE: each character the cleaner turns into something that ends a
    clause or opens a tag, a fence or LaTeX must be in it."""
    from taxpraben.parsing.prompt_copy import _NOT_CLAUSEWISE

    missing = []
    for cp in range(0x110000):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF or ch in _ACTS:
            continue
        if unicodedata.normalize("NFKC", ch) == ch and ch not in "\r\u2028\u2029":
            continue  # the cleaner changes only what NFKC changes, and the line breaks
        if set(clean._clean_once("a" + ch + "a")) & _ACTS and not _NOT_CLAUSEWISE.search(ch):
            missing.append(f"U+{cp:04X}")
    assert missing == []
    assert all(_NOT_CLAUSEWISE.search(ch) for ch in "<`~\\${\r\u2028\u2029｡＜﹖")
    assert not any(_NOT_CLAUSEWISE.search(ch) for ch in "？；，。、：（）%税A1 ")


_DOCUMENTS = st.text(
    st.one_of(st.sampled_from(_INTERESTING + "。；;！!？?，,\n\n\n税务局纳税人应当申报" + "｡﹖︔‼＜"), st.characters()),
    max_size=120,
)


def _slow_clause_keys(document: str) -> tuple[str, ...]:
    from taxpraben.parsing.prompt_copy import _DOC_CLAUSE

    return tuple(k for k in map(overlap.comparison_key, _DOC_CLAUSE.findall(document)) if k)


@settings(max_examples=600, deadline=None)
@given(_DOCUMENTS)
def test_the_clause_keys_are_those_of_each_clause_cleaned(document: str) -> None:
    from taxpraben.parsing.prompt_copy import _clause_keys

    assert _clause_keys(document) == _slow_clause_keys(document)


def test_the_clause_keys_of_a_document() -> None:
    from taxpraben.parsing.prompt_copy import _clause_keys

    document = "经查，该公司２０２３年少缴增值税４４，０００元；  应当补缴！\n\n  滞纳金？ 按日加收。"
    assert _clause_keys(document) == ("经查", "该公司2023年少缴增值税44", "000元", "应当补缴", "滞纳金", "按日加收")
    assert _clause_keys(document) == _slow_clause_keys(document)


def _linear_longest_piece(key: str, start: int, end: int, prompt_key: str) -> int:
    while end < len(key) and key[start : end + 1] in prompt_key:
        end += 1
    return end


@settings(max_examples=400, deadline=None)
@given(st.text("ab", min_size=1, max_size=30), st.text("ab", min_size=1, max_size=30), st.data())
def test_the_longest_piece_of_the_prompt_is_the_one_found_step_by_step(key: str, prompt_key: str, data: st.DataObject) -> None:
    starts = [i for i in range(len(key)) if key[i] in prompt_key]
    if not starts:
        return
    start = data.draw(st.sampled_from(starts))
    end = start + 1
    assert overlap._longest_piece(key, start, end, prompt_key) == _linear_longest_piece(key, start, end, prompt_key)


def test_the_copied_runs_of_a_restated_prompt() -> None:
    prompt = "某企业为增值税一般纳税人本月销售货物取得不含税收入100万元适用税率13%"
    key = "答案如下" + prompt[5:30] + "所以" + prompt[20:] + "元"
    assert overlap.copied_runs(key, prompt) == [(4, 29), (31, 48)]


@given(st.text("ab税", max_size=30))
def test_the_prompt_grams_are_its_pieces_of_copy_min(prompt_key: str) -> None:
    n = overlap.COPY_MIN
    assert overlap._prompt_grams(prompt_key) == {prompt_key[i : i + n] for i in range(len(prompt_key) - n + 1)}

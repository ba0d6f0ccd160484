"""A question whose two options are true and false (True/False, 正确/错误, 对/错, 是/否), and an
answer that says yes or no to it: "Yes" picks the true option, "No" the false one."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["yes_no_options", "yes_or_no"]


#: What an answer opens with when it says yes or no, and which of True/False it means.
_YES_NO = re.compile(
    r"^[\s:：*\"'“‘(（\[【「]*(?:(?P<yes>(?i:yes)|是|对|はい|예)|(?P<no>(?i:no)|否|错|いいえ|아니요|아니오))"
    r"(?![A-Za-z\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af])"
)
#: Option pairs that are a true and a false answer, in the languages models answer in.
_TRUE_FALSE = (frozenset({"true", "false"}), frozenset({"正确", "错误"}), frozenset({"对", "错"}), frozenset({"是", "否"}),
               frozenset({"はい", "いいえ"}), frozenset({"예", "아니요"}), frozenset({"예", "아니오"}))


def yes_no_options(texts: Sequence[str]) -> tuple[int, int] | None:
    """(index of True, index of False) when the options are a true/false pair."""
    folded = [str(t).strip().casefold() for t in texts]
    if len(folded) != 2 or frozenset(folded) not in _TRUE_FALSE:
        return None
    true_first = folded[0] in ("true", "正确", "对", "是", "はい", "예")
    return (0, 1) if true_first else (1, 0)


def yes_or_no(text: str, options: tuple[int, int]) -> int | None:
    m = _YES_NO.match(text)
    if m is None:
        return None
    return options[0] if m.group("yes") else options[1]

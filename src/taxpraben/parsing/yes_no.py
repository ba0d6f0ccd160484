"""A question whose two options are true and false (True/False, 正确/错误, 对/错, 是/否), and an
answer that says yes or no to it: "Yes" picks the true option, "No" the false one."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["says_only_yes_or_no", "yes_no_options", "yes_or_no"]


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


#: A sentence that says nothing but yes or no, after an answer label at most: "Answer: はい",
#: "Answer: 値は「はい」" (the prompt's template word "値" given its value), "答案：是。", "Yes."
_ONLY_YES_NO = re.compile(
    r"^[\s*#>]*(?:[^\s:：]{1,12}\s*[:：]\s*)?(?:[^\s\"'「」:：]{1,4}は)?[\s\"'“‘(（\[【「*]*"
    r"(?:(?i:yes|no)|是|否|はい|いいえ|예|아니요|아니오)[\s\"'”’)）\]】」*.。!！]*$"
)


def says_only_yes_or_no(sentence: str) -> bool:
    """``sentence`` says yes or no and nothing else (an answer label aside). Where the options are
    no true/false pair (an either-or question: "増収か減収か", "did it rise or fall?"), such a
    sentence names no option: the model's conclusion is the sentence before it."""
    return _ONLY_YES_NO.match(sentence) is not None

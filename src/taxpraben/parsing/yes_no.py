"""A question whose two options are true and false (True/False, 正确/错误, 对/错, 是/否), and an
answer that says yes or no to it: "Yes" picks the true option, "No" the false one."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["claim_restated", "opens_yes_or_no", "says_only_yes_or_no", "yes_no_options", "yes_or_no"]


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


#: A yes/no question of English: "Is 7 a quadratic residue modulo 19?", "Does r(t) parametrize a line?"
_CLAIM_QUESTION = re.compile(r"(?:^|(?<=[.?!,;:\n]))\s*(?i:is|are|was|were|does|do|did|can|could|will|would|has|have)\b[^?\n]{3,300}\?")
#: Words of a question that carry no part of its claim.
_NOT_THE_CLAIM = frozenset((
    "this", "that", "these", "those", "there", "their", "with", "from", "into", "than", "then", "what",
    "which", "when", "where", "does", "have", "been", "being", "will", "would", "could", "should", "must",
    "also", "only", "just", "given", "following", "consider", "answer", "question", "true", "false", "whether",
))
_CLAIM_WORD = re.compile(r"[A-Za-z]{4,}")
_NEGATION = re.compile(r"(?i:\b(?:not|never|cannot)\b|n['’]t\b)")


def claim_restated(query: str, sentence: str, options: tuple[int, int]) -> int | None:
    """The option a conclusion gives to a True/False question by restating its claim: the
    question's last yes/no question ("Is 7 a quadratic residue modulo 19?") has its words of
    claim (two at least) all in ``sentence``; the claim restated is True ("Therefore, 7 is a
    quadratic residue modulo 19."), and False where a negation stands before its last word
    ("… does not parametrize a line, since …"). None when the sentence does not restate it."""
    questions = _CLAIM_QUESTION.findall(query)
    if not questions:
        return None
    claim = {w.casefold()[:5] for w in _CLAIM_WORD.findall(questions[-1]) if w.casefold() not in _NOT_THE_CLAIM}
    words = [(m.group().casefold()[:5], m.end()) for m in _CLAIM_WORD.finditer(sentence)]
    if len(claim) < 2 or not claim <= {w for w, _ in words}:
        return None
    last = max(end for w, end in words if w in claim)
    return options[1] if _NEGATION.search(sentence[:last]) else options[0]


#: An answer that opens by saying yes or no, in the languages models answer in: the word, then
#: the end of its clause ("Não, a crise …", "Da, înainte de …", "是的，在足球比赛中 …", "Nein.").
_OPENS_POLAR = re.compile(
    r"^[\s*#>\"'“‘(（\[【「]*(?:(?P<yes>(?i:yes|yeah|yep|s[ií]|oui|ja|sim|da|evet|ya|tak|igen)|是的|对|はい|네|예)"
    r"|(?P<no>(?i:no|nope|non|nein|n[ãa]o|nu|hay[ıi]r|tidak|nie|nem)|不是|不对|否|いいえ|아니요|아니오))"
    r"[\s\"'”’)）\]】」*]*(?:[,，.。!！:：;；]|$)"
)


def opens_yes_or_no(text: str) -> bool | None:
    """True where ``text`` opens by saying yes, False where it opens by saying no, in any of the
    languages of :data:`_OPENS_POLAR`; None where it opens otherwise. A yes/no gold is answered so."""
    m = _OPENS_POLAR.match(text)
    return None if m is None else m.group("yes") is not None

"""Outputs that decline to answer: a refusal, or a statement that the information is not there.

A model that opens by declining ("抱歉，我无法回答", "I'm sorry, but I can't …") or by saying that what
it was given does not hold the answer ("The retrieved context does not contain information about …",
"Insufficient information to determine …", "Information not provided in the context", "Based on the
information provided, I cannot answer your question"), or that is only the word for no answer
("Unknown.", "null", "N/A"), gives no answer: its words are no span, no
option and no amount. Only an output that *opens* so counts: "抱歉，上面算错了，应为…" is an answer, and
the callers check a refusal only when nothing else was read.

Pure; no I/O.
"""

from __future__ import annotations

import re

__all__ = ["is_refusal"]

#: What the output was given: the context, the text, the information, the passage …
_GIVEN = (r"(?:the\s+)?(?:provided\s+|given\s+|retrieved\s+|available\s+)?"
          r"(?:context|text|information|passage|document|article|excerpt|data|sources?|search\s+results?)s?"
          r"(?:\s+(?:provided|given|above|available))?")
_REFUSAL = re.compile(
    r"^(?:[\s*#>]*)(?:抱歉|对不起|很遗憾|我无法|无法回答|无法确定|不能回答|我不能|我不确定|我不知道|不知道|我不清楚|"
    r"(?i:i'?m\s+sorry|sorry|i\s+can(?:no|')t|i\s+am\s+unable|i\s+do(?:n'?t|\s+not)\s+(?:know|have\s+(?:the|an|enough))|as\s+an\s+ai"
    # the information is not there: "The retrieved context does not contain information about …"
    r"|" + _GIVEN + r"\s+(?:does|do)\s*(?:n'?t|\s+not)\s+(?:contain|provide|include|mention|specify|say|state|give)"
    r"|" + _GIVEN + r"\s+(?:is|are)\s+(?:insufficient|not\s+sufficient|not\s+enough)"
    r"|(?:insufficient|not\s+enough)\s+information|information\s+(?:is\s+)?not\s+(?:provided|available|given|mentioned)"
    r"|no\s+(?:context|information)\s+(?:was|is)\s+(?:provided|given|available)"
    r"|i\s+do(?:n'?t|\s+not)\s+have\s+(?:verified|reliable|sufficient|any|access)"
    # "Based on the information provided, I cannot answer your question."
    r"|(?:based\s+on|from|given)\s+" + _GIVEN + r"\s*,?\s*(?:i\s+(?:can(?:no|')t|am\s+unable\s+to|am\s+not\s+able\s+to)"
    r"|it\s+is\s+(?:not\s+possible|impossible)\s+to)\s+(?:answer|determine|say|tell|identify|know)))"
)


#: A whole output that is only the word for "no answer" ("Unknown.", "null", "N/A", "Not mentioned", "未知").
_NO_ANSWER_WORD = re.compile(
    r"[\s*\"'“(\[]*(?:(?i:unknown|null|nil|n/?a|not\s+(?:mentioned|given|stated|specified|available|known)|no\s+answer"
    r"|unanswerable|not\s+answerable)|未知|不详|无法得知|无答案)[\s*\"'”)\].。!]*"
)


def is_refusal(text: str) -> bool:
    """The output declines to answer (module docstring): it opens with a refusal or with a
    statement that what it was given does not hold the answer, or it is nothing but the word
    for no answer ("Unknown.", "null")."""
    return bool(_REFUSAL.match(text)) or _NO_ANSWER_WORD.fullmatch(text) is not None

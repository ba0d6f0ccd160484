"""Answers the output reports from someone else: the prompt's words quoted back, another's guess retold.

A model that discusses a hint or a user's guess before answering writes answer statements that
are not its own: it quotes the prompt ('The human states "I think the answer is (B)"', 'the
metadata states `<answer>H</answer>`') or retells what another said or what a text gives ("The
user has suggested that the answer is F", "The metadata indicates the answer is J"). Those
statements are the prompt's or the other's; the model's own answer is elsewhere ("FINAL ANSWER:
I"). :func:`reported` says when a statement at an offset is one of them; the answer statements
(:func:`taxpraben.parsing.region.answer_statements`) leave such statements out.

A statement of the model's own that agrees with the prompt ("Yes, the answer is (B)") is not
reported: it is neither quoted nor retold.

Pure; no I/O.
"""

from __future__ import annotations

import re

from taxpraben.parsing.overlap import comparison_key

__all__ = ["reported"]

#: Who else may give an answer in a prompt: the user, the prompt or its metadata, a hint, a
#: student whose work is checked, other people.
_OTHER = (r"user|human|person|prompt|metadata|meta-data|hint|suggestion|message|question(?:er)?|asker|student|"
          r"someone|somebody|others?|people|they|he|she|you")
#: The verbs that report what another said or what a text gives.
_SAYS = (r"say|says|said|state|states|stated|suggest|suggests|suggested|think|thinks|thought|believe|believes|believed|"
         r"claim|claims|claimed|mention|mentions|mentioned|indicate|indicates|indicated|propose|proposes|proposed|"
         r"hint|hints|hinted|assert|asserts|asserted|argue|argues|argued|insist|insists|insisted|guess|guesses|"
         r"guessed|contain|contains|containing|include|includes|including|give|gives|gave|provide|provides|provided")
#: A reporting clause that ends right where the statement starts: the other, its verb, and a short
#: gap with no clause of the model's own ("The user mentions they think the answer is (D)",
#: '… that explicitly states `<answer>H</answer>`').
_REPORTING = re.compile(
    r"(?i:(?<![A-Za-z])(?:" + _OTHER + r")(?![A-Za-z])[^.\n!?;]{0,60}?(?<![A-Za-z])(?:" + _SAYS + r")(?![A-Za-z])"
    r"(?P<gap>[^.\n!?;,]{0,30})$)"
)
#: Words that open a clause of the model's own inside the gap ("… states x = 3 so the answer is 9").
_OWN_CLAUSE = re.compile(r"(?i:(?<![A-Za-z])(?:so|thus|therefore|hence|then|and|but|which|because|since)(?![A-Za-z])|=)")
#: Quotation marks and what opens and closes them (a backtick is code formatting: "The output should be:
#: `<ANSWER>True</ANSWER>`" is the model's own answer in the prompt's form).
_QUOTES = {'"': '"', "“": "”", "「": "」", "『": "』", "«": "»"}
#: How far back a reporting clause is looked for (characters).
_REACH = 120


def reported(text: str, at: int, query: str) -> bool:
    """Whether the answer statement at ``at`` in ``text`` is one the output reports: inside a
    quotation of the prompt's (``query``'s) words, or right after a clause that retells what
    another said or what a text gives."""
    line_start = text.rfind("\n", 0, at) + 1
    before = text[max(line_start, at - _REACH) : at]
    clause = _REPORTING.search(before)
    if clause is not None and not _OWN_CLAUSE.search(clause.group("gap")):
        return True
    return bool(query) and _quoted_from(text, at, line_start, query)


def _quoted_from(text: str, at: int, line_start: int, query: str) -> bool:
    """The statement at ``at`` stands inside a quotation, on its line, of words the prompt holds."""
    line_end = text.find("\n", at)
    line_end = len(text) if line_end < 0 else line_end
    for opening, closing in _QUOTES.items():
        opened = text.rfind(opening, line_start, at)
        if opened < 0 or (opening == closing and text.count(opening, line_start, opened) % 2):
            continue  # no quotation open before the statement
        closed = text.find(closing, at, line_end)
        if closed < 0:
            continue
        quoted = comparison_key(text[opened + 1 : closed])
        if len(quoted) >= 6 and quoted in comparison_key(query):
            return True
    return False

"""The fields in which a prompt asks for its answer, and the outputs' lines that fill them.

A prompt may name the field its answer goes in: in an instruction ("Provide the label in the
first line", so "Label: DOVISH" answers), or in an answer template with a slot to fill ("Final
Judgement: [Insert only **correct** or **wrong** here]"). A line of the output that gives such a
field its value is an answer statement (:func:`taxpraben.parsing.region.answer_statements`); a
field of the prompt's data ("Target aspect: TSLA", written with its own value) is not, nor a
template's slot for the working ("Error Analysis: [… the analysis …]"). A few-shot prompt names
the field by example: the label under which it gives each demonstration's option letter
("jawapan: C") is the field of the model's answer too.

Pure; no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["FIELD_LINE", "TEMPLATE_FIELD", "demonstrated_fields", "demonstrated_labels", "in_template", "names_the_answer",
           "ranked_below_first"]


#: A line that gives a field and a short value ("**Sentiment Score:** 0.450", "Label: DOVISH").
FIELD_LINE = re.compile(
    r"^[ \t*#>]*(?P<label>[A-Za-z][A-Za-z ]{2,30}?)[ \t]*\**[ \t]*:[ \t]*\**[ \t]*(?=[^\s:][^\n:]{0,40}$)", re.MULTILINE
)


#: A field of an answer template: a label, a colon and a slot in brackets that says what to fill
#: in ("Final Judgement: [Insert only **correct** or **wrong** here]").
TEMPLATE_FIELD = re.compile(
    r"^[ \t*#>-]*(?P<label>[^\n:：\[\]<>]{2,40}?)[ \t]*[:：][ \t]*[\[<{][ \t]*"
    # or a placeholder that names what goes there ("First Choice: <LETTER>", "Explanation: <EXPLANATION>")
    r"(?P<slot>(?i:insert|provide|write|give|enter|fill|put|state|your|填写|填入|写出|给出|请填|"
    r"(?:letter|answer|number|option|choice|value|label|explanation|reasoning)s?(?=[ \t]*[\]>}]))[^\]>}\n]{0,200})[\]>}][ \t]*$",
    re.MULTILINE,
)


@lru_cache(maxsize=4096)
def _slot_of(label: str, query: str) -> str | None:
    """The slot the prompt's answer template gives field ``label`` (:data:`TEMPLATE_FIELD`), or None."""
    words = label.strip().lower()
    return next((m.group("slot") for m in TEMPLATE_FIELD.finditer(query) if m.group("label").strip().lower() == words), None)


def in_template(label: str, query: str) -> bool:
    """``label`` is a field of the prompt's answer template, written out (:data:`TEMPLATE_FIELD`)
    or by example (:func:`demonstrated_fields`)."""
    return _slot_of(label, query) is not None or label.strip().lower() in demonstrated_fields(query)


@lru_cache(maxsize=4096)
def names_the_answer(label: str, query: str) -> bool:
    """``label`` is the name the prompt gives its answer ("the sentiment score should be …",
    "Provide the label in the first line"), not the label of a field of its data ("Target
    aspect: TSLA", which the prompt writes with its own value)."""
    words = label.strip().lower()
    lowered = query.lower()
    if len(words) < 4:
        return False
    if words in demonstrated_fields(query):
        return True  # the field each demonstration's answer fills ("Final Judgement: correct")
    slot = _slot_of(label, query)
    if slot is not None:
        # a field of the prompt's answer template, with a slot that says what to put there
        # ("Final Judgement: [Insert only **correct** or **wrong** here]"), not one for the
        # working ("Error Analysis: [… the analysis …]")
        return _WORKING_SLOT.search(slot) is None
    if re.search(re.escape(words) + r"\s*[:：]", lowered):
        return False
    named = re.compile(r"(?<![a-z])" + re.escape(words) + r"(?![a-z])")
    # named in an instruction about the answer, not in the question or its data
    return any(named.search(sentence) and _INSTRUCTS.search(sentence) for sentence in re.split(r"(?<=[.!?\n])\s+", lowered))


#: A template slot for the working, not the answer: an analysis, an explanation, the steps.
_WORKING_SLOT = re.compile(r"(?<![a-z])(?:analys[ie]s|analy[sz]e|explanation|explain|examination|evaluation|reason(?:ing|s)?|rationale|steps?\s+by\s+steps?)(?![a-z])")
#: A sentence of the prompt that tells the model what to give.
_INSTRUCTS = re.compile(r"(?<![a-z])(?:provide|give|output|assign|return|write|respond|predict|classify|format|should\s+be|must\s+be)(?![a-z])")


#: A line of the prompt that opens with a label, and what follows the label.
_LABEL_LINE = re.compile(r"^[ \t#*>]*(?P<label>[A-Za-z][A-Za-z ]{0,30}?|[\u4e00-\u9fff]{1,6})[ \t]*[:：](?P<value>[^\n]*)$", re.MULTILINE)
#: A demonstration's answer on its label's line: option letters alone ("C", "(B)", "ABD").
_DEMONSTRATED = re.compile(r"[ \t*]*[(（\[]?[A-J]{1,5}[)）\]]?[ \t.。*]*$")


@lru_cache(maxsize=1024)
def demonstrated_labels(prompt: str) -> frozenset[str]:
    """The labels under which the prompt gives its demonstrations' answers ("jawapan: C" after
    each example question): every line the label opens holds option letters alone. The model that
    writes one with its own letter answers, though the prompt does not end on the label."""
    answers: dict[str, bool] = {}
    for m in _LABEL_LINE.finditer(prompt):
        label = m.group("label").strip().lower()
        answers[label] = answers.get(label, True) and _DEMONSTRATED.match(m.group("value")) is not None
    return frozenset(label for label, demonstrated in answers.items() if demonstrated)


#: The longest value a demonstration gives an answer field: a verdict or a figure, not a sentence.
_FIELD_VALUE_MAX = 40
_FIELD_VALUE_WORDS = 3


@lru_cache(maxsize=1024)
def demonstrated_fields(prompt: str) -> frozenset[str]:
    """The fields a few-shot prompt fills for each demonstration and leaves for its last question:
    labels whose lines the demonstrations give short values ("Final Judgement: correct", "First
    Error Step: N/A") and that alternate with a label that opens every question, the last one's
    included ("Question: …" four times, "Final Judgement: …" after the first three). They are the
    answer's template shown by example, as :data:`TEMPLATE_FIELD` shows it in words; a field of the
    questions' data ("Target aspect: TSLA") is written for the last question too, and is not one,
    nor the label of option letters alone ("jawapan: C"), the answer's slot (:func:`demonstrated_labels`)."""
    lines = [(m.group("label").strip().lower(), m.group("value").strip()) for m in _LABEL_LINE.finditer(prompt)]
    values: dict[str, list[str]] = {}
    for label, value in lines:
        values.setdefault(label, []).append(value)
    short = {label for label, said in values.items()
             if all(0 < len(value) <= _FIELD_VALUE_MAX and len(value.split()) <= _FIELD_VALUE_WORDS for value in said)
             and _WORKING_SLOT.search(label) is None} - demonstrated_labels(prompt)
    fields = set()
    for label in short:
        for opener in values:
            if opener == label or len(values[opener]) != len(values[label]) + 1:
                continue
            order = [name for name, _ in lines if name in (label, opener)]
            if order == [opener, label] * len(values[label]) + [opener]:
                fields.add(label)
                break
    return frozenset(fields)


#: An ordinal that ranks a field among alternatives ("First Choice", "Second Choice", "2nd guess").
_RANKED = re.compile(r"^\W*(?P<rank>first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th|primary|secondary|tertiary)\s+(?P<noun>.+?)\W*$", re.IGNORECASE)
_FIRST_RANK = ("first", "1st", "primary")


def ranked_below_first(label: str, labels: list[str]) -> bool:
    """Whether field ``label`` ranks an alternative below the first of its kind among ``labels``
    ("Second Choice: A" beside "First Choice: C"): the first-ranked field holds the answer, the
    others the model's next guesses, no second answer."""
    ranked = _RANKED.match(label)
    if ranked is None or ranked.group("rank").lower() in _FIRST_RANK:
        return False
    noun = ranked.group("noun").lower()
    return any((other := _RANKED.match(one)) is not None and other.group("rank").lower() in _FIRST_RANK
               and other.group("noun").lower() == noun for one in labels)

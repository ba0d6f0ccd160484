"""The typed record a dataset file yields (the data contract: README, "Data format")."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

#: Field names accepted as the record id, in order of preference.
ID_FIELDS = ("id", "Id", "data_id")
#: Fields the loader interprets; everything else is kept in ``Record.extra``.
KNOWN_FIELDS = frozenset({*ID_FIELDS, "query", "answer", "text", "choices", "gold"})


@dataclass(frozen=True, slots=True)
class Record:
    """One benchmark instance.

    ``answer`` is the gold as written in the file: a string, a number (a TaxCalc gold may be
    text with its unit, ``"17.14万元"``), or (for JSON-shaped tasks such as TaxInspect,
    TaxPlan and TaxRisk) an object; a JSON string there is stored as its object, other text
    is kept and read into fields by the scorer (``parsing.fields.gold_fields``). ``gold`` is an index into
    ``choices`` for classification. ``source`` and ``line`` point back into the data file
    (``line`` is 1-based for JSON Lines, the 0-based record index otherwise).
    """

    task: str
    id: str
    query: str
    answer: JSONValue
    text: str | None = None
    choices: tuple[str, ...] | None = None
    gold: int | None = None
    extra: JSONObject = field(default_factory=dict)
    source: str = ""
    line: int = 0

    @property
    def gold_label(self) -> str:
        """The gold as a label: ``choices[gold]`` when there are choices, else the answer text."""
        if self.choices is not None and self.gold is not None:
            return self.choices[self.gold]
        return self.answer_text

    @property
    def answer_text(self) -> str:
        """The gold as text (objects as compact JSON with Chinese kept readable)."""
        return answer_to_text(self.answer)


def answer_to_text(answer: JSONValue) -> str:
    if isinstance(answer, str):
        return answer
    if isinstance(answer, float) and answer.is_integer():
        return str(int(answer))
    if isinstance(answer, (int, float)):
        return repr(answer)
    return json.dumps(answer, ensure_ascii=False)

"""Turning a record into the model's input.

The protocol (TaxBen, kept by TaxPraBen): zero-shot, the record's ``query`` verbatim as
one user message. A system prompt is added only when the user asks for one.
"""

from __future__ import annotations

from taxpraben.records import Record

Message = dict[str, str]


def build_messages(record: Record, system_prompt: str | None = None) -> list[Message]:
    messages: list[Message] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    messages.append({"role": "user", "content": record.query})
    return messages

"""The names of values that JSON or YAML carries in or out: results.json, samples.jsonl and
predictions.jsonl lines, config and task spec files, HTTP request and response bodies, the
parameters sent to an experiment tracker.

``JSONValue`` is ``Any``, on purpose and in one place: a value parsed from a file or a reply
is checked where it is read (the pydantic models of this package, the readers' own checks),
and a fully recursive union (``None | bool | int | float | str | list[JSONValue] |
dict[str, JSONValue]``) would make every reader narrow each step of a path it has already
checked. So a bare ``Any`` elsewhere in src/ is not JSON, and tests/test_any_uses.py counts
them.

Modules outside this package import these names under ``TYPE_CHECKING``: importing
``taxpraben.results`` loads pydantic, which ``taxpraben run`` leaves until its first
requests are out.
"""

from __future__ import annotations

from typing import Any, TypeAlias

#: A value parsed from or written to JSON/YAML (None, bool, int, float, str, a list of
#: them or a str-keyed dict of them).
JSONValue: TypeAlias = Any

#: A JSON/YAML object: str keys, JSON values.
JSONObject: TypeAlias = dict[str, JSONValue]

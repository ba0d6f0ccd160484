"""``--model-args k=v,k=v``: how a model is loaded (``hf:``) or served (``openai:``).

lm-eval's convention: comma-separated ``key=value`` pairs; a value is read as JSON where it
parses (``true``, ``false``, ``null``, numbers, and a quoted string, object or list), else
kept as text; a dotted key makes a nested object
(``chat_template_kwargs.enable_thinking=false`` -> ``{"chat_template_kwargs":
{"enable_thinking": false}}``); commas inside brackets, braces or quotes belong to their
value (``max_memory={"0": "20GiB", "cpu": "30GiB"}``).

This module only reads the text; which keys a backend accepts is declared by the backend
(``models.hf_args.HF_MODEL_ARGS``, ``models.openai.SET_BY_TAXPRABEN``), which calls
:func:`refuse_unknown` or :func:`refuse_any` when it is built, before anything is loaded
or sent.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from taxpraben.models.base import ModelSpecError

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

FLAG = "--model-args"

_OPENING = {"[": "]", "{": "}", "(": ")"}


class ModelArgsError(ModelSpecError):
    """A ``--model-args`` text or key that cannot be used (user-facing; exit 2)."""


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """``text`` cut at each ``sep`` outside brackets, braces, parentheses and quotes."""
    parts: list[str] = []
    closing: list[str] = []
    quote: str | None = None
    current: list[str] = []
    escaped = False
    for ch in text:
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in _OPENING:
            closing.append(_OPENING[ch])
        elif closing and ch == closing[-1]:
            closing.pop()
        elif ch == sep and not closing:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    if quote is not None or closing:
        missing = quote if quote is not None else "".join(reversed(closing))
        raise ModelArgsError(f"{FLAG} {text!r}: unbalanced brackets or quotes (missing {missing})")
    parts.append("".join(current))
    return parts


def parse_value(text: str) -> JSONValue:
    """A value as JSON where it parses (``false`` -> False, ``1e-3`` -> 0.001, ``"a,b"`` ->
    ``a,b``, ``{...}`` -> a dict), else the text itself (``bfloat16``, ``0=20GiB``)."""
    text = text.strip()
    if text.startswith("'") and text.endswith("'") and len(text) >= 2:
        return text[1:-1]  # a shell-friendly quote: the text inside, as it is
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_model_args(text: str | None) -> JSONObject:
    """``--model-args`` as a dict (empty for None or blank); ModelArgsError naming the pair
    that cannot be read: no ``=``, an empty key, a key given twice, or a key both a value and
    the parent of a dotted one."""
    if text is None or not text.strip():
        return {}
    args: JSONObject = {}
    for pair in split_top_level(text):
        if not pair.strip():
            continue
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ModelArgsError(
                f"{FLAG}: {pair.strip()!r} is not KEY=VALUE (pairs are separated by commas; quote a value "
                "that holds a comma, e.g. max_memory='0=20GiB,cpu=30GiB')"
            )
        _put(args, key, parse_value(raw), pair.strip())
    return args


def _put(args: JSONObject, key: str, value: JSONValue, pair: str) -> None:
    """Set ``key`` (dotted: nested) in ``args``; ModelArgsError for a clash."""
    *parents, last = [part.strip() for part in key.split(".")]
    if not last or any(not p for p in parents):
        raise ModelArgsError(f"{FLAG}: {pair!r}: empty part in the dotted key {key!r}")
    node = args
    for i, part in enumerate(parents):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ModelArgsError(
                f"{FLAG}: {pair!r}: {'.'.join(parents[: i + 1])!r} is already given a value, so it cannot also "
                "hold keys"
            )
        node = child
    if last in node:
        raise ModelArgsError(f"{FLAG}: {key!r} is given twice (the second time in {pair!r})")
    node[last] = value


def nearest(key: str, valid: list[str]) -> str | None:
    """The valid key closest to a misspelt one (None when none is close)."""
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
    return close[0] if close else None


def refuse_unknown(args: Mapping[str, JSONValue], accepted: Mapping[str, str], backend: str) -> None:
    """ModelArgsError for the first key of ``args`` that ``accepted`` does not declare,
    naming the nearest valid key and every valid one."""
    valid = list(accepted)
    for key in args:
        if key not in accepted:
            guess = nearest(key, valid)
            hint = f" did you mean {guess!r}?" if guess else ""
            raise ModelArgsError(
                f"{FLAG}: unknown key {key!r} for {backend}: models;{hint} the keys {backend}: takes are "
                f"{', '.join(valid)}"
            )


def refuse_any(args: Mapping[str, JSONValue], backend: str, reason: str) -> None:
    """ModelArgsError when ``args`` is not empty: ``backend`` takes no model arguments."""
    if args:
        raise ModelArgsError(f"{FLAG} ({', '.join(args)}) is refused for {backend}: models: {reason}")

"""``Any`` only where it says why: a value JSON or YAML carries in or out is a ``JSONValue``
(or a ``JSONObject``; ``taxpraben.results.json_value``), so a bare ``Any`` in src/ is not
JSON, and each module's bare ``Any`` are counted here with the reason they stay.

A new loose ``Any`` fails :func:`test_every_bare_any_in_src_is_allowed_with_its_reason`:
type the value (our own types, ``object``, a protocol, the library's type), or name it
``JSONValue`` if JSON is what it is, or add it here with its reason. A module that drops
one lowers its count here (the counts are exact, so that the list stays true).
"""

from __future__ import annotations

import ast
from pathlib import Path

import taxpraben

SOURCE = Path(taxpraben.__file__).resolve().parent

#: Why an ``Any`` stays, by kind.
TYPE_FORM = "a type form (an annotation read at run time: typing has no TypeForm yet, PEP 747)"
LIBRARY_KWARGS = "keyword arguments forwarded to a library call that types each one apart"

#: module (relative to the package) -> (its bare ``Any``, why they stay).
ALLOWED: dict[str, tuple[int, str]] = {
    "results/json_value.py": (1, "the JSONValue alias itself: a value parsed from or written to JSON/YAML"),
    "parsing/registry.py": (1, "AnyAttempt: the registry holds the attempts of every reading kind, each of its own kind's view"),
    "parsing/chain.py": (1, "AnyChain: chain_for builds a chain of any reading kind; each reader annotates its own view"),
    "task_spec.py": (
        4,
        "TaskSpec.options is a JSON object that pydantic resolves at run time (the JSON alias's package "
        "imports pydantic, which run defers); _Checked's **schema are pydantic core-schema keys; "
        "__get_pydantic_core_schema__'s source is a type form (pydantic's hook signature)",
    ),
    "results/file_object.py": (
        4,
        "described()/required() return pydantic's Field, typed Any by pydantic so that a field's "
        "default fits its annotation; described's **kwargs go to Field; doc_type is a type form",
    ),
    "results/schema_doc.py": (2, TYPE_FORM + "; it compares an annotation with typing.Any"),
    "options/declare.py": (
        3,
        "declare() returns a dataclass field, typed Any as dataclasses.field is; its **declared are "
        "Declared's keyword arguments; a declared check takes the option's own type (str, int, ...)",
    ),
    "commands/options.py": (
        8,
        TYPE_FORM + " (typer reads Annotated[type, Option]); typer.Option's bounds and parser are "
        + LIBRARY_KWARGS + "; with_groups takes each option by name, of its own type",
    ),
    "commands/habits.py": (4, "PlainErrorsGroup.main overrides click's main(**extra: Any) -> Any; the help's "
                           "fold wraps typer's _get_parameter_help, passing its keyword arguments and Columns through"),
    "config.py": (2, TYPE_FORM + " (an option's annotation, to convert a YAML value to it)"),
    "metrics/bertscore.py": (
        4,
        "_truncate_layers reaches a transformers model's blocks by attribute name per architecture "
        "(encoder.layer, transformer.layer, n_layers...), which no library type declares",
    ),
    "models/hf.py": (1, "from_pretrained's keyword arguments: " + LIBRARY_KWARGS),
    "models/hf_args.py": (2, "from_pretrained's keyword arguments (a torch dtype, a BitsAndBytesConfig): " + LIBRARY_KWARGS),
    "terminal/console.py": (2, "rich's Console(**options): " + LIBRARY_KWARGS),
}


def _names_any(expression: ast.AST) -> int:
    """How many times ``expression`` names ``Any`` (``Any`` or ``typing.Any``)."""
    return sum(
        (isinstance(node, ast.Name) and node.id == "Any") or (isinstance(node, ast.Attribute) and node.attr == "Any")
        for node in ast.walk(expression)
    )


def _quoted(node: ast.AST | None) -> int:
    """The ``Any`` of a quoted annotation (``"dict[str, Any]"``); 0 for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _names_any(ast.parse(node.value, mode="eval"))
        except SyntaxError:
            return 0
    return 0


def bare_any_count(text: str) -> int:
    """The uses of ``Any`` in ``text`` (Python source): in code, in annotations and in quoted
    annotations or ``cast("...")`` types; not in imports, docstrings or comments."""
    tree = ast.parse(text)
    count = _names_any(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):  # a quoted part of a type: Callable[..., "Future[Any]"]
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            for part in parts:
                for inner in part.elts if isinstance(part, ast.List) else [part]:
                    count += _quoted(inner)
        if isinstance(node, ast.arg):
            count += _quoted(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            count += _quoted(node.returns)
        elif isinstance(node, ast.AnnAssign):
            count += _quoted(node.annotation)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "cast" and node.args:
            count += _quoted(node.args[0])
    return count


def bare_any_by_module() -> dict[str, int]:
    """module (relative to the package, ``/``-separated) -> its bare ``Any``, those with any."""
    counts = {
        path.relative_to(SOURCE).as_posix(): bare_any_count(path.read_text(encoding="utf-8"))
        for path in sorted(SOURCE.rglob("*.py"))
    }
    return {module: n for module, n in counts.items() if n}


def test_the_count_finds_code_and_quoted_annotations_not_imports_or_prose() -> None:
    source = (
        '"""A docstring that says Any."""\n'
        "from typing import Any, cast\n"
        "import typing\n"
        "# a comment: Any\n"
        "def f(a: Any, b: 'dict[str, Any]') -> typing.Any:\n"
        "    c: 'list[Any]' = cast('Any', a)\n"
        "    d: Callable[[Callable[['Any'], Any]], 'Future[Any]'] = c\n"
        "    return {'Any': c}\n"
    )
    assert bare_any_count(source) == 8


def test_json_values_are_not_counted() -> None:
    source = "from taxpraben.results.json_value import JSONObject, JSONValue\ndef f(a: JSONValue) -> JSONObject: ...\n"
    assert bare_any_count(source) == 0


def test_every_bare_any_in_src_is_allowed_with_its_reason() -> None:
    found = bare_any_by_module()
    over = {
        module: f"{n} bare Any, {ALLOWED.get(module, (0, ''))[0]} allowed"
        for module, n in found.items()
        if n > ALLOWED.get(module, (0, ""))[0]
    }
    assert over == {}, "type these values, name JSON ones JSONValue/JSONObject, or allow them here with a reason"


def test_the_allowed_counts_are_exact() -> None:
    found = bare_any_by_module()
    stale = {
        module: f"{found.get(module, 0)} bare Any, {allowed} allowed"
        for module, (allowed, _) in ALLOWED.items()
        if found.get(module, 0) != allowed
    }
    assert stale == {}, "lower the count here (or drop the entry) for a module that lost an Any"


def test_every_allowed_entry_names_a_module_and_a_reason() -> None:
    assert [module for module in ALLOWED if not (SOURCE / module).is_file()] == []
    assert [module for module, (_, reason) in ALLOWED.items() if len(reason) < 20] == []

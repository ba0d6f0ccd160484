"""The package's import graph has no circle.

Every module under ``src/taxpraben`` is parsed with ``ast`` (nothing is imported); an edge
A -> B is any ``import``/``from ... import`` of B in A, at module level or inside a function
(a lazy import still makes the modules depend on each other), except imports under
``if TYPE_CHECKING:``, which never run. A package's ``__init__`` counts as the module of the
package's name.
"""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Collection, Iterable
from pathlib import Path

import pytest

import taxpraben

SOURCE = Path(taxpraben.__file__).resolve().parent


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``root`` (the package directory)."""
    files = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def imported_names(
    tree: ast.Module, module: str, is_package: bool, modules: Collection[str], type_checking: bool = False
) -> set[str]:
    """Every dotted name ``tree`` imports (relative imports resolved against ``module``);
    ``from X import Y`` gives ``X.Y`` when that is one of ``modules``, else ``X``.

    Like the reference graph, importing ``X.Y`` is not counted as importing the package
    ``X`` (its ``__init__`` runs first, but counting that would put every package in a circle
    with the submodules its ``__init__`` re-exports)."""
    names: set[str] = set()

    def visit(nodes: Iterable[ast.AST]) -> None:
        for node in nodes:
            if not type_checking and isinstance(node, ast.If) and _is_type_checking(node.test):
                visit(node.orelse)  # the `else:` of TYPE_CHECKING does run
                continue
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = module.split(".") if is_package else module.split(".")[:-1]
                    anchor = package[: len(package) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:  # the submodule if Y is one, else X
                    full = f"{base}.{alias.name}"
                    names.add(full if full in modules else base)
            visit(ast.iter_child_nodes(node))

    visit(tree.body)
    return names


def import_graph(root: Path, *, type_checking: bool = False) -> dict[str, set[str]]:
    """Module -> the modules of the same package tree that it imports (itself excluded);
    with ``type_checking``, also those imported under ``if TYPE_CHECKING:``."""
    files = module_files(root)
    graph = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names = imported_names(tree, module, path.name == "__init__.py", files, type_checking)
        graph[module] = {name for name in names if name in files and name != module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its first module repeated at the end), or None."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return list(exc.args[1])
    return None


def write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_package_has_no_import_circle() -> None:
    graph = import_graph(SOURCE)
    assert "taxpraben.models.base" in graph and "taxpraben.cli" in graph  # the scan found the tree
    assert find_cycle(graph) is None, f"import circle: {' -> '.join(find_cycle(graph) or [])}"


def private_imports(root: Path) -> list[str]:
    """``file: module.name`` for every import, in the package, of another module's private
    name (``from X import _y``) or of a private module (``X._y``): a name one module keeps
    to itself is no other module's to use (make it public where it is shared)."""
    found = []
    package = root.name
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == package:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names if alias.name.split(".")[0] == package]
            else:
                continue
            found += [f"{path.relative_to(root)}: {name}" for name in names
                      if any(part.startswith("_") and not part.startswith("__") for part in name.split("."))]
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    assert private_imports(SOURCE) == []


def test_private_imports_are_found(tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {
        "__init__.py": "", "a.py": "_x = 1\ny = 2\n", "_b.py": "z = 3\n",
        "c.py": "from pkg.a import _x, y\nimport pkg._b\n",
        "d.py": "def f():\n    from pkg._b import z\n    from pkg import __version__\n",
    })  # fmt: skip
    assert private_imports(root) == ["c.py: pkg.a._x", "c.py: pkg._b", "d.py: pkg._b.z"]


def room_of(module: str, packages: Collection[str]) -> str:
    """The room of a module, as the house is drawn: the folder under the package it is in
    (``taxpraben.parsing.rules`` and ``taxpraben.parsing`` -> ``parsing/``), or the module
    itself at the package root (``taxpraben.task_spec``)."""
    parts = module.split(".")
    if len(parts) > 2 or module in packages:
        return f"{parts[1]}/"
    return module


def room_graph(root: Path, *, type_checking: bool) -> dict[str, set[str]]:
    """Room -> the rooms its modules import (itself excluded); the package's own
    ``__init__`` is no room."""
    graph = import_graph(root, type_checking=type_checking)
    packages = {module for module, path in module_files(root).items() if path.name == "__init__.py"}
    rooms: dict[str, set[str]] = {}
    for module, imported in graph.items():
        if "." not in module:
            continue
        room = room_of(module, packages)
        targets = {room_of(name, packages) for name in imported if "." in name}
        rooms.setdefault(room, set()).update(targets - {room})
    return rooms


def test_no_folder_imports_back_up() -> None:
    """Folders and root modules as rooms stand in floors, none importing a room above it: no
    circle between rooms, counting the imports made for type checking too (they tie the
    folders' meanings together as much as a run-time import does)."""
    rooms = room_graph(SOURCE, type_checking=True)
    assert {"parsing/", "scoring/", "report/", "taxpraben.task_spec"} <= rooms.keys()
    cycle = find_cycle(rooms)
    assert cycle is None, f"rooms import each other: {' -> '.join(cycle or [])}"


def test_room_cycles_are_found(tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {
        "__init__.py": "", "spec.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import x\n",
        "a/__init__.py": "", "a/x.py": "import pkg.spec\n",
    })  # fmt: skip
    rooms = room_graph(root, type_checking=True)
    assert rooms["pkg.spec"] == {"a/"} and rooms["a/"] == {"pkg.spec"}
    assert find_cycle(rooms) is not None
    assert find_cycle(room_graph(root, type_checking=False)) is None  # without the type-checking import


def test_protocol_modules_import_no_implementation() -> None:
    graph = import_graph(SOURCE)
    backends = {"taxpraben.models.openai", "taxpraben.models.hf", "taxpraben.models.replay", "taxpraben.models.baselines"}
    assert not graph["taxpraben.models.base"] & backends
    assert backends <= graph["taxpraben.models.factory"]
    # not even for a type checker: the settings live apart from the pipeline that uses them
    typed = import_graph(SOURCE, type_checking=True)
    assert "taxpraben.scoring.pipeline" not in typed["taxpraben.scoring.semantic"]
    # light modules only (the defaults, the device syntax): checking settings loads no numpy
    assert typed["taxpraben.scoring.settings"] <= {"taxpraben.metrics.defaults", "taxpraben.compute.devices"}
    assert not typed["taxpraben.compute.devices"]


@pytest.mark.parametrize(
    ("files", "cycle"),
    [
        # a lazy (function-level) import closes a circle as surely as a top-level one
        (
            {"__init__.py": "", "a.py": "from pkg.b import f\n", "b.py": "def f():\n    from pkg import a\n"},
            {"pkg.a", "pkg.b"},
        ),
        # relative imports, three modules, one of them a subpackage's __init__
        (
            {
                "__init__.py": "",
                "a.py": "from .sub import g\n",
                "sub/__init__.py": "from ..c import h as g\n",
                "c.py": "import pkg.a\nh = 1\n",
            },
            {"pkg.a", "pkg.sub", "pkg.c"},
        ),
        # an import that only a type checker sees closes no circle; its else branch does
        (
            {
                "__init__.py": "",
                "a.py": "from typing import TYPE_CHECKING\nimport pkg.b\n",
                "b.py": "import typing\nif typing.TYPE_CHECKING:\n    from pkg import a\n",
            },
            None,
        ),
        (
            {
                "__init__.py": "",
                "a.py": "import pkg.b\n",
                "b.py": "if TYPE_CHECKING:\n    pass\nelse:\n    from . import a\n",
            },
            {"pkg.a", "pkg.b"},
        ),
    ],
    ids=["lazy-import", "relative-three", "type-checking-only", "type-checking-else"],
)
def test_cycle_finder_on_small_packages(tmp_path: Path, files: dict[str, str], cycle: set[str] | None) -> None:
    graph = import_graph(write_package(tmp_path / "pkg", files))
    found = find_cycle(graph)
    assert (set(found) if found else None) == cycle
    if found:
        assert found[0] == found[-1]


def test_type_checking_imports_are_counted_on_request(tmp_path: Path) -> None:
    root = write_package(
        tmp_path / "pkg",
        {"__init__.py": "", "a.py": "import pkg.b\n", "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n"},
    )
    assert find_cycle(import_graph(root)) is None
    assert set(find_cycle(import_graph(root, type_checking=True)) or []) == {"pkg.a", "pkg.b"}

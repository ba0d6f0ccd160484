"""The entry points of one group among the installed distributions, read without
``importlib.metadata`` where the installs allow it.

Why not ``importlib.metadata.entry_points`` alone: importing it (``zipfile``, ``csv``,
``email`` where aiohttp has not imported it) and its scan cost 10-15 ms, 2.4-5.7 ms here, and
every `taxpraben run` asks for its plugins before it reads a task spec, so before its first
request (issue 24; benchmarks/README.md has the figures). What it
does for the installs on the directories of ``sys.path`` is small and is done here the same
way (``importlib.metadata`` of Python 3.10-3.13; a test holds the two equal over generated
installs):

- the distributions are the ``*.dist-info`` and ``*.egg-info`` entries of each directory of
  ``sys.path`` in turn (``''`` is the working directory), in the order the directory lists
  them, grouped by name; a name is normalised as PEP 503 says, dashes as underscores;
- of the distributions of one name only the first counts, even where it has no entry points;
- a distribution's ``entry_points.txt`` is read line by line, stripped: ``#`` lines and blank
  lines skipped, ``[group]`` opens a section, ``name = value`` is an entry of it.

Anything else (a zip or an egg on ``sys.path``, a finder of distributions other than the
standard one on ``sys.meta_path``, a metadata directory whose name the fast reading cannot
take, a line it cannot split) is handed to ``importlib.metadata`` whole, so that the answer
is the same in every case.
"""

from __future__ import annotations

import os
import re
import sys
from importlib.machinery import PathFinder

_METADATA_SUFFIXES = (".dist-info", ".egg-info")
_SEPARATORS = re.compile(r"[-_.]+")

#: An entry point's value (``importlib.metadata.EntryPoint.pattern``): the module, then an
#: optional attribute and extras.
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


class _Unusual(Exception):
    """An install the fast reading does not take; importlib.metadata reads it."""


def entry_point_values(group: str) -> list[str]:
    """The values (``module:attr [extras]``) of the entry points in ``group``, in the order
    ``importlib.metadata.entry_points(group=group)`` gives them."""
    try:
        return _read(group)
    except _Unusual:
        from importlib.metadata import entry_points

        return [ep.value for ep in entry_points(group=group)]


def entry_point_module(value: str) -> str | None:
    """The module an entry point's value names; None for a value that names none."""
    match = _VALUE.match(value)
    return match.group("module") if match else None


def _read(group: str) -> list[str]:
    if any(getattr(finder, "find_distributions", None) is not None and finder is not PathFinder
           for finder in sys.meta_path):  # fmt: skip
        raise _Unusual
    values: list[str] = []
    seen: set[str] = set()
    for root in sys.path:
        for name, path in _distributions(root):
            if name not in seen:
                seen.add(name)
                values += _values(path, group)
    return values


def _distributions(root: object) -> list[tuple[str, str]]:
    """(normalised name, path) of the metadata directories in ``root``, grouped by name in
    the order of each name's first entry, as importlib.metadata's lookup of a path is."""
    if not isinstance(root, str) or root.lower().endswith(".egg"):
        raise _Unusual
    try:
        children = os.listdir(root or ".")
    except OSError:
        if os.path.exists(root or "."):  # a file on sys.path: a zip importlib.metadata reads
            raise _Unusual from None
        return []
    groups: dict[str, list[str]] = {}
    for child in children:
        low = child.lower()
        if not low.endswith(_METADATA_SUFFIXES):
            continue
        stem, _, suffix = child.rpartition(".")
        name = stem.partition("-")[0]
        if "." + suffix not in _METADATA_SUFFIXES or not name:
            # importlib.metadata names such a distribution from its METADATA file
            raise _Unusual
        normalised = _SEPARATORS.sub("-", name).lower().replace("-", "_")
        groups.setdefault(normalised, []).append(os.path.join(root, child))
    return [(name, path) for name, paths in groups.items() for path in paths]


def _values(path: str, group: str) -> list[str]:
    try:
        with open(os.path.join(path, "entry_points.txt"), encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return []
    values = []
    section = None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section is None:
            continue
        if "=" not in line:
            raise _Unusual  # importlib.metadata fails on it; let it say so
        if section == group:
            values.append(line.split("=", 1)[1].strip())
    return values


__all__ = ["entry_point_module", "entry_point_values"]

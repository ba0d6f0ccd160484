"""Entry points read without importlib.metadata (taxpraben.kinds.entry_points): the same values in
the same order as ``importlib.metadata.entry_points(group=...)`` over generated installs, and
the installs the fast reading does not take handed to importlib.metadata."""

from __future__ import annotations

import importlib.metadata
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import taxpraben.kinds.entry_points as fast
from taxpraben.kinds.entry_points import entry_point_module, entry_point_values

GROUP = "taxpraben.plugins"


def reference(group: str) -> list[str]:
    return [ep.value for ep in importlib.metadata.entry_points(group=group)]


@contextmanager
def on_sys_path(*roots: str) -> Iterator[None]:
    saved = sys.path[:]
    sys.path[:] = list(roots)
    try:
        yield
    finally:
        sys.path[:] = saved


def write_dist(root: Path, dirname: str, entry_points: str | None) -> None:
    (root / dirname).mkdir()
    (root / dirname / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dirname.split('-')[0]}\n", encoding="utf-8")
    if entry_points is not None:
        (root / dirname / "entry_points.txt").write_text(entry_points, encoding="utf-8")


names = st.sampled_from(["foo", "Foo", "foo_bar", "Foo.Bar", "foo--bar", "baz", "taxpraben_x"])
groups = st.sampled_from([GROUP, "console_scripts", f"{GROUP} ", "other.group"])
def entry_line(name: str, value: str) -> str:
    return f"{name} = {value}"


def spaced_line(name: str, value: str) -> str:
    return f"  {name}={value}  "


def entry_text(secs: list[tuple[str, list[str]]], head: str) -> str:
    return head + "".join(f"[{g}]\n" + "".join(x + "\n" for x in body) for g, body in secs)


values = st.sampled_from(["pkg.mod:attr", "mod", "m:f [extra]", "x.y", "mod2", "p.q:r"])
lines = st.one_of(
    st.builds(entry_line, st.sampled_from(["a", "b", "plug"]), values),
    st.builds(spaced_line, st.sampled_from(["a", "c"]), values),
    st.sampled_from(["", "# a comment", "   ", "#[not.a.section]"]),
)
sections = st.lists(st.tuples(groups, st.lists(lines, max_size=4)), max_size=3)
heads = st.sampled_from(["", "orphan = before.any.section\n", "\n# header\n"])
entry_texts = st.one_of(st.none(), st.builds(entry_text, sections, heads))
dists = st.tuples(names, st.sampled_from(["1.0", "2.0.post1"]), st.sampled_from([".dist-info", ".egg-info"]), entry_texts)
installs = st.lists(st.lists(dists, max_size=5), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(installs)
def test_the_values_are_importlib_metadatas(layout: list[list[tuple[str, str, str, str | None]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        roots = []
        for i, directory in enumerate(layout):
            root = Path(tmp) / f"site{i}"
            root.mkdir()
            for name, version, suffix, text in directory:
                dirname = f"{name}-{version}{suffix}"
                if not (root / dirname).exists():
                    write_dist(root, dirname, text)
            roots.append(str(root))
        roots.append(str(Path(tmp) / "missing"))  # a path entry that does not exist
        with on_sys_path(*roots):
            assert fast._read(GROUP) == reference(GROUP)
            assert entry_point_values(GROUP) == reference(GROUP)


def test_the_first_distribution_of_a_name_wins_even_without_entry_points(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    write_dist(first, "Foo_Bar-1.0.dist-info", None)
    write_dist(second, "foo.bar-2.0.dist-info", f"[{GROUP}]\nx = shadowed\n")
    write_dist(second, "other-1.0.dist-info", f"[{GROUP}]\ny = other.mod:register\n")
    with on_sys_path(str(first), str(second)):
        assert entry_point_values(GROUP) == reference(GROUP) == ["other.mod:register"]


def test_a_single_file_egg_info_and_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "old-1.0.egg-info").write_text("Name: old\n", encoding="utf-8")  # a file, not a directory
    write_dist(tmp_path, "cwd_plugin-1.0.dist-info", f"[{GROUP}]\np = cwd_plugin\n")
    monkeypatch.chdir(tmp_path)
    with on_sys_path(""):
        assert entry_point_values(GROUP) == reference(GROUP) == ["cwd_plugin"]


@pytest.mark.parametrize("case", ["zip", "egg", "uppercase", "unsplittable", "finder"])
def test_unusual_installs_are_read_by_importlib_metadata(case: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    roots = [str(tmp_path)]
    write_dist(tmp_path, "plain-1.0.dist-info", f"[{GROUP}]\np = plain.mod\n")
    if case == "zip":
        import zipfile

        archive = tmp_path / "dists.zip"
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\n")
            z.writestr("zipped-1.0.dist-info/entry_points.txt", f"[{GROUP}]\nz = zipped.mod\n")
        roots.append(str(archive))
    elif case == "egg":
        egg = tmp_path / "eggy-1.0.egg"
        (egg / "EGG-INFO").mkdir(parents=True)
        (egg / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 1.0\nName: eggy\n", encoding="utf-8")
        (egg / "EGG-INFO" / "entry_points.txt").write_text(f"[{GROUP}]\ne = eggy.mod\n", encoding="utf-8")
        roots.append(str(egg))
    elif case == "uppercase":
        write_dist(tmp_path, "Shout-1.0.DIST-INFO", f"[{GROUP}]\ns = shout.mod\n")
    elif case == "unsplittable":
        write_dist(tmp_path, "broken-1.0.dist-info", "[console_scripts]\nno equals sign here\n")
    else:
        class Finder:
            @staticmethod
            def find_distributions(context: object = None) -> list[object]:
                return []

        monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    with on_sys_path(*roots):
        with pytest.raises(fast._Unusual):
            fast._read(GROUP)
        if case == "unsplittable":  # importlib.metadata's own failure, as it would be without us
            with pytest.raises(Exception) as expected:
                reference(GROUP)
            with pytest.raises(type(expected.value)):
                entry_point_values(GROUP)
        else:
            assert entry_point_values(GROUP) == reference(GROUP)
            assert "plain.mod" in entry_point_values(GROUP)


def test_the_environments_own_entry_points_are_read_the_same() -> None:
    for group in (GROUP, "console_scripts", "pytest11", "pygments.lexers"):
        assert entry_point_values(group) == reference(group), group


@pytest.mark.parametrize(("value", "module"), [
    ("pkg.mod:attr", "pkg.mod"), ("mod", "mod"), ("m : f [extra, other]", "m"), ("m:f.g", "m"),
    ("not a module", None), (":attr", None), ("", None),
])  # fmt: skip
def test_the_module_of_a_value_is_importlib_metadatas(value: str, module: str | None) -> None:
    assert entry_point_module(value) == module
    ep = importlib.metadata.EntryPoint(name="n", value=value, group=GROUP)
    try:
        expected = ep.module
    except AttributeError:  # importlib.metadata: the value does not match its pattern
        expected = None
    assert expected == module


def test_a_fresh_process_asking_for_plugins_does_not_import_importlib_metadata() -> None:
    from helpers.probes import probe

    code = (
        "import json, sys\n"
        "from taxpraben.kinds import load_plugins\n"
        "load_plugins()\n"
        "print(json.dumps('importlib.metadata' in sys.modules))\n"
    )
    assert probe(code) is False

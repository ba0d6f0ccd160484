"""The task registry: the bundled specs plus any the user drops into a task directory.

Directories are searched in order: the package's own ``specs/`` first, then each
directory given with ``--task-dir`` or listed in ``TAXPRABEN_TASK_DIR`` (``os.pathsep``
separated). A later spec with the same name replaces an earlier one, so a user can
adjust a bundled task (its Bloom level, say) without touching the package.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from taxpraben.task_spec import BLOOM_ORDER, TaskSpec, build_spec, spec_json, validate_spec

if TYPE_CHECKING:
    from pydantic import ValidationError

    from taxpraben.results.json_value import JSONObject

TASK_DIR_ENV = "TAXPRABEN_TASK_DIR"
SPEC_SUFFIXES = (".yaml", ".yml", ".json")
#: The bundled specs as their YAML reads, with the sha256 of the files it was read from
#: (:func:`spec_files_sha256`): ``run`` reads its 14 specs before its first request, and this
#: spares it importing PyYAML (~10 ms of its start). Used only while the bundled files are
#: byte for byte those (otherwise they are read as YAML); remade by :func:`write_bundled_snapshot`.
BUNDLED_SNAPSHOT = Path(__file__).parent / "bundled_specs.json"


class TaskSpecError(ValueError):
    """A spec file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Registry(Mapping[str, TaskSpec]):
    """Task specs by name, in the order of the paper's table (Bloom level, then name order)."""

    specs: dict[str, TaskSpec]
    sources: dict[str, Path]
    #: The spec files built without pydantic's check of their values (``load_registry(...,
    #: checked=False)``), with the mapping each was built from: :meth:`check` checks them.
    unchecked: dict[Path, JSONObject] = field(default_factory=dict, compare=False)

    def check(self) -> None:
        """pydantic's check of the specs built unchecked, as ``load_registry`` makes it:
        TaskSpecError naming the file and the key for a value of the wrong type or out of
        range. Once done, nothing is left to check.

        The spec in use is the one built from the file's values as they are: pydantic reads
        them strictly (``task_spec._Strict``), so a spec it accepts is that one; a spec that
        came out otherwise would be refused here rather than used unchecked."""
        for path, raw in list(self.unchecked.items()):
            built = self.specs.get(path.stem)
            validated = _validated(path, raw)
            if built is not None and validated != built:
                raise TaskSpecError(f"{path}: invalid task spec\n  read as {spec_json(validated)}, built as {spec_json(built)}")
            del self.unchecked[path]

    def __getitem__(self, name: str) -> TaskSpec:
        return self.specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.specs)

    def __len__(self) -> int:
        return len(self.specs)

    def lookup(self, name: str) -> TaskSpec | None:
        """Find a task by exact name, else case-insensitively."""
        if name in self.specs:
            return self.specs[name]
        lowered = {k.lower(): v for k, v in self.specs.items()}
        return lowered.get(name.lower())

    def select(self, names: Iterable[str] | None) -> list[TaskSpec]:
        """The specs named (all when ``names`` is None), raising with suggestions otherwise."""
        if names is None:
            return list(self.specs.values())
        chosen: list[TaskSpec] = []
        for name in names:
            spec = self.lookup(name)
            if spec is None:
                hint = closest_task_name(name, self.specs)
                extra = f"; did you mean {hint!r}?" if hint else ""
                raise KeyError(f"unknown task {name!r}{extra} (known: {', '.join(self.specs)})")
            chosen.append(spec)
        return chosen


def closest_task_name(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate most like ``name`` (case-insensitive), or None when nothing is close."""
    import difflib

    pool = {c.lower(): c for c in candidates}
    match = difflib.get_close_matches(name.lower(), list(pool), n=1, cutoff=0.5)
    return pool[match[0]] if match else None


def _format_validation_error(path: Path, err: ValidationError) -> str:
    lines = [f"{path}: invalid task spec"]
    for item in err.errors():
        key = ".".join(str(p) for p in item["loc"]) or "(top level)"
        # A stdlib dataclass calls an unknown key an "unexpected keyword argument".
        msg = "Extra inputs are not permitted" if item["type"] == "unexpected_keyword_argument" else item["msg"]
        lines.append(f"  key {key}: {msg}")
    return "\n".join(lines)


def _validated(path: Path, raw: JSONObject) -> TaskSpec:
    from pydantic import ValidationError

    try:
        return validate_spec(raw)
    except ValidationError as exc:
        raise TaskSpecError(_format_validation_error(path, exc)) from exc


def _read_spec_file(path: Path) -> JSONObject:
    import yaml  # on first use: the bundled specs come from BUNDLED_SNAPSHOT

    # libyaml's safe loader where PyYAML was built with it (the wheels are): the same documents
    # as ``yaml.safe_load`` in a sixth of the time.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)  # a safe loader
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TaskSpecError(f"{path}: cannot read task spec: {exc}") from exc
    if not isinstance(raw, dict):
        raise TaskSpecError(f"{path}: a task spec must be a mapping of keys, got {type(raw).__name__}")
    return raw


def load_spec_file(path: Path, *, checked: bool = True) -> TaskSpec:
    """Parse and validate one spec file; errors name the file and the offending key.

    ``checked=False``: the spec is built from the file without pydantic (its keys, the
    sections and the Bloom level are still checked here, by the kind too) and its values'
    types and ranges are left to :meth:`Registry.check`; a spec that cannot even be built is
    validated at once, so that its error is pydantic's, naming the key."""
    return _spec_of(path, _read_spec_file(path), checked)


def _spec_of(path: Path, raw: JSONObject, checked: bool) -> TaskSpec:
    if checked:
        return _fitting(path, _validated(path, raw))
    try:
        return _fitting(path, build_spec(raw))
    except (TypeError, ValueError):
        # Not even built, or built and found wrong: pydantic's error first when it has one
        # (the key and why), as when the spec is checked as it is loaded.
        return _fitting(path, _validated(path, raw))


def _fitting(path: Path, spec: TaskSpec) -> TaskSpec:
    """The spec, its name that of its file and its sections those of its kind."""
    if path.stem != spec.name:
        raise TaskSpecError(f"{path}: key name: {spec.name!r} must match the file name {path.stem!r}")
    try:
        check_spec(spec)
    except ValueError as exc:  # the kind's SpecMismatch (or an unknown kind) names the key
        raise TaskSpecError(f"{path}: invalid task spec\n  {exc}") from exc
    return spec


def check_spec(spec: TaskSpec) -> None:
    """Whether the spec fits its kind (its metrics, the sections the kind reads); raises
    ValueError saying what does not."""
    # Imported here, not at the top: the kinds read parsing modules that import this
    # package's spec types, so importing them with the package would run in a circle.
    from taxpraben.kinds import get_kind

    kind = get_kind(spec.type)
    kind.check_spec(spec)
    check_reading_chain(spec, kind.reading_kind(spec))


def check_reading_chain(spec: TaskSpec, reading_kind: str) -> None:
    """A spec's own chain (``reading.chain``) is the name of a chain set, or names rules of
    its reading kind only, each once, that compare with the gold alike; raises ValueError
    naming the task, the key and the choices (the chain sets, the rules that kind has)."""
    names = spec.reading_chain
    if names is None:
        return
    from taxpraben.parsing.rules import NAMED_CHAINS, chain_comparison, rule_named, rules_of_kind

    where = f"task {spec.name}: key reading.chain"
    if isinstance(names, str):
        if names not in NAMED_CHAINS:
            raise ValueError(f"{where}: {names!r} is no chain set (the named chains, `taxpraben rules`: "
                             f"{', '.join(NAMED_CHAINS)}; or a list of rule names)")
        return
    known = rules_of_kind(reading_kind)  # every rule with an attempt for it, a plugin's too
    for name in names:
        if name not in known:
            what = "no rule" if rule_named(name) is None else f"not a rule of the {reading_kind} reader"
            raise ValueError(f"{where}: {name!r} is {what} (the {reading_kind} reader's rules, "
                             f"`taxpraben rules`: {', '.join(known)})")
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"{where}: {', '.join(twice)} named twice")
    try:
        chain_comparison(names)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _bundled_spec_dir() -> Path:
    # What importlib.resources.files("taxpraben.tasks") gives for a package on disk, without
    # importing importlib.resources (~2 ms of run's start).
    return Path(__file__).parent / "specs"


def spec_files(directory: Path) -> list[Path]:
    """The spec files of a task directory, in the order they are read."""
    return [p for p in sorted(directory.iterdir()) if p.suffix.lower() in SPEC_SUFFIXES and not p.name.startswith(".")]


def spec_files_sha256(paths: Iterable[Path]) -> str:
    """The sha256 of the files' names and bytes (each length-prefixed); OSError if one cannot be read."""
    digest = hashlib.sha256()
    for path in paths:
        for part in (path.name.encode("utf-8"), path.read_bytes()):
            digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def _bundled_raw(paths: list[Path]) -> dict[str, JSONObject] | None:
    """The bundled files' mappings from :data:`BUNDLED_SNAPSHOT` (by file name), when it was
    made from exactly these files; None otherwise (they are then read as YAML, as any spec)."""
    try:
        snapshot = json.loads(BUNDLED_SNAPSHOT.read_text(encoding="utf-8"))
        fresh = isinstance(snapshot, dict) and snapshot.get("sha256") == spec_files_sha256(paths)
    except (OSError, ValueError):
        return None
    specs = snapshot.get("specs") if fresh else None
    if not isinstance(specs, dict) or list(specs) != [p.name for p in paths]:
        return None
    return specs if all(isinstance(raw, dict) for raw in specs.values()) else None


def bundled_snapshot() -> JSONObject:
    """What :data:`BUNDLED_SNAPSHOT` holds for the bundled files as they are (read as YAML)."""
    paths = spec_files(_bundled_spec_dir())
    specs: JSONObject = {p.name: _read_spec_file(p) for p in paths}
    return {"sha256": spec_files_sha256(paths), "specs": specs}


def write_bundled_snapshot() -> Path:
    """Remake :data:`BUNDLED_SNAPSHOT` after a bundled spec changed (tests/test_registry.py
    says when: ``python -c "from taxpraben.tasks.registry import write_bundled_snapshot as w; w()"``)."""
    text = json.dumps(bundled_snapshot(), ensure_ascii=False, indent=1)
    BUNDLED_SNAPSHOT.write_text(text + "\n", encoding="utf-8")
    return BUNDLED_SNAPSHOT


def task_dirs_from_env() -> list[Path]:
    value = os.environ.get(TASK_DIR_ENV, "")
    return [Path(p) for p in value.split(os.pathsep) if p.strip()]


def load_registry(extra_dirs: Iterable[Path | str] = (), *, use_env: bool = True, checked: bool = True) -> Registry:
    """Load the bundled specs, then those in ``extra_dirs`` and ``$TAXPRABEN_TASK_DIR``.

    ``checked=False`` (``run``, whose first request waits for this): the specs are built
    without pydantic (:func:`load_spec_file`), and :meth:`Registry.check` checks them later.

    Plugin modules ($TAXPRABEN_PLUGINS, entry points ``taxpraben.plugins``) are imported
    first, so that specs may use the kinds and metrics they register.
    """
    from taxpraben.kinds import PluginError, load_plugins  # see check_spec: not at the top

    try:
        load_plugins()
    except PluginError as exc:
        raise TaskSpecError(str(exc)) from exc
    dirs = [_bundled_spec_dir(), *(Path(d) for d in extra_dirs)]
    if use_env:
        dirs.extend(task_dirs_from_env())
    specs: dict[str, TaskSpec] = {}
    sources: dict[str, Path] = {}
    unchecked: dict[Path, JSONObject] = {}
    for k, directory in enumerate(dirs):
        if not directory.is_dir():
            raise TaskSpecError(f"{directory}: task directory does not exist")
        paths = spec_files(directory)
        known = _bundled_raw(paths) if k == 0 else None
        for path in paths:
            raw = known[path.name] if known is not None else _read_spec_file(path)
            spec = _spec_of(path, raw, checked)
            if spec.name in sources:
                unchecked.pop(sources[spec.name], None)  # replaced: what is used is checked
            specs[spec.name] = spec
            sources[spec.name] = path
            if not checked:
                unchecked[path] = raw
    order = {level: i for i, level in enumerate(BLOOM_ORDER)}
    paper = {name: i for i, name in enumerate(PAPER_ORDER)}
    ordered = sorted(
        specs.values(), key=lambda s: (order[s.bloom], paper.get(s.name, len(paper)), s.name)
    )
    return Registry({s.name: s for s in ordered}, sources, unchecked)


#: The order of the datasets in the paper's tables.
PAPER_ORDER = (
    "TaxRecite", "TaxSum", "TaxTopic", "TaxRead", "TaxCalc", "TaxSCQ", "TaxMCQ", "TaxQA",
    "TaxBoard", "TaxCrime", "TaxOpinion", "TaxRisk", "TaxInspect", "TaxPlan",
)  # fmt: skip

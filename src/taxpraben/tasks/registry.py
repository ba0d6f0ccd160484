"""The task registry: the bundled specs plus any the user drops into a task directory.

Directories are searched in order: the package's own ``specs/`` first, then each
directory given with ``--task-dir`` or listed in ``TAXPRABEN_TASK_DIR`` (``os.pathsep``
separated). A later spec with the same name replaces an earlier one, so a user can
adjust a bundled task (its Bloom level, say) without touching the package.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml
from pydantic import ValidationError

from taxpraben.task_spec import BLOOM_ORDER, TaskSpec

TASK_DIR_ENV = "TAXPRABEN_TASK_DIR"
SPEC_SUFFIXES = (".yaml", ".yml", ".json")
#: libyaml's safe loader where PyYAML was built with it (the wheels are): the same documents
#: as ``yaml.safe_load`` in a sixth of the time, and every run reads the 14 bundled specs
#: before its first request.
_SPEC_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class TaskSpecError(ValueError):
    """A spec file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Registry(Mapping[str, TaskSpec]):
    """Task specs by name, in the order of the paper's table (Bloom level, then name order)."""

    specs: dict[str, TaskSpec]
    sources: dict[str, Path]

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
        lines.append(f"  key {key}: {item['msg']}")
    return "\n".join(lines)


def load_spec_file(path: Path) -> TaskSpec:
    """Parse and validate one spec file; errors name the file and the offending key."""
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_SPEC_LOADER)  # a safe loader (above)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TaskSpecError(f"{path}: cannot read task spec: {exc}") from exc
    if not isinstance(raw, dict):
        raise TaskSpecError(f"{path}: a task spec must be a mapping of keys, got {type(raw).__name__}")
    try:
        spec = TaskSpec.model_validate(raw)
    except ValidationError as exc:
        raise TaskSpecError(_format_validation_error(path, exc)) from exc
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

    get_kind(spec.type).check_spec(spec)


def _bundled_spec_dir() -> Path:
    return Path(str(resources.files("taxpraben.tasks") / "specs"))


def task_dirs_from_env() -> list[Path]:
    value = os.environ.get(TASK_DIR_ENV, "")
    return [Path(p) for p in value.split(os.pathsep) if p.strip()]


def load_registry(extra_dirs: Iterable[Path | str] = (), *, use_env: bool = True) -> Registry:
    """Load the bundled specs, then those in ``extra_dirs`` and ``$TAXPRABEN_TASK_DIR``.

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
    for directory in dirs:
        if not directory.is_dir():
            raise TaskSpecError(f"{directory}: task directory does not exist")
        for path in sorted(directory.iterdir()):
            if path.suffix.lower() not in SPEC_SUFFIXES or path.name.startswith("."):
                continue
            spec = load_spec_file(path)
            specs[spec.name] = spec
            sources[spec.name] = path
    order = {level: i for i, level in enumerate(BLOOM_ORDER)}
    paper = {name: i for i, name in enumerate(PAPER_ORDER)}
    ordered = sorted(
        specs.values(), key=lambda s: (order[s.bloom], paper.get(s.name, len(paper)), s.name)
    )
    return Registry({s.name: s for s in ordered}, sources)


#: The order of the datasets in the paper's tables.
PAPER_ORDER = (
    "TaxRecite", "TaxSum", "TaxTopic", "TaxRead", "TaxCalc", "TaxSCQ", "TaxMCQ", "TaxQA",
    "TaxBoard", "TaxCrime", "TaxOpinion", "TaxRisk", "TaxInspect", "TaxPlan",
)  # fmt: skip

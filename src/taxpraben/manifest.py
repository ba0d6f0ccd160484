"""The manifest of a run (results.json ``meta.manifest``): what it takes to reproduce it.

Versions (taxpraben, Python, the platform, the packages that decide the numbers), the exact
inputs (each task's data file and spec, by sha256; the prompt's construction), the decoding,
``--limit``, and the semantic scorers' model revisions. Typed by ``results.Manifest``.

The helpers are pure but for the few reads they name: file hashes (data files are hashed
by the loader, in the read that makes ``data_hash``), installed versions (this is the one
place that reads them: :func:`importlib.metadata.version`, never an import of torch or
transformers just for a version) and the local Hugging Face cache (no network). Devices
come from what the job knows (``--device``, the scorers' resolved devices): CUDA is never
initialised here.

A job builds its part (:func:`job_manifest`) before scoring; scoring completes it
(:func:`complete_manifest`) with what only it knows: the end time, the commit, the devices
the scorers loaded on.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from taxpraben.compute.devices import parse_devices
from taxpraben.metrics.defaults import (
    DEFAULT_BARTSCORE_MODEL,
    DEFAULT_BERTSCORE_LAYER,
    DEFAULT_BERTSCORE_MODEL,
)

if TYPE_CHECKING:
    from taxpraben.data.loader import LoadedData
    from taxpraben.results.json_value import JSONObject, JSONValue
    from taxpraben.tasks import Registry, TaskSpec


class ScorerChoice(Protocol):
    """What the manifest reads of the scoring options (``options.ScoringOptions`` is one; a
    protocol, so that this module does not reach up to the options)."""

    @property
    def no_semantic(self) -> bool: ...
    @property
    def bertscore_model(self) -> str: ...
    @property
    def bartscore_model(self) -> str: ...
    @property
    def bartscore_weights(self) -> Path | None: ...
    @property
    def device(self) -> str: ...

#: The packages whose versions the manifest records (the numbers depend on them).
PACKAGES = ("torch", "transformers", "aiohttp", "numpy", "pydantic")

#: A local model directory's weights file, by preference.
WEIGHTS_FILES = ("model.safetensors", "pytorch_model.bin")

_CHUNK = 1 << 20


# ---------------------------------------------------------------------------- versions


@functools.cache  # read once a process: a lookup walks sys.path's distributions (1-8 ms each)
def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``; None where it is not installed."""
    # imported here: its import (15-25 ms) is not run's start-up's (the jobs import this module)
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def package_version() -> str:
    """taxpraben's own installed version (``taxpraben.__version__``); ``0.0.0+unknown`` from a
    source tree without an install."""
    return installed_version("taxpraben") or "0.0.0+unknown"


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """The installed version of each package, by name (None where not installed)."""
    return {name: installed_version(name) for name in names}


# ---------------------------------------------------------------------------- hashes


def sha256_file(path: Path) -> str:
    """sha256 (hex) of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def canonical_json(value: JSONValue) -> str:
    """The canonical JSON text of ``value``: sorted keys, compact separators, UTF-8 as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def spec_sha256(spec: TaskSpec) -> str:
    """sha256 of a task spec's canonical JSON: the same spec hashes the same wherever it came
    from (a file's formatting and comments do not count; a plugin spec has no file at all)."""
    from taxpraben.task_spec import spec_json

    return hashlib.sha256(canonical_json(spec_json(spec)).encode("utf-8")).hexdigest()


def prompt_template_sha256() -> str:
    """sha256 of what turns a record into messages. The prompt has no template string (the
    record's query is sent verbatim, as the paper does), so this is the hash of the source
    text of :mod:`taxpraben.prompts`: it changes exactly when the construction can."""
    from taxpraben import prompts

    return sha256_file(Path(prompts.__file__))


# ---------------------------------------------------------------------------- scorers


def _looks_local(model: str) -> bool:
    return Path(model).expanduser().is_dir()


@functools.lru_cache(maxsize=32)
def _weights_sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    """A weights file's hash, once per (file, size, mtime) in this process (the project has
    no on-disk scorer cache directory to keep it in)."""
    return sha256_file(Path(path))


def weights_file(directory: Path) -> Path | None:
    """A local model directory's weights file (model.safetensors, else pytorch_model.bin)."""
    for name in WEIGHTS_FILES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    return None


def weights_sha256(path: Path) -> str:
    """sha256 of a (large) weights file, hashed once per process while the file is unchanged."""
    stat = path.stat()
    return _weights_sha256_cached(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


def hub_revision(model: str, cache_dir: Path | None = None) -> str | None:
    """The commit of hub model ``model`` in the local Hugging Face cache (``cache_dir``, else
    the default one): the snapshot its ``config.json`` resolves to; no network. None when it
    is not there."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - installed with transformers
        return None
    try:
        found = try_to_load_from_cache(model, "config.json", cache_dir=cache_dir)
    except Exception:  # a malformed id: no revision to report, never a failed run
        return None
    if not isinstance(found, str):
        return None
    path = Path(found)
    return path.parent.name if path.parent.parent.name == "snapshots" else None


def scorer_revision(model: str, weights: Path | None = None) -> JSONObject:
    """``{"model", "revision", "weights_sha256"}`` of one scorer model: a local directory ->
    its absolute path and the sha256 of its weights file; a hub id -> the cached snapshot's
    commit (else null). ``weights``: a state dict loaded over the model (BARTScore's
    ``bart_score.pth``), whose sha256 then is the weights' hash."""
    revision: str | None
    digest: str | None = None
    if _looks_local(model):
        directory = Path(model).expanduser().resolve()
        revision = str(directory)
        found = weights_file(directory)
        digest = weights_sha256(found) if found is not None else None
    else:
        revision = hub_revision(model)
    if weights is not None and Path(weights).is_file():
        digest = weights_sha256(Path(weights))
    return {"model": model, "revision": revision, "weights_sha256": digest}


def scorer_revisions(scoring: ScorerChoice) -> dict[str, JSONObject]:
    """The revisions of the semantic scorers the options name; {} with --no-semantic."""
    if scoring.no_semantic:
        return {}
    return {
        "bertscore": scorer_revision(scoring.bertscore_model),
        "bartscore": scorer_revision(scoring.bartscore_model, scoring.bartscore_weights),
    }


def scorer_devices(scorers: Mapping[str, JSONValue], device: str) -> list[str]:
    """The devices the scorers loaded on (``meta.scorers.NAME.devices``), in order, each
    once; else the entries of the ``--device`` value (``auto`` stays ``auto``)."""
    seen: dict[str, None] = {}
    for info in scorers.values():
        if isinstance(info, Mapping):
            for entry in info.get("devices") or []:
                seen[str(entry)] = None
    return list(seen) if seen else list(parse_devices(device))


# ---------------------------------------------------------------------------- scorer setups

#: The settings of ``meta.scorers.NAME`` that change a scorer's numbers (beyond rounding):
#: the batch size does not (batches are padded per text), the truncation does.
SETUP_SETTINGS = ("layer", "idf", "rescale_with_baseline", "max_tokens", "weights", "max_length", "dtype")

#: The paper's scorers (DESIGN.md, README "Scorer models"): model id, and the settings that
#: must hold; a local directory counts when it is named after the id's last part (the
#: README's ``hf download ... --local-dir chinese-xlnet-base``).
PAPER_SCORERS: dict[str, tuple[str, dict[str, JSONValue]]] = {
    "bertscore": (DEFAULT_BERTSCORE_MODEL, {"layer": DEFAULT_BERTSCORE_LAYER, "idf": False,
                                            "rescale_with_baseline": False, "dtype": "float32"}),
    "bartscore": (DEFAULT_BARTSCORE_MODEL, {"dtype": "float32"}),
}  # fmt: skip


def scorer_setup(scorers: Mapping[str, JSONValue], revisions: Mapping[str, JSONValue]) -> dict[str, JSONObject]:
    """Each scorer that loaded (``meta.scorers``), as far as its numbers depend on it: model,
    revision and weights' sha256 (``manifest.scorers``), the settings of
    :data:`SETUP_SETTINGS` it has, and the device kind (cpu, cuda, mps) where its dtype is not
    exact float32 (bf16 and TF32 round differently by device)."""
    setup: dict[str, JSONObject] = {}
    for name in sorted(scorers):
        info = scorers[name]
        if not isinstance(info, Mapping) or info.get("available") is False:
            continue
        revision = revisions.get(name)
        known = revision if isinstance(revision, Mapping) else {}
        entry: JSONObject = {"model": info.get("model"), "revision": known.get("revision"),
                             "weights_sha256": known.get("weights_sha256")}  # fmt: skip
        entry.update({key: info[key] for key in SETUP_SETTINGS if key in info})
        if info.get("dtype", "float32") != "float32":
            devices = info.get("devices") or [info.get("device") or "cpu"]
            entry["device_kind"] = ",".join(sorted({str(d).partition(":")[0] for d in devices}))
        setup[name] = entry
    return setup


def comparable_setup(setup: Mapping[str, JSONValue]) -> str:
    """A setup as compared: the weights' sha256 stands for the model where it is known (one
    checkpoint in two directories is one scorer), else the model and its revision."""
    shown: dict[str, JSONValue] = {}
    for name, entry in setup.items():
        if not isinstance(entry, Mapping):
            continue
        kept = dict(entry)
        if kept.get("weights_sha256"):
            kept.pop("model", None)
            kept.pop("revision", None)
        shown[name] = kept
    return canonical_json(shown)


def describe_setup(setup: Mapping[str, JSONValue]) -> str:
    """``bertscore hfl/chinese-xlnet-base layer 5, float32; bartscore ...``: a setup in words."""
    parts = []
    for name, entry in setup.items():
        if not isinstance(entry, Mapping):
            continue
        settings = [f"{key} {entry[key]}" for key in (*SETUP_SETTINGS, "device_kind")
                    if key in entry and entry[key] not in (None, False)]  # fmt: skip
        digest = entry.get("weights_sha256")
        weights = [f"weights {str(digest)[:12]}…"] if digest else []
        parts.append(" ".join([name, str(entry.get("model")), *weights, *settings]))
    return "; ".join(parts) or "no semantic scorer"


def is_paper_scorer(setup: Mapping[str, JSONValue]) -> bool | None:
    """True when every scorer of ``setup`` is the paper's (:data:`PAPER_SCORERS`), False when
    one is not, None when no semantic scorer scored anything (nothing to label)."""
    if not setup:
        return None
    for name, entry in setup.items():
        paper = PAPER_SCORERS.get(name)
        if paper is None or not isinstance(entry, Mapping):
            return False
        model_id, settings = paper
        model = str(entry.get("model") or "")
        if model != model_id and Path(model).name != model_id.rsplit("/", 1)[-1]:
            return False
        if any(entry.get(key, value) != value for key, value in settings.items()):
            return False
    return True


# ---------------------------------------------------------------------------- the manifest


def data_files(loaded: LoadedData) -> dict[str, dict[str, str]]:
    """Each task's data file and its sha256 (from the loader's single read)."""
    return {
        task: {"path": str(path), "sha256": loaded.file_hashes.get(task) or sha256_file(path)}
        for task, path in loaded.files.items()
    }


def task_specs(registry: Registry, tasks: Sequence[str]) -> dict[str, JSONObject]:
    """Each task's spec file (None for a plugin's spec) and its canonical sha256."""
    out: dict[str, JSONObject] = {}
    for task in tasks:
        source = registry.sources.get(task)
        out[task] = {"path": str(source) if source is not None else None, "sha256": spec_sha256(registry[task])}
    return out


def job_manifest(
    *,
    loaded: LoadedData,
    registry: Registry,
    scoring: ScorerChoice,
    started_at: str,
    generation: Mapping[str, JSONValue] | None = None,
    model_args: Mapping[str, JSONValue] | None = None,
) -> JSONObject:
    """The manifest as a job knows it before scoring, every key in its place: the commit,
    the devices and the end time are completed by :func:`complete_manifest`."""

    return {
        "taxpraben": {"version": package_version(), "git_commit": None},
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": package_versions(),
        "devices": list(parse_devices(scoring.device)),
        "data_files": data_files(loaded),
        "task_specs": task_specs(registry, list(loaded.records)),
        "prompt_template_sha256": prompt_template_sha256(),
        "generation": dict(generation) if generation is not None else None,
        "model_args": dict(model_args) if model_args is not None else None,
        "limit": loaded.limit,
        "scorers": scorer_revisions(scoring),
        "judge": None,
        "scorer_setup": {},  # completed with what the scorers loaded as (complete_manifest)
        "paper_scorer": None,
        "started_at": started_at,
        "finished_at": started_at,
    }


def complete_manifest(manifest: Mapping[str, JSONValue], meta: Mapping[str, JSONValue]) -> JSONObject:
    """``manifest`` with what scoring knows, from the results' ``meta``: the source commit
    (``git_hash``), the devices the scorers loaded on, the scorer setup (:func:`scorer_setup`,
    and whether it is the paper's), and the end time."""
    out = dict(manifest)
    out["taxpraben"] = {**out.get("taxpraben", {}), "git_commit": meta.get("git_hash")}
    devices = scorer_devices(meta.get("scorers") or {}, ",".join(out.get("devices") or ["auto"]))
    out["devices"] = devices
    revisions = out.get("scorers")
    out["scorer_setup"] = scorer_setup(meta.get("scorers") or {}, revisions if isinstance(revisions, Mapping) else {})
    out["paper_scorer"] = is_paper_scorer(out["scorer_setup"])
    if meta.get("finished_at"):
        out["finished_at"] = meta["finished_at"]
    return out


"""Which devices a model runs on: one resolver for the scorers and the ``hf:`` backend.

The ``--device`` value is ``auto``, ``cpu``, ``mps``, ``cuda``, ``cuda:N``, or a
comma-separated list of one kind (``cuda:0,cuda:1``; ``cpu,cpu`` is two CPU workers, which
the tests use to exercise the multi-device path without a GPU).

- :func:`resolve_devices` (the scorers): ``cuda`` means every visible GPU, and so does
  ``auto`` when CUDA is available; on a single GPU that is ``("cuda",)``, exactly what one
  device always meant. Each entry of the result is one worker with its own copy of the model.
- :func:`resolve_device` (one model, the ``hf:`` backend): ``auto`` and ``cuda`` stay the
  current CUDA device as before; of a list, the first entry.

Errors (:class:`DeviceError`, a ``ValueError``) name the value and what would work: an
unknown name, CUDA asked for where torch sees none, an index past the visible GPUs.
``parse_devices`` checks the syntax alone, without importing torch.
"""

from __future__ import annotations

import os
import re

__all__ = ["DeviceError", "expand_devices", "parse_devices", "resolve_device", "resolve_devices"]

_ENTRY = re.compile(r"^(cpu|mps|cuda)(?::(\d+))?$")
_USAGE = "use auto, cpu, mps, cuda (every visible GPU), cuda:N, or a list such as cuda:0,cuda:1"


class DeviceError(ValueError):
    """A ``--device`` value that cannot be used here; the message says why and what would."""


def parse_devices(spec: str) -> tuple[str, ...]:
    """The entries of a device value, lower-cased and checked for syntax (no torch needed).

    ``auto`` and bare ``cuda`` must stand alone (each already means a set of devices); the
    entries of a list must be of one kind, since the scorers split work evenly between them.
    Raises :class:`DeviceError` otherwise.
    """
    entries = tuple(part.strip().lower() for part in spec.split(","))
    if entries == ("auto",):
        return entries
    if len(entries) > 1 and ("cuda" in entries or "auto" in entries):
        raise DeviceError(
            f"--device {spec!r}: 'auto' and 'cuda' stand alone (cuda is every visible GPU); "
            "to choose GPUs, list them by index: cuda:0,cuda:1"
        )
    for entry in entries:
        match = _ENTRY.match(entry)
        if match is None:
            raise DeviceError(f"unknown device {entry!r} in --device {spec!r}: {_USAGE}")
        if match.group(1) == "cpu" and match.group(2) is not None:
            raise DeviceError(f"unknown device {entry!r} in --device {spec!r}: the CPU has no index; use cpu")
    if len(entries) > 1:
        kinds = {entry.split(":", 1)[0] for entry in entries}
        if len(kinds) > 1:
            raise DeviceError(
                f"--device {spec!r} mixes {' and '.join(sorted(kinds))}: the work is split evenly "
                "between the listed devices, so list devices of one kind"
            )
    return entries


def expand_devices(
    spec: str, cuda_count: int, mps_available: bool, *, every_gpu: bool = True
) -> tuple[str, ...]:
    """The devices a value means on a machine with ``cuda_count`` visible GPUs (pure).

    ``every_gpu``: ``cuda`` (and ``auto`` with CUDA) is every visible GPU (``cuda:0`` ...)
    when there are several; else the current CUDA device, ``cuda``. Raises
    :class:`DeviceError` for a value the machine cannot serve.
    """
    entries = parse_devices(spec)
    if entries == ("auto",):
        if cuda_count > 0:
            entries = ("cuda",)
        else:
            return ("mps",) if mps_available else ("cpu",)
    if entries == ("cuda",):
        _need_cuda(spec, cuda_count)
        if every_gpu and cuda_count > 1:
            return tuple(f"cuda:{i}" for i in range(cuda_count))
        return entries
    for entry in entries:
        kind, _, index = entry.partition(":")
        if kind == "mps" and not mps_available:
            raise DeviceError(f"--device {spec!r}: this torch has no MPS (Apple GPU) support; {_USAGE}")
        if kind == "cuda":
            _need_cuda(spec, cuda_count)
            if int(index) >= cuda_count:
                raise DeviceError(
                    f"--device {spec!r}: {entry} is not a visible GPU; torch sees {cuda_count} "
                    f"(cuda:0 to cuda:{cuda_count - 1}){_visible_note()}"
                )
    return entries


def resolve_devices(spec: str = "auto") -> tuple[str, ...]:
    """The scorers' devices for a ``--device`` value on this machine (see the module doc)."""
    return expand_devices(spec, *_machine(spec))


def resolve_device(spec: str = "auto") -> str:
    """The one device a single model runs on: ``auto`` -> ``cuda`` if available, else
    ``mps``, else ``cpu``; ``cuda`` as given; of a list, the first entry."""
    return expand_devices(spec, *_machine(spec), every_gpu=False)[0]


def _machine(spec: str) -> tuple[int, bool]:
    """(visible CUDA devices, MPS available); torch is imported only after the syntax check,
    so that a typo is reported even where torch is slow to import."""
    parse_devices(spec)
    import torch

    cuda = torch.cuda.device_count() if torch.cuda.is_available() else 0
    mps = getattr(torch.backends, "mps", None)
    return cuda, bool(mps is not None and mps.is_available())


def _need_cuda(spec: str, cuda_count: int) -> None:
    if cuda_count == 0:
        raise DeviceError(
            f"--device {spec!r} asks for CUDA, but torch sees no CUDA device (a CPU-only torch "
            f"build, no NVIDIA driver, or CUDA_VISIBLE_DEVICES empty){_visible_note()}; "
            "use --device cpu or auto"
        )


def _visible_note() -> str:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return f"; CUDA_VISIBLE_DEVICES={visible}" if visible is not None else ""


"""The one device resolver (``taxpraben.compute.devices``): what each ``--device`` value means on a
machine of 0, 1 or several GPUs, and the errors a user reads."""

from __future__ import annotations

import pytest
import torch

from taxpraben.compute import devices
from taxpraben.compute.devices import (
    DeviceError,
    expand_devices,
    parse_devices,
    resolve_device,
    resolve_devices,
)
from taxpraben.models.base import ModelSpecError
from taxpraben.models.hf import HFBackend

# (value, visible GPUs, MPS available, scorers' devices, one model's device)
CASES = [
    ("auto", 0, False, ("cpu",), "cpu"),
    ("auto", 0, True, ("mps",), "mps"),
    ("auto", 1, True, ("cuda",), "cuda"),  # one GPU: exactly what auto always meant
    ("auto", 3, False, ("cuda:0", "cuda:1", "cuda:2"), "cuda"),
    ("cuda", 1, False, ("cuda",), "cuda"),
    ("cuda", 2, False, ("cuda:0", "cuda:1"), "cuda"),
    ("cuda:1", 2, False, ("cuda:1",), "cuda:1"),
    ("cuda:1, cuda:0", 2, False, ("cuda:1", "cuda:0"), "cuda:1"),
    ("CUDA:0,cuda:0", 1, False, ("cuda:0", "cuda:0"), "cuda:0"),  # two workers on one GPU
    ("cpu", 4, True, ("cpu",), "cpu"),
    ("cpu,cpu", 0, False, ("cpu", "cpu"), "cpu"),
    ("mps", 0, True, ("mps",), "mps"),
]


@pytest.mark.parametrize(("spec", "gpus", "mps", "scorers", "single"), CASES)
def test_values_mean_these_devices(spec: str, gpus: int, mps: bool, scorers: tuple[str, ...], single: str) -> None:
    assert expand_devices(spec, gpus, mps) == scorers
    assert expand_devices(spec, gpus, mps, every_gpu=False)[0] == single


@pytest.mark.parametrize(
    ("spec", "gpus", "message"),
    [
        ("gpu", 1, "unknown device 'gpu' in --device 'gpu': use auto, cpu, mps, cuda"),
        ("cuda:x", 1, "unknown device 'cuda:x'"),
        ("cpu:0", 0, "the CPU has no index"),
        ("cuda:0,", 1, "unknown device ''"),
        ("cuda,cuda:1", 2, "'auto' and 'cuda' stand alone"),
        ("auto,cpu", 2, "'auto' and 'cuda' stand alone"),
        ("cuda:0,cpu", 1, "mixes cpu and cuda"),
        ("cuda", 0, "asks for CUDA, but torch sees no CUDA device"),
        ("cuda:0", 0, "asks for CUDA, but torch sees no CUDA device"),
        ("cuda:0,cuda:2", 2, "cuda:2 is not a visible GPU; torch sees 2 (cuda:0 to cuda:1)"),
        ("mps", 0, "no MPS"),
    ],
)
def test_unusable_values_say_why(spec: str, gpus: int, message: str) -> None:
    with pytest.raises(DeviceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        expand_devices(spec, gpus, mps_available=False)


def test_the_visible_devices_variable_is_named_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    with pytest.raises(DeviceError, match="CUDA_VISIBLE_DEVICES=3,5"):
        expand_devices("cuda:2", 2, mps_available=False)


def test_syntax_is_checked_without_a_machine() -> None:
    assert parse_devices(" Cuda:0 ,cuda:1") == ("cuda:0", "cuda:1")
    assert parse_devices("auto") == ("auto",)
    with pytest.raises(DeviceError):
        parse_devices("tpu")


def test_this_machine_is_asked_through_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert resolve_devices("cuda") == ("cuda:0", "cuda:1")
    assert resolve_device("cuda") == "cuda"
    assert resolve_device("cuda:1,cuda:0") == "cuda:1"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_devices("auto") == ("cpu",) and resolve_device("auto") == "cpu"
    with pytest.raises(DeviceError, match="no CUDA device"):
        resolve_devices("cuda:1")


def test_a_typo_is_reported_before_torch_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_cuda_query() -> bool:
        raise AssertionError("torch was asked about CUDA for a value that cannot be right")

    monkeypatch.setattr(torch.cuda, "is_available", no_cuda_query)
    with pytest.raises(DeviceError, match="unknown device"):
        devices.resolve_devices("cdua")


def test_hf_backend_refuses_a_bad_device_as_a_model_spec_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelSpecError, match="hf:some/model: unknown device 'gpu0'"):
        HFBackend("some/model", device="gpu0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    backend = HFBackend("some/model", device="cuda:1")  # well-formed: checked when it loads
    with pytest.raises(ModelSpecError, match="asks for CUDA"):
        backend._load()


@pytest.mark.parametrize("device", ["gpu", "cuda,auto", "cpu,cuda:0"])
def test_scoring_settings_refuse_a_bad_device_before_anything_runs(device: str) -> None:
    from taxpraben.scoring import ScoringSettings

    with pytest.raises(ValueError, match="--device"):
        ScoringSettings(device=device)

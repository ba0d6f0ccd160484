"""The ``--model SPEC`` factory: a backend by its prefix, its module imported only when used."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from taxpraben.models import factory
from taxpraben.models.base import Completion, GenerationConfig, ModelSpecError, Request
from taxpraben.models.factory import BackendOptions, backend_kinds, create_backend, register_backend


def test_the_four_kinds_are_known_and_an_unknown_one_is_refused_with_them() -> None:
    assert backend_kinds() == ("openai", "hf", "replay", "baseline")
    with pytest.raises(ModelSpecError, match=r"unknown backend 'vllm'.*use one of openai, hf, replay, baseline"):
        create_backend("vllm:qwen")
    with pytest.raises(ModelSpecError, match="must look like KIND:NAME"):
        create_backend("baseline:")


@dataclass
class EchoBackend:
    """A toy backend: answers each request with its last message."""

    model: str
    kind: str = "echo"
    endpoint: str | None = None
    batch_size: int = 1
    cacheable: bool = False

    @property
    def spec(self) -> str:
        return f"echo:{self.model}"

    def shares_runs(self, config: GenerationConfig) -> bool:
        return True

    async def generate(self, requests: Sequence[Request], config: GenerationConfig) -> list[Completion]:
        return [Completion(text=r.messages[-1]["content"]) for r in requests]

    async def aclose(self) -> None:
        return None


def test_a_backend_registered_by_prefix_is_built_with_the_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "_BUILDERS", dict(factory._BUILDERS))  # registration undone after the test
    seen: list[BackendOptions] = []

    @register_backend("echo")
    def build(name: str, options: BackendOptions) -> EchoBackend:
        seen.append(options)
        return EchoBackend(name, batch_size=options.concurrency)

    backend = create_backend("ECHO: tiny ", concurrency=3, device="cpu")
    assert isinstance(backend, EchoBackend)
    assert (backend.spec, backend.batch_size) == ("echo:tiny", 3)
    assert seen == [BackendOptions(concurrency=3, device="cpu")]
    assert backend_kinds()[-1] == "echo"


def test_a_baseline_loads_neither_torch_nor_the_http_client() -> None:
    code = (
        "import sys, json\n"
        "from taxpraben.models.factory import create_backend\n"
        "backend = create_backend('baseline:oracle')\n"
        "print(json.dumps([backend.spec, [m in sys.modules for m in ('torch', 'transformers', 'aiohttp',"
        " 'taxpraben.models.hf', 'taxpraben.models.openai')]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["baseline:oracle", [False] * 5]

"""The ``--model SPEC`` factory: the backend that a spec's prefix names.

Specs: ``openai:MODEL``, ``hf:PATH_OR_ID``, ``replay:FILE``, ``baseline:NAME``. One builder per
prefix, registered with :func:`register_backend`; a builder imports its backend's module only
when it is called, so that ``baseline:`` never loads torch and ``hf:`` never loads aiohttp, and
so that the protocol module (``models.base``) imports no backend: the arrows run from the
backends and this factory to the protocol, never back.

Adding a backend: a module with a class that follows :class:`~taxpraben.models.base.Backend`,
and one builder here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from taxpraben.models.base import Backend, ModelSpecError
from taxpraben.models.defaults import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_S
from taxpraben.models.model_args import parse_model_args, refuse_any

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject


@dataclass(frozen=True)
class BackendOptions:
    """The command line's backend settings; each builder reads the ones that apply to it.

    ``base_url``, ``api_key_env``, ``timeout`` (per attempt; streamed: the cap of the
    first-token deadline), ``stream``, ``idle_timeout`` (None: the backend's default) and
    ``concurrency`` (connection pool size) apply to ``openai``; ``concurrency`` is the batch
    size and ``device`` the device of ``hf``. ``model_args`` (``--model-args``, parsed) are
    checked by the backend against the keys it declares; backends without any refuse them.
    """

    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT_S
    device: str = "auto"
    stream: bool = True
    idle_timeout: float | None = None
    model_args: JSONObject = field(default_factory=dict)
    #: ``--chat-template``/``--no-chat-template`` (hf: only); None: not given.
    chat_template: bool | None = None
    #: False when nothing will be sent (``--batch-file-only`` writes a file): a missing API
    #: key is then no error.
    needs_key: bool = True


#: Builds a backend from the part of the spec after the colon and the options.
BackendBuilder = Callable[[str, BackendOptions], Backend]

_BUILDERS: dict[str, BackendBuilder] = {}


def register_backend(kind: str) -> Callable[[BackendBuilder], BackendBuilder]:
    """Decorator: ``builder`` makes the backends of specs ``KIND:...`` (``kind`` lower case)."""

    def register(builder: BackendBuilder) -> BackendBuilder:
        _BUILDERS[kind] = builder
        return builder

    return register


def backend_kinds() -> tuple[str, ...]:
    """The spec prefixes known, in the order they were registered."""
    return tuple(_BUILDERS)


def split_spec(spec: str) -> tuple[str, str]:
    """``"openai:gpt-4o"`` -> ``("openai", "gpt-4o")``; ModelSpecError for an unknown kind
    or a spec without a name."""
    kinds = ", ".join(backend_kinds())
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ModelSpecError(
            f"model spec {spec!r} must look like KIND:NAME with KIND one of "
            f"{kinds} (e.g. openai:deepseek-chat, hf:Qwen/Qwen2.5-0.5B-Instruct)"
        )
    kind = kind.strip().lower()
    if kind not in _BUILDERS:
        raise ModelSpecError(f"unknown backend {kind!r} in model spec {spec!r}; use one of {kinds}")
    return kind, rest.strip()


def create_backend(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float = DEFAULT_TIMEOUT_S,
    device: str = "auto",
    stream: bool = True,
    idle_timeout: float | None = None,
    model_args: str | None = None,
    needs_key: bool = True,
    chat_template: bool | None = None,
) -> Backend:
    """Build the backend a ``--model`` spec names (the options as in :class:`BackendOptions`;
    ``model_args`` is the text of ``--model-args``).

    Raises ModelSpecError for a spec, URL, key or model argument that cannot be used.
    """
    kind, name = split_spec(spec)
    options = BackendOptions(
        base_url=base_url,
        api_key_env=api_key_env,
        concurrency=concurrency,
        timeout=timeout,
        device=device,
        stream=stream,
        idle_timeout=idle_timeout,
        model_args=parse_model_args(model_args),
        needs_key=needs_key,
        chat_template=chat_template,
    )
    if chat_template is not None and kind != "hf":
        flag = "--chat-template" if chat_template else "--no-chat-template"
        raise ModelSpecError(
            f"{flag} is for hf: models only (taxpraben applies a chat template only there; an openai: "
            "server applies its own)"
        )
    return _BUILDERS[kind](name, options)


@register_backend("openai")
def _openai(name: str, options: BackendOptions) -> Backend:
    from taxpraben.models.openai import OpenAIBackend

    return OpenAIBackend.from_env(
        name,
        base_url=options.base_url,
        api_key_env=options.api_key_env,
        concurrency=options.concurrency,
        timeout=options.timeout,
        stream=options.stream,
        model_args=options.model_args,
        needs_key=options.needs_key,
        **({"idle_timeout": options.idle_timeout} if options.idle_timeout is not None else {}),
    )


@register_backend("hf")
def _hf(name: str, options: BackendOptions) -> Backend:
    from taxpraben.models.hf import HFBackend

    return HFBackend(name, batch_size=options.concurrency, device=options.device, model_args=options.model_args,
                     chat_template=options.chat_template)  # fmt: skip


@register_backend("replay")
def _replay(name: str, options: BackendOptions) -> Backend:
    from taxpraben.models.replay import ReplayBackend

    refuse_any(options.model_args, "replay", "it reads answers from a predictions file; no model is loaded or served")
    return ReplayBackend(name)


@register_backend("baseline")
def _baseline(name: str, options: BackendOptions) -> Backend:
    from taxpraben.models.baselines import BaselineBackend

    refuse_any(options.model_args, "baseline", "its answers are made without a model")
    return BaselineBackend(name)

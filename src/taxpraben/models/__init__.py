"""Model backends behind one protocol: ``openai:``, ``hf:``, ``replay:`` and ``baseline:``."""

from taxpraben.models.base import (
    Backend,
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    Request,
    build_request,
    create_backend,
    parse_gen_kwargs,
    redact_url,
)

__all__ = [
    "Backend",
    "BackendError",
    "Completion",
    "GenerationConfig",
    "ModelSpecError",
    "Request",
    "build_request",
    "create_backend",
    "parse_gen_kwargs",
    "redact_url",
]

"""Model backends behind one protocol: ``openai:``, ``hf:``, ``replay:`` and ``baseline:``.

``base`` holds the protocol and the values that cross it; ``factory`` builds the backend a
``--model`` spec names, importing its module only then.
"""

from taxpraben.models.base import (
    Backend,
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    Request,
    build_request,
    parse_gen_kwargs,
    redact_url,
)
from taxpraben.models.factory import create_backend, register_backend

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
    "register_backend",
]

"""A prompt too long for the model is said before it is sent (``run``).

The limit is the backend's context when it states one (``context_tokens``), else
:data:`PROMPT_WARN_TOKENS`, the size this harness warns at for a model whose context it does
not know (documented in the README). The prompt is still sent as it is: the server refuses
it or cuts it, and that is what gets scored. One warning per task (its first such prompt),
with its size, so that a data file with a 15 MB record does not go out unremarked.

The check costs a length per prompt: a prompt of no more characters than the limit has no
more tokens than it (a token is at least one character), and only a longer one is estimated
(``tokens.approximate_prompt_tokens``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from taxpraben.costs.tokens import approximate_prompt_tokens
from taxpraben.models.base import Request

#: Tokens past which a prompt is said to be too long when the model's context is unknown:
#: 128K, the context of the largest common open models (Qwen2.5 with YaRN, Llama 3.1).
PROMPT_WARN_TOKENS = 128_000


def warn_long_prompts(
    requests: Iterable[Request], warn: Callable[[str], None], context_tokens: int | None = None
) -> Iterator[Request]:
    """``requests`` unchanged, calling ``warn`` for the first prompt of each task past the
    limit (``context_tokens``, the model's context when known, else :data:`PROMPT_WARN_TOKENS`)."""
    limit = context_tokens or PROMPT_WARN_TOKENS
    past = (f"past the model's context of {limit:,} tokens" if context_tokens else
            f"past {limit:,} tokens, the size taxpraben warns at when the model's context is unknown")  # fmt: skip
    said: set[str] = set()
    for request in requests:
        task = request.record.task
        if task not in said and request.run == 0:
            chars = sum(len(m["content"]) for m in request.messages)
            tokens = approximate_prompt_tokens(request.messages) if chars > limit else 0
            if tokens > limit:
                said.add(task)
                warn(f"{task} item {request.record.id}: its prompt is about {tokens:,} tokens ({chars:,} characters), "
                     f"{past}; it is sent as it is, and the server may refuse or cut it "
                     "(the first such prompt of this task is named).")  # fmt: skip
        yield request

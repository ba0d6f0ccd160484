"""The API key of an OpenAI-compatible endpoint: where it is read from, and what a refusal says.

The key is read from the environment (``OPENAI_API_KEY`` or the variable named by
``--api-key-env``) and may be absent only for a local endpoint (vLLM, SGLang and Ollama
servers need none). Messages name the variable, never the key.

A key is meant for its endpoint: the judge (``--judge``) is given the generation's key only
when it asks the same endpoint (:func:`judge_key_env`); at another one it needs its own
variable, ``--judge-api-key-env``.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from urllib.parse import urlsplit

from taxpraben.models.base import ModelSpecError, redact_url
from taxpraben.models.defaults import BASE_URL_ENV, DEFAULT_BASE_URL
from taxpraben.models.endpoints import split_base_urls

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


def is_local_endpoint(base_url: str) -> bool:
    """True for endpoints that usually need no key: loopback, private or link-local
    addresses, ``localhost``, ``*.local`` and single-label hosts (a container's name)."""
    host = (urlsplit(base_url).hostname or "").lower()
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or host.endswith((".localhost", ".local")) or "." not in host
    return address.is_loopback or address.is_private or address.is_link_local


def read_api_key(api_key_env: str | None, base_url: str) -> tuple[str | None, str]:
    """The key for ``base_url`` (one or several base URLs) and the variable it was read from.

    A variable named with ``--api-key-env`` must be set. The default one may be absent only
    when every endpoint is local (:func:`is_local_endpoint`); for any other a missing key is
    a ModelSpecError, before anything is sent.
    """
    env_name = api_key_env or DEFAULT_KEY_ENV
    key = os.environ.get(env_name)
    if api_key_env and not key:
        raise ModelSpecError(
            f"--api-key-env {env_name}: environment variable {env_name} is not set"
        )
    if not key and not all(is_local_endpoint(u) for u in split_base_urls(base_url)):
        raise ModelSpecError(
            f"no API key for {redact_url(base_url)}: environment variable {env_name} is not set. "
            f"Set it, or name the variable that holds the key with --api-key-env "
            f"(local endpoints such as http://localhost:8000/v1 need none)."
        )
    return key, env_name


def key_refused(where: str | None, message: str, key_env: str, key_sent: bool) -> str:
    """Why ``where`` answered 401/403 (``message``), naming the variable the key came from."""
    if key_sent:
        return (
            f"{where} refused the API key read from ${key_env} ({message}). "
            f"Check the key, or name the variable that holds the right one with --api-key-env."
        )
    return (
        f"{where} requires an API key and none was sent: ${key_env} is not set "
        f"({message}). Set it, or name the variable that holds the key with --api-key-env."
    )


def default_base_urls() -> list[str]:
    """Where an ``openai:`` model without ``--base-url`` is asked: ``$OPENAI_BASE_URL``, else
    the OpenAI API."""
    return split_base_urls(os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL)


def same_endpoint(url: str, others: Sequence[str]) -> bool:
    """True when ``url`` is one of ``others`` (base URLs; compared without a trailing ``/``
    and with the scheme and host in lower case)."""

    def canonical(u: str) -> str:
        parts = urlsplit(u.strip().rstrip("/"))
        return f"{parts.scheme.lower()}://{(parts.netloc or '').lower()}{parts.path}"

    return canonical(url) in {canonical(o) for o in others}


def judge_key_env(
    judge_url: str, generation_urls: Sequence[str], judge_api_key_env: str | None, generation_key_env: str | None
) -> str:
    """The variable the judge's API key is read from.

    ``--judge-api-key-env`` when given. Else the generation's variable (``--api-key-env``,
    default ``OPENAI_API_KEY``), but only when the judge asks one of the generation's
    endpoints: a key is not sent to another host. At another endpoint, while that variable
    holds a key, ModelSpecError (before anything is sent) asking for ``--judge-api-key-env``;
    a variable that holds none has nothing to leak (a local judge needs no key).
    """
    if judge_api_key_env:
        return judge_api_key_env
    env_name = generation_key_env or DEFAULT_KEY_ENV
    if same_endpoint(judge_url, generation_urls) or not os.environ.get(env_name):
        return env_name
    generation = ", ".join(redact_url(u) for u in generation_urls)
    raise ModelSpecError(
        f"the judge's endpoint {redact_url(judge_url)} is not the generation's ({generation}), so the key in "
        f"${env_name} is not sent to it: name the variable that holds the judge's key with --judge-api-key-env "
        f"(nothing was sent)"
    )

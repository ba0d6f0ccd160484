"""``--model-args`` of ``hf:`` (:data:`HF_MODEL_ARGS`): read and checked when the backend is
built, before anything is loaded (:func:`load_args`), and turned into ``from_pretrained``'s
arguments when it loads (:func:`model_kwargs`): the dtype, a device map and its memory limits, the
revision, the attention implementation, 8-bit or 4-bit loading (bitsandbytes) and, opted into,
the repository's own code (``trust_remote_code``)."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from taxpraben.models.model_args import FLAG as MODEL_ARGS_FLAG
from taxpraben.models.model_args import ModelArgsError, refuse_unknown

if TYPE_CHECKING:
    from taxpraben.results.json_value import JSONObject, JSONValue

#: The ``--model-args`` keys of ``hf:``, declared once (what each takes).
HF_MODEL_ARGS: dict[str, str] = {
    "dtype": "auto|float32|float16|bfloat16 (default auto: the checkpoint's own)",
    "device_map": "auto or a device (cpu, cuda:0, 0); needs accelerate",
    "revision": "a branch, tag or commit of the hub repository",
    "attn_implementation": "sdpa, eager, flash_attention_2, ... (default sdpa where the model has it)",
    "max_memory": "per device, as a JSON object or 0=20GiB;cpu=30GiB (implies device_map=auto)",
    "trust_remote_code": "true runs the model repository's own Python code (opt-in)",
    "load_in_8bit": "true loads the weights in 8 bits (needs bitsandbytes)",
    "load_in_4bit": "true loads the weights in 4 bits (needs bitsandbytes)",
}


DTYPES = ("auto", "float32", "float16", "bfloat16")


@dataclass(frozen=True)
class LoadArgs:
    """``--model-args`` of ``hf:``, checked: what ``from_pretrained`` gets.

    ``model`` holds the model's keyword arguments without the quantization (``quantize``:
    None, ``"8bit"`` or ``"4bit"``, turned into a ``BitsAndBytesConfig`` when loading);
    ``tokenizer`` the tokenizer's (the revision and ``trust_remote_code``)."""

    model: JSONObject = field(default_factory=dict)
    tokenizer: JSONObject = field(default_factory=dict)
    quantize: str | None = None
    #: What the user should know before the model is loaded (trust_remote_code).
    notices: tuple[str, ...] = ()

    @property
    def placed(self) -> bool:
        """True when transformers places the weights (a device map or quantization), so the
        backend must not move the model itself."""
        return "device_map" in self.model or self.quantize is not None


def _is_installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _flag(args: Mapping[str, JSONValue], key: str) -> bool:
    value = args.get(key, False)
    if not isinstance(value, bool):
        raise ModelArgsError(f"{MODEL_ARGS_FLAG}: {key} must be true or false, got {value!r}")
    return value


def parse_max_memory(value: JSONValue) -> dict[int | str, int | str]:
    """``max_memory`` as ``from_pretrained`` takes it: device -> limit, GPU indices as ints.
    From a JSON object (or dotted keys) or ``0=20GiB;cpu=30GiB`` (``,`` also separates)."""
    if isinstance(value, str):
        pairs: JSONObject = {}
        for part in value.replace(";", ",").split(","):
            device, sep, limit = part.partition("=")
            if not sep or not device.strip() or not limit.strip():
                raise ModelArgsError(
                    f"{MODEL_ARGS_FLAG}: max_memory {value!r}: {part.strip()!r} is not DEVICE=LIMIT "
                    "(e.g. max_memory='0=20GiB,cpu=30GiB')"
                )
            pairs[device.strip()] = limit.strip()
        value = pairs
    if not isinstance(value, Mapping) or not value:
        raise ModelArgsError(
            f"{MODEL_ARGS_FLAG}: max_memory must name devices and limits, e.g. max_memory='0=20GiB,cpu=30GiB', "
            f"got {value!r}"
        )
    limits: dict[int | str, int | str] = {}
    for device, limit in value.items():
        if not isinstance(limit, (str, int)) or isinstance(limit, bool):
            raise ModelArgsError(f"{MODEL_ARGS_FLAG}: max_memory: the limit of {device!r} must be like 20GiB")
        name = str(device).strip()
        limits[int(name) if name.isdigit() else name] = limit
    return limits


def load_args(model: str, args: Mapping[str, JSONValue]) -> LoadArgs:
    """Check ``--model-args`` for ``hf:MODEL`` and turn them into ``from_pretrained``'s
    arguments; ModelArgsError (naming the key and what to do) for a key or value that cannot
    be used, and for a missing package (bitsandbytes, accelerate), before anything loads."""
    refuse_unknown(args, HF_MODEL_ARGS, "hf")
    kwargs: JSONObject = {}
    tokenizer: JSONObject = {}
    notices: list[str] = []
    if "dtype" in args:
        if args["dtype"] not in DTYPES:
            raise ModelArgsError(f"{MODEL_ARGS_FLAG}: dtype {args['dtype']!r} is not one of {', '.join(DTYPES)}")
        kwargs["dtype"] = args["dtype"]
    for key in ("revision", "attn_implementation"):
        if key in args:
            value = args[key]
            if not isinstance(value, (str, int)) or isinstance(value, bool) or not str(value).strip():
                raise ModelArgsError(f"{MODEL_ARGS_FLAG}: {key} must be a name, got {value!r}")
            kwargs[key] = str(value).strip()
    if "revision" in kwargs:
        tokenizer["revision"] = kwargs["revision"]
    if "device_map" in args:
        device_map = args["device_map"]
        if isinstance(device_map, bool) or not isinstance(device_map, (str, int)):
            raise ModelArgsError(f"{MODEL_ARGS_FLAG}: device_map must be auto or a device, got {device_map!r}")
        kwargs["device_map"] = device_map
    if "max_memory" in args:
        kwargs["max_memory"] = parse_max_memory(args["max_memory"])
        kwargs.setdefault("device_map", "auto")  # transformers reads max_memory only with a device map
    if _flag(args, "trust_remote_code"):
        kwargs["trust_remote_code"] = tokenizer["trust_remote_code"] = True
        notices.append(
            f"hf:{model}: trust_remote_code=true executes the Python code of the model repository "
            f"(its modeling and tokenizer files) on this machine; use it only for a repository you trust."
        )
    bits = [b for b in ("8bit", "4bit") if _flag(args, f"load_in_{b}")]
    if len(bits) > 1:
        raise ModelArgsError(f"{MODEL_ARGS_FLAG}: load_in_8bit and load_in_4bit exclude each other: choose one")
    if bits and not _is_installed("bitsandbytes"):
        raise ModelArgsError(
            f"{MODEL_ARGS_FLAG}: load_in_{bits[0]} needs bitsandbytes: pip install bitsandbytes accelerate"
        )
    needs_accelerate = "device_map" in kwargs or bits
    if needs_accelerate and not _is_installed("accelerate"):
        what = "device_map/max_memory" if "device_map" in kwargs else f"load_in_{bits[0]}"
        raise ModelArgsError(
            f"{MODEL_ARGS_FLAG}: {what} needs accelerate: pip install accelerate (one device only: use --device instead)"
        )
    return LoadArgs(model=kwargs, tokenizer=tokenizer, quantize=bits[0] if bits else None, notices=tuple(notices))


def model_kwargs(args: LoadArgs, device: str) -> dict[str, Any]:
    """``from_pretrained``'s arguments of ``args``: the dtype as torch's (transformers 5
    calls it ``dtype``; ``torch_dtype`` is its deprecated name), quantization as a
    ``BitsAndBytesConfig`` (placed on ``device`` unless a device map says otherwise)."""
    import torch

    kwargs: dict[str, Any] = dict(args.model)
    dtype = kwargs.get("dtype", "auto")
    kwargs["dtype"] = dtype if dtype == "auto" else getattr(torch, dtype)
    if args.quantize is not None:
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(**{f"load_in_{args.quantize}": True})
        kwargs.setdefault("device_map", device)
    return kwargs

"""``--model-args``: parsed as lm-eval does, checked per backend before anything is loaded or
sent, passed to ``from_pretrained`` (hf:) or into the request body (openai:), recorded in
results.json and part of the cache key (and only when given)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.cli_data import cli_app, quarterly_calc_rows, write_data
from helpers.mock_openai_server import MockServerThread
from taxpraben.commands.run import run
from taxpraben.models.base import GenerationConfig, build_request
from taxpraben.models.factory import create_backend
from taxpraben.models.hf import HFBackend
from taxpraben.models.hf_args import load_args, parse_max_memory
from taxpraben.models.model_args import ModelArgsError, parse_model_args, split_top_level
from taxpraben.models.openai import SET_BY_TAXPRABEN, OpenAIBackend
from taxpraben.options import ModelOptions, check_options
from taxpraben.records import Record
from taxpraben.run.runner import generation_key

APP = cli_app(run=run)
ROWS = quarterly_calc_rows(3)
RECORD = Record(task="TaxCalc", id="1", query="计算应纳税额", answer="1")
CONFIG = GenerationConfig(max_tokens=8)
BASE_URL = "http://127.0.0.1:9/v1"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(APP, ["run", *args], catch_exceptions=False)
    return result.exit_code, result.output


# ---------------------------------------------------------------------------- parsing


def test_values_are_json_scalars_where_they_parse_else_text() -> None:
    args = parse_model_args("dtype=bfloat16,trust_remote_code=true,top_k=20,min_p=0.05,seed_x=null,name=a b")
    assert args == {"dtype": "bfloat16", "trust_remote_code": True, "top_k": 20, "min_p": 0.05,
                    "seed_x": None, "name": "a b"}  # fmt: skip
    assert parse_model_args(None) == {} and parse_model_args("  ") == {}
    assert parse_model_args("revision=0123abc,x=1e3") == {"revision": "0123abc", "x": 1000.0}


def test_a_dotted_key_nests() -> None:
    assert parse_model_args("chat_template_kwargs.enable_thinking=false") == {
        "chat_template_kwargs": {"enable_thinking": False}
    }
    assert parse_model_args("a.b=1,a.c.d=x,e=2") == {"a": {"b": 1, "c": {"d": "x"}}, "e": 2}


def test_commas_inside_brackets_and_quotes_stay_in_their_value() -> None:
    text = 'max_memory={"0": "20GiB", "cpu": "30GiB"},stop=["。", "\\n"],q=\'0=20GiB,cpu=30GiB\',r="a,b"'
    assert parse_model_args(text) == {
        "max_memory": {"0": "20GiB", "cpu": "30GiB"},
        "stop": ["。", "\n"],
        "q": "0=20GiB,cpu=30GiB",
        "r": "a,b",
    }
    assert split_top_level("a=(1,2),b=[3,{4,5}]") == ["a=(1,2)", "b=[3,{4,5}]"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dtype", "'dtype' is not KEY=VALUE"),
        ("=1", "'=1' is not KEY=VALUE"),
        ("a=1,a=2", "'a' is given twice"),
        ("a=1,a.b=2", "'a' is already given a value"),
        ("a..b=1", "empty part in the dotted key"),
        ("a=[1,2", "missing ]"),
        ("a='x", "missing '"),
    ],
)
def test_unreadable_text_is_refused_with_the_pair(text: str, message: str) -> None:
    with pytest.raises(ModelArgsError, match=message.replace("[", r"\[").replace(".", r"\.")):
        parse_model_args(text)


def test_the_option_checks_the_text_when_parsed() -> None:
    check_options(ModelOptions(model="hf:x", model_args="dtype=float16"))
    with pytest.raises(ValueError, match="--model-args: 'dtype' is not KEY=VALUE"):
        check_options(ModelOptions(model="hf:x", model_args="dtype"))
    code, output = invoke("--model", "baseline:oracle", "--data", "sample", "--model-args", "a=1,a=2")
    assert code == 2 and "given twice" in output


# ---------------------------------------------------------------------------- per backend


def test_hf_unknown_key_is_refused_with_the_nearest_valid_one() -> None:
    with pytest.raises(ModelArgsError, match="unknown key 'dtyp' for hf: models; did you mean 'dtype'\\?"):
        create_backend("hf:/nowhere", model_args="dtyp=float16")
    with pytest.raises(ModelArgsError, match="did you mean 'attn_implementation'"):
        create_backend("hf:/nowhere", model_args="attn_implmentation=eager")


def test_hf_values_are_checked() -> None:
    with pytest.raises(ModelArgsError, match="dtype 'int8' is not one of auto, float32, float16, bfloat16"):
        load_args("m", {"dtype": "int8"})
    with pytest.raises(ModelArgsError, match="trust_remote_code must be true or false"):
        load_args("m", {"trust_remote_code": "yes"})
    with pytest.raises(ModelArgsError, match="exclude each other"):
        load_args("m", {"load_in_8bit": True, "load_in_4bit": True})


def test_max_memory_from_text_json_or_dotted_keys() -> None:
    expected = {0: "20GiB", 1: "18GiB", "cpu": "30GiB"}
    assert parse_max_memory("0=20GiB;1=18GiB;cpu=30GiB") == expected
    assert parse_max_memory("0=20GiB,1=18GiB,cpu=30GiB") == expected
    assert parse_max_memory(parse_model_args('m={"0": "20GiB", "1": "18GiB", "cpu": "30GiB"}')["m"]) == expected
    assert parse_max_memory(parse_model_args("m.0=20GiB,m.1=18GiB,m.cpu=30GiB")["m"]) == expected
    with pytest.raises(ModelArgsError, match="'20GiB' is not DEVICE=LIMIT"):
        parse_max_memory("20GiB")


def test_quantization_without_bitsandbytes_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import taxpraben.models.hf_args as hf_args

    monkeypatch.setattr(hf_args, "_is_installed", lambda module: module != "bitsandbytes")
    with pytest.raises(ModelArgsError, match="load_in_8bit needs bitsandbytes: pip install bitsandbytes"):
        create_backend("hf:/nowhere", model_args="load_in_8bit=true")
    code, output = invoke("--model", "hf:/nowhere", "--data", "sample", "--model-args", "load_in_4bit=true")
    assert code == 2 and "load_in_4bit needs bitsandbytes" in output


def test_quantization_with_bitsandbytes_builds_its_config(monkeypatch: pytest.MonkeyPatch) -> None:
    import taxpraben.models.hf_args as hf_args

    monkeypatch.setattr(hf_args, "_is_installed", lambda module: True)
    args = load_args("m", {"load_in_4bit": True})
    assert args.quantize == "4bit" and args.placed
    kwargs = hf_args.model_kwargs(args, "cuda:0")
    assert kwargs["quantization_config"].load_in_4bit and not kwargs["quantization_config"].load_in_8bit
    assert kwargs["device_map"] == "cuda:0" and kwargs["dtype"] == "auto"
    mapped = hf_args.model_kwargs(load_args("m", {"max_memory": "0=20GiB", "dtype": "bfloat16"}), "cpu")
    import torch

    assert mapped == {"max_memory": {0: "20GiB"}, "device_map": "auto", "dtype": torch.bfloat16}


@pytest.mark.parametrize("key", sorted(SET_BY_TAXPRABEN))
def test_openai_refuses_the_fields_taxpraben_sets_and_names_the_option(key: str) -> None:
    with pytest.raises(ModelArgsError, match=f"'{key}' is set by taxpraben") as caught:
        create_backend("openai:m", base_url=BASE_URL, model_args=f"{key}=1")
    assert SET_BY_TAXPRABEN[key] in str(caught.value)


@pytest.mark.parametrize("spec", ["baseline:oracle", "replay:nothing.jsonl"])
def test_backends_without_a_model_refuse_any_model_args(spec: str) -> None:
    with pytest.raises(ModelArgsError, match=f"--model-args \\(dtype\\) is refused for {spec.split(':')[0]}: models"):
        create_backend(spec, model_args="dtype=float16")
    code, output = invoke("--model", spec, "--data", "sample", "--model-args", "dtype=float16")
    assert code == 2 and "is refused for" in output


def test_openai_body_carries_the_model_args_under_ours_and_gen_kwargs() -> None:
    backend = OpenAIBackend("m", base_url=BASE_URL,
                            model_args=parse_model_args("chat_template_kwargs.enable_thinking=false,top_k=20,min_p=0.1"))  # fmt: skip
    config = GenerationConfig(max_tokens=8, gen_kwargs={"top_k": 5, "chat_template_kwargs": {"x": 1}})
    body = backend.request_body(build_request(RECORD, 2, config), config)
    assert body == {
        "model": "m", "messages": [{"role": "user", "content": "计算应纳税额"}], "temperature": 0.0,
        "max_tokens": 8, "seed": 2, "top_k": 5, "chat_template_kwargs": {"x": 1, "enable_thinking": False},
        "min_p": 0.1,
    }  # fmt: skip


def test_openai_requests_carry_the_model_args_end_to_end(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", {"TaxCalc": ROWS})
    out = tmp_path / "out"
    with MockServerThread() as server:
        code, output = invoke(
            "--model", "openai:mock", "--base-url", server.base_url, "--data", str(data), "--tasks", "TaxCalc", "--runs", "1",
            "--no-semantic", "--no-cache", "--out", str(out),
            "--model-args", "chat_template_kwargs.enable_thinking=false,top_k=20,repetition_penalty=1.05",
        )  # fmt: skip
        bodies = list(server.stats.bodies)
    assert code == 0, output
    assert len(bodies) == len(ROWS)
    for body in bodies:
        assert body["chat_template_kwargs"] == {"enable_thinking": False}
        assert body["top_k"] == 20 and body["repetition_penalty"] == 1.05
        assert body["stream"] is True and body["max_tokens"] == 1024
    meta = json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]
    assert meta["model_args"] == {"chat_template_kwargs": {"enable_thinking": False}, "top_k": 20,
                                  "repetition_penalty": 1.05}  # fmt: skip


def test_a_refused_key_sends_nothing(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", {"TaxCalc": ROWS})
    with MockServerThread() as server:
        code, output = invoke("--model", "openai:mock", "--base-url", server.base_url, "--data", str(data), "--tasks", "TaxCalc",
                              "--no-semantic", "--no-cache", "--out", str(tmp_path / "out"),
                              "--model-args", "temperature=0.7")  # fmt: skip
        stats = server.stats
    assert code == 2 and "use --temperature instead" in output
    assert stats.requests == 0 and stats.model_listings == 0


# ---------------------------------------------------------------------------- cache key


def todays_key(backend: str, model: str, endpoint: str | None, run: int = 0) -> str:
    """The cache key as cache.py computed it before --model-args existed (version 1)."""
    description = {
        "v": 1, "backend": backend, "model": model, "endpoint": endpoint,
        "messages": [{"role": "user", "content": RECORD.query}], "temperature": CONFIG.temperature,
        "top_p": CONFIG.top_p, "max_tokens": CONFIG.max_tokens, "gen_kwargs": {}, "seed": run, "run": run,
    }  # fmt: skip
    canonical = json.dumps(description, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def key_of(spec: str, model_args: str | None) -> str:
    backend = create_backend(spec, base_url=BASE_URL, model_args=model_args)
    return generation_key(backend, CONFIG, build_request(RECORD, 0, CONFIG), shared=False)


@pytest.mark.parametrize("spec", ["openai:m", "hf:/some/model"])
def test_without_model_args_the_cache_keys_stay_as_they_were(spec: str) -> None:
    kind, _, model = spec.partition(":")
    expected = todays_key(kind, model, BASE_URL if kind == "openai" else None)
    assert key_of(spec, None) == expected
    assert key_of(spec, "") == expected


@pytest.mark.parametrize(("spec", "args", "other"), [
    ("openai:m", "top_k=20", "top_k=40"),
    ("hf:/some/model", "dtype=float16", "dtype=bfloat16"),
    ("hf:/some/model", "revision=v1", "revision=v2"),
])  # fmt: skip
def test_other_model_args_are_other_cache_keys(spec: str, args: str, other: str) -> None:
    plain = key_of(spec, None)
    assert len({plain, key_of(spec, args), key_of(spec, other)}) == 3
    assert key_of(spec, args) == key_of(spec, args)


def test_a_run_with_other_model_args_does_not_reuse_the_cache(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", {"TaxCalc": ROWS})
    cache = tmp_path / "c.sqlite"
    with MockServerThread() as server:  # one endpoint: the URL is part of the key too

        def sent(*model_args: str) -> int:
            before = server.stats.requests
            out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
            code, output = invoke("--model", "openai:mock", "--base-url", server.base_url, "--data", str(data), "--tasks", "TaxCalc",
                                  "--runs", "1", "--no-semantic", "--cache", str(cache), "--out", str(out),
                                  *model_args)  # fmt: skip
            assert code == 0, output
            return server.stats.requests - before

        assert sent() == len(ROWS)
        assert sent() == 0  # same options: every answer from the cache
        assert sent("--model-args", "top_k=20") == len(ROWS)  # other model args: generated again
        assert sent("--model-args", "top_k=20") == 0
        assert sent("--model-args", "top_k=40") == len(ROWS)
        assert sent() == 0  # and the run without them still finds its own answers


# ---------------------------------------------------------------------------- hf, on the tiny llama


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_models_hf import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama-args"))


def loaded_dtype(path: Path, model_args: str | None) -> Any:
    backend = create_backend(f"hf:{path}", device="cpu", model_args=model_args)
    assert isinstance(backend, HFBackend)
    outcome = asyncio.run(backend.generate([build_request(RECORD, 0, CONFIG)], CONFIG))
    assert len(outcome) == 1 and not isinstance(outcome[0], Exception), outcome
    assert backend._loaded is not None
    return backend._loaded.model.dtype


def test_hf_dtype_is_the_one_asked_for(tiny_llama: Path) -> None:
    import torch

    assert loaded_dtype(tiny_llama, None) == torch.float32  # the checkpoint's own
    assert loaded_dtype(tiny_llama, "dtype=bfloat16") == torch.bfloat16
    assert loaded_dtype(tiny_llama, "dtype=float16,attn_implementation=eager") == torch.float16


def test_hf_arguments_reach_from_pretrained(tiny_llama: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import transformers

    seen: dict[str, dict[str, Any]] = {}
    for name in ("AutoModelForCausalLM", "AutoTokenizer"):
        cls = getattr(transformers, name)
        original = cls.from_pretrained

        def spy(path: Any, *args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
            seen[_name] = kwargs
            return _original(path, *args, **kwargs)

        monkeypatch.setattr(cls, "from_pretrained", spy)
    loaded_dtype(tiny_llama, "revision=main,attn_implementation=eager,trust_remote_code=true")
    assert seen["AutoModelForCausalLM"] == {"revision": "main", "attn_implementation": "eager",
                                            "trust_remote_code": True, "dtype": "auto"}  # fmt: skip
    assert seen["AutoTokenizer"] == {"revision": "main", "trust_remote_code": True}


def test_hf_run_records_the_revision_and_warns_of_remote_code(tiny_llama: Path, tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", {"TaxCalc": ROWS})
    out = tmp_path / "out"
    code, output = invoke("--model", f"hf:{tiny_llama}", "--data", str(data), "--tasks", "TaxCalc", "--runs", "1", "--max-tokens", "4",
                          "--device", "cpu", "--no-semantic", "--no-cache", "--out", str(out),
                          "--model-args", "revision=main,trust_remote_code=true,dtype=float32")  # fmt: skip
    assert code == 0, output
    assert "trust_remote_code=true executes the Python code of the model repository" in " ".join(output.split())
    meta = json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]
    assert meta["model_args"] == {"revision": "main", "trust_remote_code": True, "dtype": "float32"}
    plain = tmp_path / "plain"
    code, output = invoke("--model", f"hf:{tiny_llama}", "--data", str(data), "--tasks", "TaxCalc", "--runs", "1", "--max-tokens", "4",
                          "--device", "cpu", "--no-semantic", "--no-cache", "--out", str(plain))  # fmt: skip
    assert code == 0, output
    assert "trust_remote_code" not in output
    assert json.loads((plain / "results.json").read_text(encoding="utf-8"))["meta"]["model_args"] is None


def test_hf_unknown_key_exits_2_before_loading(tiny_llama: Path, tmp_path: Path) -> None:
    code, output = invoke("--model", f"hf:{tiny_llama}", "--data", "sample", "--device", "cpu", "--no-semantic",
                          "--out", str(tmp_path / "out"), "--model-args", "torch_dtype=float16")  # fmt: skip
    assert code == 2
    assert "unknown key 'torch_dtype' for hf: models; did you mean 'dtype'?" in " ".join(output.split())
    assert not (tmp_path / "out").exists()  # refused before the output directory was made


def test_estimate_takes_the_model_args_and_their_cache_keys(tmp_path: Path) -> None:
    from taxpraben.commands.estimate import estimate

    app = cli_app(run=run, estimate=estimate)
    data = write_data(tmp_path / "data", {"TaxCalc": ROWS})
    cache = tmp_path / "c.sqlite"

    def call(command: str, *args: str) -> tuple[int, str]:
        result = CliRunner().invoke(app, [command, "--model", "openai:mock", "--base-url", url, "--data", str(data), "--tasks", "TaxCalc",
                                          "--runs", "1", "--cache", str(cache), *args], catch_exceptions=False)  # fmt: skip
        return result.exit_code, result.output

    def to_send(*args: str) -> int:
        figures = tmp_path / "estimate.json"
        code, output = call("estimate", *args, "--json", str(figures))
        assert code == 0, output
        return int(json.loads(figures.read_text(encoding="utf-8"))["total"]["to_send"])

    with MockServerThread() as server:
        url = server.base_url
        code, output = call("run", "--no-semantic", "--out", str(tmp_path / "out"), "--model-args", "top_k=20")
        assert code == 0, output
        requests = server.stats.requests
        assert to_send("--model-args", "top_k=20") == 0
        assert to_send() == len(ROWS) and to_send("--model-args", "top_k=40") == len(ROWS)
        code, output = call("estimate", "--model-args", "stream=false")
        assert code == 2 and "use --no-stream instead" in output
        assert server.stats.requests == requests  # the estimates sent nothing

"""hf: end to end with a tiny random causal LM and a tokenizer trained here (no hub access)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import torch
import typer
from rich.console import Console
from typer.testing import CliRunner

from helpers.tiny_models import tax_corpus
from taxpraben.commands.run import run
from taxpraben.models.base import (
    BackendError,
    Completion,
    GenerationConfig,
    ModelSpecError,
    Request,
    build_request,
)
from taxpraben.models.factory import create_backend
from taxpraben.models.hf import GROUP_SIZE, HFBackend, context_length
from taxpraben.records import Record
from taxpraben.results.predictions import Prediction
from taxpraben.run.cache import CompletionCache
from taxpraben.run.runner import Runner, RunnerSettings

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_tiny_llama(out: Path, *, chat_template: bool = True) -> Path:
    """A 2-layer LLaMA (hidden 32) with a byte-level BPE tokenizer trained on tax prose."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=500,
        special_tokens=["<pad>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(tax_corpus(lines=200), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    if chat_template:
        fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    LlamaForCausalLM(config).eval().save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


GREEDY = GenerationConfig(max_tokens=8)
SAMPLED = GenerationConfig(max_tokens=8, temperature=1.0, seed_base=11)
RECORDS = [
    Record(task="TaxQA", id=str(i), query=f"第{i}个问题：小规模纳税人如何缴纳增值税？", answer="")
    for i in range(5)
]


class CountingHF(HFBackend):
    """Counts the items it is asked to generate."""

    generated = 0

    async def generate_live(
        self, requests: Sequence[Request], config: GenerationConfig, finished: Callable[[int], None]
    ) -> list[Completion | BackendError]:
        self.generated += len(requests)
        return await super().generate_live(requests, config, finished)


def generate(
    path: Path, config: GenerationConfig, runs: int, cache: CompletionCache | None = None
) -> tuple[list[Prediction], Runner, CountingHF]:
    backend = CountingHF(str(path), batch_size=4, device="cpu")
    requests = [build_request(r, run, config) for run in range(runs) for r in RECORDS]
    runner = Runner(backend, config, RunnerSettings(concurrency=4, progress=False), cache=cache)
    return asyncio.run(runner.run(requests)), runner, backend


def test_greedy_runs_share_one_generation(tiny_llama: Path) -> None:
    preds, runner, backend = generate(tiny_llama, GREEDY, runs=3)
    assert runner.stats.shared_generation
    assert backend.generated == len(RECORDS)  # once, not three times
    assert all(not p.error for p in preds)
    by_item: dict[str, set[str]] = {}
    for p in preds:
        by_item.setdefault(p.id, set()).add(p.prediction)
        assert p.model == f"hf:{tiny_llama}"
        assert p.usage and p.usage["prompt_tokens"] > 0 and 0 < p.usage["completion_tokens"] <= 8
    assert all(len(texts) == 1 for texts in by_item.values())
    assert sorted({p.run for p in preds}) == [0, 1, 2]


def test_sampling_is_seeded_per_run(tiny_llama: Path) -> None:
    first, runner, backend = generate(tiny_llama, SAMPLED, runs=2)
    again, _, _ = generate(tiny_llama, SAMPLED, runs=2)
    assert not runner.stats.shared_generation and backend.generated == 2 * len(RECORDS)
    assert [p.prediction for p in first] == [p.prediction for p in again]
    run0 = [p.prediction for p in first if p.run == 0]
    run1 = [p.prediction for p in first if p.run == 1]
    assert run0 != run1


def test_the_bar_advances_with_each_finished_batch(tiny_llama: Path) -> None:
    """One call of the backend spans many batches: the bar counts each batch as it ends,
    not all of them at the end of the call."""
    seen: list[int] = []
    runner: Runner | None = None

    class Watching(HFBackend):
        def _generate_batch(self, loaded, prompt_ids, seed, config):  # type: ignore[no-untyped-def]
            async def shown() -> int:  # queued behind the bar's updates from earlier batches
                assert runner is not None
                return runner._progress.shown

            seen.append(asyncio.run_coroutine_threadsafe(shown(), loop).result())
            return super()._generate_batch(loaded, prompt_ids, seed, config)

    backend = Watching(str(tiny_llama), batch_size=1, device="cpu")
    console = Console(file=io.StringIO(), force_terminal=False)
    runner = Runner(backend, GREEDY, RunnerSettings(concurrency=1), cache=None, console=console)
    requests = [build_request(r, 0, GREEDY) for r in RECORDS]

    async def main() -> list[Prediction]:
        nonlocal loop
        loop = asyncio.get_running_loop()
        return await runner.run(requests)

    loop: asyncio.AbstractEventLoop
    preds = asyncio.run(main())
    assert len(preds) == len(RECORDS) and all(not p.error for p in preds)
    assert seen == [0, 1, 2, 3, 4]  # one call of 5 batches of 1
    assert runner._progress.shown == 0  # stopped: the next run counts from 0
    assert runner.stats.done == len(RECORDS)


def test_cached_generations_never_load_the_model(tiny_llama: Path, tmp_path: Path) -> None:
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        first, _, _ = generate(tiny_llama, GREEDY, runs=2, cache=cache)
        again, runner, backend = generate(tiny_llama, GREEDY, runs=2, cache=cache)
    assert backend.generated == 0 and backend._loaded is None
    assert runner.stats.cached == len(RECORDS)
    assert [p.to_json() for p in again] == [{**p.to_json(), "cached": True} for p in first]


def test_chat_template_applied_when_present(tiny_llama: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    config = GenerationConfig(system_prompt="你是税务专家")
    request = build_request(RECORDS[0], 0, config)
    backend = HFBackend(str(tiny_llama))
    templated = backend.prompt_text(AutoTokenizer.from_pretrained(tiny_llama), request)
    assert templated == f"<|system|>你是税务专家</s><|user|>{RECORDS[0].query}</s><|assistant|>"
    plain_dir = build_tiny_llama(tmp_path / "plain", chat_template=False)
    plain = backend.prompt_text(AutoTokenizer.from_pretrained(plain_dir), request)
    assert plain == f"你是税务专家\n\n{RECORDS[0].query}"


def test_factory_and_flags(tiny_llama: Path) -> None:
    backend = create_backend(f"hf:{tiny_llama}", concurrency=3, device="cpu")
    assert isinstance(backend, HFBackend) and backend.max_batch == 3
    assert backend.batch_size == GROUP_SIZE  # the runner hands over enough to sort by length
    assert backend.shares_runs(GREEDY) and not backend.shares_runs(SAMPLED)
    assert backend.shares_runs(GenerationConfig(temperature=0.7, gen_kwargs={"do_sample": False}))


def test_run_command_with_a_local_model(tiny_llama: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    rows = [
        {"id": str(i), "query": f"计算第{i}笔收入的增值税。", "answer": i * 13} for i in range(4)
    ]
    (data / "TaxCalc.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    app = typer.Typer()
    app.command("run")(run)
    app.command("noop")(lambda: None)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["run", "--model", f"hf:{tiny_llama}", "--data", str(data), "--tasks", "TaxCalc", "--runs", "3",
         "--max-tokens", "6", "--device", "cpu", "--no-semantic", "--no-cache", "--out", str(out)],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "results.json").read_text(encoding="utf-8"))["meta"]
    assert meta["shared_generation"] is True and meta["model"] == f"hf:{tiny_llama}"
    assert meta["endpoint"] is None and meta["generation"]["max_tokens"] == 6
    assert meta["generation_stats"]["generated"] == 4
    template_hash = hashlib.sha256(CHAT_TEMPLATE.encode("utf-8")).hexdigest()[:12]
    assert meta["chat_template"] == f"tokenizer template sha256:{template_hash}"
    lines = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 12


def _run_local(model: Path, tmp_path: Path, *flags: str) -> tuple[int, str, dict]:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "TaxQA.jsonl").write_text(
        json.dumps({"id": "1", "query": "增值税怎么交？", "answer": "按月申报"}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    app = typer.Typer()
    app.command("run")(run)
    app.command("noop")(lambda: None)
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    result = CliRunner().invoke(
        app,
        ["run", "--model", f"hf:{model}", "--data", str(data), "--tasks", "TaxQA", "--max-tokens", "4", "--device", "cpu",
         "--no-semantic", "--no-cache", "--out", str(out), *flags],
    )  # fmt: skip
    results = out / "results.json"
    meta = json.loads(results.read_text(encoding="utf-8"))["meta"] if results.exists() else {}
    return result.exit_code, result.output, meta


def test_a_model_without_a_chat_template_is_recorded_and_can_be_required(
    tiny_llama: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plain = build_tiny_llama(tmp_path / "plain", chat_template=False)
    code, output, meta = _run_local(plain, tmp_path)
    assert code == 0, output
    assert meta["chat_template"] == "none: raw query (the tokenizer has no chat template)"
    assert "the tokenizer has no chat template: each query is sent raw" in caplog.text
    code, output, meta = _run_local(plain, tmp_path, "--chat-template")
    assert code == 2 and meta == {}
    assert "--chat-template: the tokenizer has no chat template" in " ".join(output.split())
    code, output, meta = _run_local(tiny_llama, tmp_path, "--no-chat-template")
    assert code == 0, output
    assert meta["chat_template"] == "none: raw query (--no-chat-template)"


def test_no_chat_template_sends_the_raw_query_under_its_own_cache_key(tiny_llama: Path) -> None:
    from transformers import AutoTokenizer

    from taxpraben.run.runner import generation_key

    request = build_request(RECORDS[0], 0, GREEDY)
    raw = HFBackend(str(tiny_llama), chat_template=False)
    assert raw.prompt_text(AutoTokenizer.from_pretrained(tiny_llama), request) == RECORDS[0].query
    default, required = HFBackend(str(tiny_llama)), HFBackend(str(tiny_llama), chat_template=True)
    keys = {b: generation_key(b, GREEDY, request, True) for b in (raw, default, required)}
    assert keys[default] == keys[required] != keys[raw]
    with pytest.raises(ModelSpecError, match="--no-chat-template is for hf: models only"):
        create_backend("baseline:oracle", chat_template=False)


def test_unloadable_model_is_a_user_error(tmp_path: Path) -> None:
    from taxpraben.models.base import ModelSpecError

    backend = HFBackend(str(tmp_path / "nothing-here"), device="cpu")
    request = build_request(RECORDS[0], 0, GREEDY)
    with pytest.raises(ModelSpecError, match="cannot load the model"):
        asyncio.run(backend.generate([request], GREEDY))


# --------------------------------------------------------------------------- batching


def _varied_requests(config: GenerationConfig, n: int = 9) -> list[Request]:
    """Prompts of quite different lengths, in no particular order."""
    records = [
        Record(task="TaxQA", id=str(i), query="小规模纳税人" * ((i * 7) % 5 + 1) + f"第{i}题？", answer="")
        for i in range(n)
    ]
    return [build_request(r, 0, config) for r in records]


def _texts(outcomes: Sequence[Completion | BackendError]) -> list[str]:
    assert all(isinstance(o, Completion) for o in outcomes), outcomes
    return [o.text for o in outcomes]  # type: ignore[union-attr]


def test_sorted_batches_return_in_request_order(tiny_llama: Path) -> None:
    requests = _varied_requests(GREEDY)
    alone = HFBackend(str(tiny_llama), batch_size=1, device="cpu")
    expected = [_texts(asyncio.run(alone.generate([r], GREEDY)))[0] for r in requests]

    backend = HFBackend(str(tiny_llama), batch_size=4, device="cpu")
    seen: list[list[int]] = []
    original = backend._generate_batch

    def recording(loaded, prompt_ids, seed, config):  # type: ignore[no-untyped-def]
        seen.append([len(p) for p in prompt_ids])
        return original(loaded, prompt_ids, seed, config)

    backend._generate_batch = recording  # type: ignore[method-assign]
    outcomes = asyncio.run(backend.generate(requests, GREEDY))
    assert _texts(outcomes) == expected
    lengths = [n for batch in seen for n in batch]
    assert lengths == sorted(lengths, reverse=True)  # longest first across batches
    assert [len(b) for b in seen] == [4, 4, 1]
    prompt_tokens = [o.usage["prompt_tokens"] for o in outcomes]  # type: ignore[union-attr]
    tok = backend._load().tokenizer
    assert prompt_tokens == [
        len(tok(backend.prompt_text(tok, r), add_special_tokens=False)["input_ids"])
        for r in requests
    ]


def test_out_of_memory_halves_the_generation_batch(tiny_llama: Path) -> None:
    requests = _varied_requests(GREEDY)
    expected = _texts(
        asyncio.run(HFBackend(str(tiny_llama), batch_size=8, device="cpu").generate(requests, GREEDY))
    )
    backend = HFBackend(str(tiny_llama), batch_size=8, device="cpu")
    original = backend._generate_batch
    failures = []

    def small_device(loaded, prompt_ids, seed, config):  # type: ignore[no-untyped-def]
        if len(prompt_ids) > 2:
            failures.append(len(prompt_ids))
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1.00 GiB")
        return original(loaded, prompt_ids, seed, config)

    backend._generate_batch = small_device  # type: ignore[method-assign]
    assert _texts(asyncio.run(backend.generate(requests, GREEDY))) == expected
    assert failures and backend._budget is not None and backend._budget.max_rows <= 2


def test_static_cache_gives_the_dynamic_cache_text(tiny_llama: Path) -> None:
    requests = _varied_requests(GREEDY, n=5)
    dynamic = HFBackend(str(tiny_llama), batch_size=8, device="cpu", cache_implementation=None)
    static = HFBackend(str(tiny_llama), batch_size=8, device="cpu", cache_implementation="static")
    assert not dynamic.static_cache(dynamic._load()) and static.static_cache(static._load())
    assert _texts(asyncio.run(static.generate(requests, GREEDY))) == _texts(
        asyncio.run(dynamic.generate(requests, GREEDY))
    )
    auto = HFBackend(str(tiny_llama), device="cpu")
    assert not auto.static_cache(auto._load())  # static (and compiled) on CUDA only
    assert auto._load().model.config._attn_implementation == "sdpa"


def test_a_failing_static_cache_falls_back_once(
    tiny_llama: Path, caplog: pytest.LogCaptureFixture
) -> None:
    backend = HFBackend(str(tiny_llama), batch_size=8, device="cpu", cache_implementation="static")
    model = backend._load().model
    real_generate = model.generate
    calls: list[object] = []

    def no_compiler(*args: object, **kwargs: object) -> object:
        calls.append(kwargs.get("cache_implementation"))
        if kwargs.get("cache_implementation") == "static":
            raise RuntimeError("InductorError: no C compiler")
        return real_generate(*args, **kwargs)

    model.generate = no_compiler
    try:
        requests = _varied_requests(GREEDY, n=3)
        first = asyncio.run(backend.generate(requests, GREEDY))
        again = asyncio.run(backend.generate(requests, GREEDY))
    finally:
        del model.generate
    assert _texts(first) == _texts(again)
    assert calls == ["static", None, None]  # tried once, then the dynamic cache for good
    assert "static KV cache failed" in caplog.text


def test_generation_budget_fits_the_sample_on_a_large_gpu() -> None:
    from types import SimpleNamespace

    from taxpraben.compute.batches import plan_batches
    from taxpraben.models.hf import generation_budget

    # Qwen2.5-0.5B's dimensions.
    qwen = SimpleNamespace(hidden_size=896, num_attention_heads=14, num_key_value_heads=2,
                           num_hidden_layers=24, intermediate_size=4864, vocab_size=151936)  # fmt: skip
    widths = [(600,)] * 186
    big = generation_budget(100e9, qwen, 128, max_rows=256)
    assert plan_batches(list(range(186)), widths, big) == [list(range(186))]
    small = generation_budget(2e9, qwen, 128, max_rows=256)
    assert 1 < len(plan_batches(list(range(186)), widths, small)[0]) < 186
    assert big.cost(1, (1200,)) > big.cost(1, (600,))


def test_a_local_model_as_the_judge(
    tiny_llama: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``score --judge hf:PATH --judge-audit``: the plumbing with a local judge. The tiny
    model's replies are noise, so it decides nothing: every unread output stays a format
    failure with its reply kept, every audited output disagrees, and a rescoring asks the
    judge nothing (the model is not even loaded)."""
    from helpers.cli_data import quarterly_calc_rows, scq_rows, write_data
    from taxpraben.commands.score import score

    monkeypatch.setenv("TAXPRABEN_CACHE", str(tmp_path / "cache.sqlite"))
    write_data(tmp_path / "data", {"TaxCalc": quarterly_calc_rows(3), "TaxSCQ": scq_rows(3)})
    answers = {("TaxCalc", "0"): "销项税额为130元。", ("TaxCalc", "1"): "这道题我不会。",
               ("TaxCalc", "2"): "销项税额为390元。", ("TaxSCQ", "s0"): "答案：A",
               ("TaxSCQ", "s1"): "这题很难说。", ("TaxSCQ", "s2"): "答案：B"}  # fmt: skip
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(
        json.dumps({"task": t, "id": i, "run": r, "prediction": text}, ensure_ascii=False) + "\n"
        for r in range(2) for (t, i), text in answers.items()), encoding="utf-8")  # fmt: skip
    app = typer.Typer()
    app.command("score")(score)
    app.command("noop")(lambda: None)

    def judged(out: str) -> tuple[dict, list[dict], str]:
        result = CliRunner().invoke(
            app,
            ["score", "--data", str(tmp_path / "data"), "--predictions", str(predictions), "--no-semantic",
             "--judge", f"hf:{tiny_llama}", "--judge-audit", "1", "--out", str(tmp_path / out)],
            catch_exceptions=False, env={"COLUMNS": "200"},
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        results = json.loads((tmp_path / out / "results.json").read_text(encoding="utf-8"))
        lines = (tmp_path / out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
        return results, [json.loads(line) for line in lines], result.output

    results, samples, output = judged("first")
    judge = results["meta"]["judge"]
    assert judge["model"] == f"hf:{tiny_llama}" and judge["endpoint"] is None
    # One distinct output unread per task, one audited per task: 4 requests, the 2 runs share them.
    assert (judge["requests"], judge["sent"], judge["from_cache"], judge["read_by_judge"]) == (4, 4, 0, 0)
    assert judge["tokens"]["generated"]["generations"] == 4
    assert judge["tokens"]["generated"]["prompt_tokens"] > 0
    assert judge["audit"]["audited"] == 2 and judge["audit"]["agreed"] == 0
    assert judge["audit"]["ci95"][0] == 0.0 and judge["banner"]
    assert "could not be read by the task's reader" in output
    unread = {("TaxCalc", "1"), ("TaxSCQ", "s1")}
    asked = {(s["task"], s["id"]) for s in samples if s.get("judge_reply") is not None}
    for s in samples:
        key = (s["task"], s["id"])
        if key in unread:
            assert s["extracted_by"] == "none" and s["score"] == 0 and s["judge_reply"]
        else:
            assert s["extracted_by"] == "rule"
            if key in asked:
                assert s["judge_agrees"] is False
    assert len(asked - unread) == 2  # one audited output per task

    # A rescoring is answered from the cache: the model is never loaded.
    def no_load(self: HFBackend) -> None:
        raise AssertionError("the judge's model was loaded on a rescoring")

    monkeypatch.setattr(HFBackend, "_load", no_load)
    again, again_samples, _ = judged("again")
    assert (again["meta"]["judge"]["sent"], again["meta"]["judge"]["from_cache"]) == (0, 4)
    assert [s.get("judge_reply") for s in again_samples] == [s.get("judge_reply") for s in samples]
    assert again["tasks"] == results["tasks"]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"max_position_embeddings": 4096}, 4096),
        ({"n_positions": 1024}, 1024),  # GPT-2
        ({"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2.0}}, 8192),
        # Qwen2.5 with YaRN turned on: the original 32768 stretched four times.
        ({"max_position_embeddings": 32768,
          "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}, 131072),
        # Llama 3.1 states the stretched length already: 8192 x 8 is less than it.
        ({"max_position_embeddings": 131072,
          "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}}, 131072),
        ({"max_position_embeddings": 2048, "rope_scaling": None}, 2048),
        ({"hidden_size": 32}, None),
        ({"max_position_embeddings": True}, None),
    ],
)  # fmt: skip
def test_context_length_from_the_model_config(config: dict, expected: int | None) -> None:
    from types import SimpleNamespace

    assert context_length(SimpleNamespace(**config)) == expected


def test_prompts_past_the_context_are_said_once_and_counted(
    tiny_llama: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The tiny model's context is 512 tokens: a prompt of ~600 runs past it, a short one not.
    long_query = "小规模纳税人季度销售额未超过30万元的免征增值税。" * 40
    records = [Record(task="TaxQA", id="long", query=long_query, answer=""), RECORDS[0]]
    backend = HFBackend(str(tiny_llama), batch_size=4, device="cpu")
    config = GenerationConfig(max_tokens=4)
    with caplog.at_level("WARNING", logger="taxpraben.models.hf"):
        for _ in range(2):
            out = asyncio.run(backend.generate([build_request(r, 0, config) for r in records], config))
            assert all(isinstance(c, Completion) for c in out)  # answered, and scored as they are
    assert backend.past_context == 2  # the long prompt, twice; the short one never
    said = [r.getMessage() for r in caplog.records if "context" in r.getMessage()]
    assert len(said) == 1 and "1 prompt(s) of 2 run past the model's context" in said[0]
    assert "max_tokens 4 > 512" in said[0]


def test_loading_prints_no_library_progress_bar(tiny_llama: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """transformers' "Loading weights" bar (tqdm, on stderr) would print between the run's own lines."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.enable_progress_bar()  # as a fresh process has it
    HFBackend(str(tiny_llama), device="cpu")._load()
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "it/s" not in err, err
    assert not transformers_logging.is_progress_bar_enabled()

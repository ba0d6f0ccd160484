"""Configuration files (`--config FILE`) and the OUT/config.yaml that replays a run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, get_type_hints

import pytest
import yaml
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.config import ConfigError, config_values, effective_values, load_config
from taxpraben.jobs.generate import RunJob
from taxpraben.options import (
    DataOptions,
    EndpointOptions,
    GenerationOptions,
    ModelOptions,
    RunOutputOptions,
    ScoringOptions,
    declared_options,
)

RUN_GROUPS = [ModelOptions, DataOptions, GenerationOptions, EndpointOptions, ScoringOptions, RunOutputOptions]
#: Wide enough that no message is wrapped inside the error box.
WIDE = {"COLUMNS": "400", "NO_COLOR": "1"}


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={**WIDE, **(env or {})}, catch_exceptions=False)
    return result.exit_code, result.output


def write_config(path: Path, values: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(values, allow_unicode=True), encoding="utf-8")
    return path


def results_of(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


BASE = {"model": "baseline:oracle", "data": "sample", "tasks": ["TaxCalc", "TaxMCQ"], "runs": 1, "limit": 3,
        "no_semantic": True, "no_cache": True}  # fmt: skip


def test_a_config_file_drives_a_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    config = write_config(tmp_path / "c.yaml", {**BASE, "out": "out", "temperature": 0.5})
    code, output = invoke("run", "--config", str(config))
    assert code == 0, output
    meta = results_of(out)["meta"]  # "out: out" is relative to the file's directory
    assert (meta["model"], meta["tasks"], meta["runs"], meta["limit"]) == ("baseline:oracle", ["TaxCalc", "TaxMCQ"], 1, 3)
    assert meta["generation"]["temperature"] == 0.5
    assert sum(e["n"] for e in results_of(out)["tasks"].values()) == 6


def test_a_flag_and_an_environment_variable_override_the_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    config = write_config(tmp_path / "c.yaml", {**BASE, "out": str(out), "bertscore_model": "from/file"})
    code, output = invoke("run", "--config", str(config), "--runs", "2", "--tasks", "TaxCalc",
                          env={"TAXPRABEN_BERTSCORE_MODEL": "from/env"})  # fmt: skip
    assert code == 0, output
    meta = results_of(out)["meta"]
    assert (meta["runs"], meta["tasks"], meta["limit"]) == (2, ["TaxCalc"], 3)
    assert meta["scorers"]["bertscore"]["model"] == "from/env"
    written = yaml.safe_load((out / "config.yaml").read_text(encoding="utf-8"))
    assert (written["runs"], written["tasks"], written["bertscore_model"]) == (2, "TaxCalc", "from/env")


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"base_ulr": "http://x"}, "unknown key 'base_ulr'; did you mean 'base_url'?"),
        ({"bertscore-layer": 3}, "unknown key 'bertscore-layer'; did you mean 'bertscore_layer'?"),
        ({"runs": "5"}, "key 'runs' (--runs): needs an integer, got '5' (str)"),
        ({"runs": 0}, "key 'runs' (--runs): 0 is below the minimum 1"),
        ({"top_p": 1.5}, "key 'top_p' (--top-p): 1.5 is above the maximum 1"),
        ({"profile": "helm"}, "key 'profile' (--profile): unknown scoring profile 'helm'"),
        ({"limit": 1.5}, "key 'limit' (--limit): 1.5 is neither a count"),
        ({"no_semantic": "yes"}, "key 'no_semantic' (--no-semantic): needs true or false"),
    ],
)
def test_bad_keys_and_values_are_refused_naming_the_file_and_key(tmp_path: Path, entry: dict[str, Any], says: str) -> None:
    config = write_config(tmp_path / "bad.yaml", {**BASE, **entry})
    code, output = invoke("run", "--config", str(config), "--out", str(tmp_path / "out"))
    assert code == 2
    text = " ".join(output.replace("│", " ").split())
    assert f"{config}: {says}" in text
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_not_a_mapping_or_not_yaml_is_refused(tmp_path: Path) -> None:
    listing = tmp_path / "list.yaml"
    listing.write_text("- model\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"list\.yaml: a configuration file is a mapping"):
        load_config(listing, RUN_GROUPS)
    broken = tmp_path / "broken.yaml"
    broken.write_text("model: [unclosed\n", encoding="utf-8")
    code, output = invoke("run", "--config", str(broken))
    assert code == 2 and "broken.yaml, line 2: not valid YAML" in " ".join(output.split())


def test_the_model_may_come_from_the_file_but_must_come_from_somewhere(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.yaml", {"data": "sample"})
    code, output = invoke("run", "--config", str(config))
    assert code == 2 and "--model" in output


def test_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    source = tmp_path / "conf" / "c.yaml"
    values = config_values({"data": "mydata", "task_dir": ["specs", "/abs/specs"], "out": "o", "cache": "~/x.sqlite"},
                           RUN_GROUPS, source=source)  # fmt: skip
    assert values["data"] == str(tmp_path / "conf" / "mydata")
    assert values["task_dir"] == [tmp_path / "conf" / "specs", Path("/abs/specs")]
    assert values["out"] == tmp_path / "conf" / "o"
    assert values["cache"] == Path("~/x.sqlite").expanduser()
    assert config_values({"data": "sample", "tasks": ["A", "B"]}, RUN_GROUPS, source=source) == {
        "data": "sample", "tasks": "A,B"}  # fmt: skip


def test_config_yaml_replays_the_run(tmp_path: Path) -> None:
    out = tmp_path / "first"
    code, output = invoke("run", "--model", "baseline:oracle", "--data", "sample", "--tasks", "TaxCalc,TaxSCQ",
                          "--limit", "0.5", "--runs", "2", "--no-semantic", "--no-cache", "--out", str(out))  # fmt: skip
    assert code == 0, output
    text = (out / "config.yaml").read_text(encoding="utf-8")
    assert text.startswith("# The effective configuration of `taxpraben run` (taxpraben ")
    first = results_of(out)
    written = yaml.safe_load(text)
    # every option of run's groups, in group order, with its effective value
    groups = get_type_hints(RunJob)  # run's groups, in its order
    names = [f.name for job_field in dataclasses.fields(RunJob) for f, _, _ in declared_options(groups[job_field.name])]
    assert list(written) == names
    assert (written["out"], written["limit"], written["runs"]) == (str(out), 0.5, 2)
    (out / "results.json").unlink()
    code, output = invoke("run", "--config", str(out / "config.yaml"))
    assert code == 0, output
    second = results_of(out)
    assert second["tasks"] == first["tasks"]

    def timeless(manifest: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in manifest.items() if k not in ("started_at", "finished_at")}

    assert timeless(second["meta"]["manifest"]) == timeless(first["meta"]["manifest"])
    assert second["meta"]["manifest"]["limit"] == 0.5


def test_config_yaml_holds_no_secret() -> None:
    values = effective_values(EndpointOptions(base_url=["https://user:s3cret@h.example/v1?api_key=s3cret"]))
    assert values["base_url"] == ["https://h.example/v1"]
    assert "s3cret" not in json.dumps(values)


def test_score_writes_its_config_and_takes_one(tmp_path: Path) -> None:
    run_out = tmp_path / "run"
    code, output = invoke("run", "--model", "baseline:oracle", "--data", "sample", "--tasks", "TaxCalc",
                          "--runs", "1", "--no-semantic", "--no-cache", "--no-score", "--out", str(run_out))  # fmt: skip
    assert code == 0, output
    config = write_config(tmp_path / "score.yaml", {"data": "sample", "predictions": [str(run_out / "predictions.jsonl")],
                                                    "no_semantic": True, "out": "scored"})  # fmt: skip
    code, output = invoke("score", "--config", str(config))
    assert code == 0, output
    scored = tmp_path / "scored"
    written = yaml.safe_load((scored / "config.yaml").read_text(encoding="utf-8"))
    assert written["predictions"] == [str(run_out / "predictions.jsonl")] and written["out"] == str(scored)
    assert results_of(scored)["meta"]["manifest"]["generation"] is None
    code, output = invoke("score", "--config", str(write_config(tmp_path / "bad.yaml", {"modle": "x"})))
    assert code == 2 and "unknown key 'modle'" in output


# ---------------------------------------------------------------------------- a run's config.yaml, replayed


@pytest.fixture(scope="module")
def run_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """OUT/config.yaml of a real `run` (every task of the sample, 5 runs)."""
    out = tmp_path_factory.mktemp("replay") / "out"
    code, output = invoke("run", "--model", "baseline:oracle", "--data", "sample", "--no-semantic", "--no-cache",
                          "--out", str(out))  # fmt: skip
    assert code == 0, output
    return out / "config.yaml"


def ignored_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "ignored by `" in line]


def test_estimate_replays_a_runs_config_naming_what_it_ignores(run_config: Path, tmp_path: Path) -> None:
    figures = tmp_path / "estimate.json"
    code, output = invoke("estimate", "--config", str(run_config), "--json", str(figures))
    assert code == 0, output
    (line,) = ignored_lines(output)  # one line, naming every key estimate does not take
    ignored = line.split("which does not take them: ")[1].split(", ")
    assert ignored[:2] == ["profile", "bertscore_model"] and "judge_prompt" in ignored and "model" not in ignored
    assert line.startswith(f"{run_config}: ignored by `estimate`")
    assert json.loads(figures.read_text(encoding="utf-8"))["total"]["requests"] == 930  # 186 records x 5 runs


def test_score_replays_a_runs_config_naming_what_it_ignores(run_config: Path, tmp_path: Path) -> None:
    out = tmp_path / "rescored"
    code, output = invoke("score", "--config", str(run_config), "--predictions",
                          str(run_config.parent / "predictions.jsonl"), "--out", str(out))  # fmt: skip
    assert code == 0, output
    (line,) = ignored_lines(output)
    ignored = line.split("which does not take them: ")[1].split(", ")
    assert ignored[:3] == ["model", "model_args", "chat_template"] and "serve" in ignored and "profile" not in ignored
    assert results_of(out)["tasks"] == results_of(run_config.parent)["tasks"]
    code, output = invoke("run", "--config", str(run_config), "--out", str(tmp_path / "again"))
    assert code == 0 and not ignored_lines(output), output  # run takes every key of its own file


def test_config_yaml_holds_no_docstring(run_config: Path) -> None:
    comments = [line for line in run_config.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    titles = comments[3:]
    assert titles[:3] == ["# Model options", "# Data options", "# Generation options"]
    assert "# Run output options" in titles and all(len(t.split()) <= 4 for t in titles)
    assert not any(word in line for line in comments for word in (":meth:", "ScoringSettings", "``"))


# ---------------------------------------------------------------------------- a file's shell command


def test_serve_from_a_config_file_needs_trust_config(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    config = write_config(tmp_path / "shared.yaml", {**BASE, "serve": f"touch {marker} # --port 8123"})
    code, output = invoke("run", "--config", str(config), "--out", str(tmp_path / "out"))
    text = " ".join(output.replace("│", " ").split())
    assert code == 2, output
    assert f"{config}: key 'serve' is a shell command" in text and "--trust-config" in text
    assert not marker.exists() and not (tmp_path / "out").exists()
    # estimate takes --serve too: the same refusal
    code, output = invoke("estimate", "--config", str(config))
    assert code == 2 and "--trust-config" in output
    # trusted, the file's serve is taken (and refused for what it is: a baseline needs no server)
    code, output = invoke("run", "--config", str(config), "--trust-config", "--out", str(tmp_path / "out"))
    assert code == 2 and "--serve starts an OpenAI-compatible server" in " ".join(output.split())
    assert not marker.exists()
    # --serve on the command line wins over the file's, and needs no trust
    code, output = invoke("run", "--config", str(config), "--serve", "true # --port 8124", "--out", str(tmp_path / "o"))
    assert code == 2 and "--serve starts an OpenAI-compatible server" in " ".join(output.split())
    assert "--trust-config" not in output
    written = write_config(tmp_path / "null.yaml", {**BASE, "serve": None, "out": "o2"})
    code, output = invoke("run", "--config", str(written))  # a null serve runs nothing: no trust needed
    assert code == 0, output


def test_estimate_and_merge_take_a_config_too(tmp_path: Path) -> None:
    for command in ("estimate", "merge", "run", "score"):
        code, output = invoke(command, "--help")
        assert code == 0 and "--config" in output, command


def test_trust_remote_code_from_a_config_file_needs_trust_config(tmp_path: Path) -> None:
    """A file's model_args with trust_remote_code=true would import and run the model
    directory's Python: refused (exit 2) naming the file, the key and the flag, text or mapping;
    nothing is loaded. The same file without it, or trust_remote_code from the command line, is
    no file's code."""
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    marker = tmp_path / "imported"
    (model_dir / "modeling_evil.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    for model_args in ("trust_remote_code=true", {"trust_remote_code": True, "dtype": "bfloat16"}):
        config = write_config(tmp_path / "c.yaml", {**BASE, "model": f"hf:{model_dir}", "model_args": model_args})
        code, output = invoke("run", "--config", str(config), "--out", str(tmp_path / "out"))
        text = " ".join(output.replace("│", " ").split())
        assert code == 2, output
        assert f"{config}: key 'model_args' sets trust_remote_code=true" in text and "--trust-config" in text
        assert not marker.exists() and not (tmp_path / "out").exists()
    plain = write_config(tmp_path / "plain.yaml", {**BASE, "model": f"hf:{model_dir}", "model_args": {"dtype": "bfloat16"}})
    code, output = invoke("run", "--config", str(plain), "--out", str(tmp_path / "o2"))
    assert "--trust-config" not in output  # no code in the file: not refused for it (the model dir is no model)
    code, output = invoke("run", "--config", str(plain), "--model-args", "trust_remote_code=true", "--out",
                          str(tmp_path / "o3"))  # fmt: skip
    assert "--trust-config" not in output  # given on the command line: the user's own choice


def test_model_args_may_be_a_yaml_mapping(tmp_path: Path) -> None:
    from taxpraben.config import config_values
    from taxpraben.models.model_args import parse_model_args
    from taxpraben.options import ModelOptions

    mapping = {"dtype": "bfloat16", "max_memory": {"0": "20GiB", "cpu": "30GiB"},
               "chat_template_kwargs": {"enable_thinking": False}, "revision": "a,b"}  # fmt: skip
    values = config_values({"model": "hf:x", "model_args": mapping}, [ModelOptions], source=tmp_path / "c.yaml")
    assert parse_model_args(str(values["model_args"])) == mapping


def test_no_other_key_of_a_config_file_runs_code(tmp_path: Path) -> None:
    """Only serve and model_args (trust_remote_code) run code (EXECUTED_KEYS, gated above); the
    other files a configuration can name are read as data (issue 45 item 2): a plugin module is
    no key of any file (plugins come from $TAXPRABEN_PLUGINS and entry points only), a pricing
    file's YAML tags are refused by the safe loader, a judge prompt's placeholders are replaced
    literally (no format(), no template engine)."""
    from taxpraben.costs.pricing import PricingError, load_pricing
    from taxpraben.judge.prompt import parse_prompt
    from taxpraben.options import EXECUTED_KEYS

    assert EXECUTED_KEYS == ("serve", "model_args")
    marker = tmp_path / "ran"
    for key in ("plugins", "taxpraben_plugins"):
        code, output = invoke("run", "--config", str(write_config(tmp_path / f"{key}.yaml", {**BASE, key: "os"})),
                              "--out", str(tmp_path / "out"))  # fmt: skip
        assert code == 2 and f"unknown key {key!r}" in output, output
    pricing = tmp_path / "pricing.yaml"
    pricing.write_text(f'!!python/object/apply:os.system ["touch {marker}"]\n', encoding="utf-8")
    with pytest.raises(PricingError):
        load_pricing(pricing)
    code, output = invoke("run", "--config", str(write_config(tmp_path / "p.yaml", {**BASE, "pricing": str(pricing)})),
                          "--out", str(tmp_path / "out2"))  # fmt: skip
    assert code != 0 and not marker.exists(), output
    prompt = parse_prompt("问题：{question}\n{__import__('os').system('touch x')}\n输出：{output}")
    assert "{__import__('os').system('touch x')}" in prompt.template

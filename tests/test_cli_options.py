"""The command-line options: scoring options declared once and shared, help in panels."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from taxpraben.cli import app
from taxpraben.commands.options import rich_help, with_options
from taxpraben.metrics.defaults import (
    DEFAULT_BARTSCORE_MODEL,
    DEFAULT_BERTSCORE_LAYER,
    DEFAULT_BERTSCORE_MODEL,
)
from taxpraben.options import (
    BatchOptions,
    BudgetOptions,
    DataOptions,
    EndpointOptions,
    GateOptions,
    GenerationOptions,
    JudgeOptions,
    MergeInputOptions,
    ModelOptions,
    PricingOptions,
    RunOutputOptions,
    ScoreInputOptions,
    ScoringOptions,
    TrackerOptions,
    brief_help,
    check_options,
    declared_options,
    option_values,
)
from taxpraben.scoring import ScoringSettings

runner = CliRunner()
COMMAND: Any = typer.main.get_command(app)  # a group: its commands by name

#: Every scoring option, as a user types it.
SCORING_FLAGS = {
    "--profile", "--bertscore-model", "--bertscore-layer", "--bertscore-max-tokens", "--bertscore-idf",
    "--bertscore-batch-size", "--bartscore-model", "--bartscore-weights", "--device", "--scorer-dtype",
    "--no-semantic",
}  # fmt: skip


def options_of(command: str) -> dict[str, Any]:
    return {p.opts[0]: p for p in COMMAND.commands[command].params if p.opts[0].startswith("--")}


def describe(p: Any) -> tuple[object, ...]:
    """What a user sees of an option: names, environment variable, default, help, type, bounds."""
    return (p.name, tuple(p.opts), p.envvar, p.default, p.help, p.type.name, bounds(p), p.is_flag, p.required)


def bounds(p: Any) -> tuple[object, object]:
    """An option's range: its click type's (an IntRange or FloatRange; typer below 0.29)."""
    return getattr(p.type, "min", None), getattr(p.type, "max", None)


def test_run_score_and_merge_offer_the_same_scoring_options() -> None:
    seen = {name: {flag: describe(p) for flag, p in options_of(name).items() if flag in SCORING_FLAGS}
            for name in ("run", "score", "merge")}  # fmt: skip
    assert set(seen["run"]) == SCORING_FLAGS
    assert seen["run"] == seen["score"] == seen["merge"]
    bert_layer = options_of("score")["--bertscore-layer"]
    assert (bert_layer.default, bert_layer.envvar) == (DEFAULT_BERTSCORE_LAYER, "TAXPRABEN_BERTSCORE_LAYER")
    assert options_of("run")["--bertscore-model"].default == DEFAULT_BERTSCORE_MODEL
    assert options_of("merge")["--bartscore-model"].default == DEFAULT_BARTSCORE_MODEL


def test_default_options_give_the_default_settings() -> None:
    assert ScoringOptions().settings(seed=3, runs=2) == ScoringSettings(seed=3, runs=2, progress=True)
    flags = {f.name for f in dataclasses.fields(ScoringOptions)}
    assert {"--" + name.replace("_", "-") for name in flags} == SCORING_FLAGS


def test_invalid_options_are_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown scoring profile 'helm'; choose one of taxpraben, taxben"):
        ScoringOptions(profile="helm").settings(seed=0, runs=None)
    with pytest.raises(ValueError, match="choose one of float32, tf32, bf16"):
        ScoringOptions(scorer_dtype="fp16").settings(seed=0, runs=None)


def toy_app(received: list[tuple[str, ScoringOptions, int]]) -> typer.Typer:
    """A one-command app whose command records what it was given."""
    toy = typer.Typer()

    @toy.command()
    @with_options
    def toy_command(name: str = "x", *, scoring: ScoringOptions, seed: int = 0) -> None:
        received.append((name, scoring, seed))

    return toy


def test_the_command_receives_the_options_gathered(tmp_path: Path) -> None:
    received: list[tuple[str, ScoringOptions, int]] = []
    weights = tmp_path / "bart_score.pth"
    args = ["--name", "n", "--profile", "taxben", "--bertscore-layer", "3", "--no-semantic",
            "--bartscore-weights", str(weights), "--seed", "9"]  # fmt: skip
    res = runner.invoke(toy_app(received), args, env={"TAXPRABEN_BERTSCORE_MODEL": "some/model"})
    assert res.exit_code == 0, res.output
    assert received == [
        ("n", ScoringOptions(profile="taxben", bertscore_model="some/model", bertscore_layer=3,
                             bartscore_weights=weights, no_semantic=True), 9),
    ]  # fmt: skip
    settings = received[0][1].settings(seed=9, runs=None)
    assert (settings.semantic, settings.bertscore_layer, settings.bertscore_model) == (False, 3, "some/model")


def test_the_options_called_from_python_take_their_defaults() -> None:
    received: list[tuple[str, ScoringOptions, int]] = []
    toy = toy_app(received)
    callback = toy.registered_commands[0].callback
    assert callback is not None
    callback(name="direct", device="cpu")
    assert received == [("direct", ScoringOptions(device="cpu"), 0)]


def test_a_command_without_the_scoring_parameter_is_refused() -> None:
    def plain(name: str = "x") -> None: ...

    with pytest.raises(TypeError, match="no option-group parameter"):
        with_options(plain)


def panel_titles(help_text: str) -> list[str]:
    """The titles of the help's panels (``╭─ Title ───╮``), top to bottom."""
    return [line.strip("╭─╮ ").strip() for line in help_text.splitlines() if line.startswith("╭─")]


@pytest.mark.parametrize(
    ("command", "panels"),
    [
        ("run", ["Model", "Data", "Generation", "Endpoint and retries", "Scoring", "Output", "Cost and budget"]),
        ("score", ["Data", "Scoring", "Output", "Cost and budget"]),
        ("merge", ["Data", "Scoring", "Output", "Cost and budget"]),
    ],
)
def test_help_is_in_panels_at_80_columns(command: str, panels: list[str]) -> None:
    res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    titles = panel_titles(res.output)
    # "Options" holds --help alone; merge's SOURCES sit in "Arguments"
    assert [t for t in titles if t not in ("Options", "Arguments")] == panels
    for flag in SCORING_FLAGS:
        assert flag in res.output


def test_every_run_option_is_in_a_named_panel() -> None:
    unpanelled = [p.opts[0] for p in COMMAND.commands["run"].params
                  if p.opts[0] != "--help" and not getattr(p, "rich_help_panel", None)]  # fmt: skip
    assert unpanelled == []


#: The option groups each command takes, in its signature's order.
GROUPS = {
    "run": [ModelOptions, DataOptions, GenerationOptions, EndpointOptions, ScoringOptions, RunOutputOptions,
            BatchOptions, PricingOptions, BudgetOptions, GateOptions, TrackerOptions, JudgeOptions],
    "score": [DataOptions, ScoreInputOptions, ScoringOptions, PricingOptions, GateOptions, TrackerOptions,
              JudgeOptions],
    "merge": [DataOptions, MergeInputOptions, ScoringOptions, PricingOptions, GateOptions, TrackerOptions,
              JudgeOptions],
}


@pytest.mark.parametrize("command", sorted(GROUPS))
def test_every_option_of_a_command_is_its_declaration(command: str) -> None:
    """The command line is derived: each parameter of run/score/merge is one declared option,
    with the declaration's flag, help, panel, environment variable, bounds and default."""
    declared = {f.name: (d, f.default) for group in GROUPS[command] for f, d, _ in declared_options(group)}
    params = {p.name: p for p in COMMAND.commands[command].params if p.name not in ("help", "config", "trust_config")}
    assert set(params) == set(declared)
    for name, p in params.items():
        d, default = declared[name]
        if d.argument:
            assert p.required and p.help == d.help
            continue
        assert p.opts[0] == d.flag and (d.short is None or d.short in p.opts)
        assert (p.help, p.rich_help_panel, p.envvar) == (rich_help(brief_help(d)), d.panel, d.envvar)
        assert bounds(p) == (d.min, d.max)
        if default is not dataclasses.MISSING:
            assert p.default == default, name
        else:
            assert p.required, name


def test_only_the_commands_that_take_serve_take_trust_config() -> None:
    """--trust-config lets a configuration file give --serve's shell command: it is a flag of
    the command line only (no file can trust itself), on the commands that have --serve."""
    having = {name for name, command in COMMAND.commands.items() if any(p.name == "trust_config" for p in command.params)}
    assert having == {"run", "estimate"}
    trust = next(p for p in COMMAND.commands["run"].params if p.name == "trust_config")
    assert trust.opts == ["--trust-config"] and trust.default is False


def test_groups_built_in_python_are_checked_like_the_command_line() -> None:
    check_options(GenerationOptions(runs=2, gen_kwargs='{"enable_thinking": false}'))
    with pytest.raises(ValueError, match="--runs: 0 is below the minimum 1"):
        check_options(GenerationOptions(runs=0))
    with pytest.raises(ValueError, match=r"--gen-kwargs: .*JSON object"):
        check_options(GenerationOptions(gen_kwargs="[1]"))
    with pytest.raises(ValueError, match=r"--shard: .*expected I/N"):
        check_options(RunOutputOptions(shard="2"))
    with pytest.raises(ValueError, match="--profile: unknown scoring profile 'helm'"):
        check_options(ScoringOptions(profile="helm"))


def test_option_values_are_the_manifest_form(tmp_path: Path) -> None:
    values = option_values(DataOptions(data="sample", task_dir=[tmp_path], limit=3))
    assert values == {"data": "sample", "tasks": None, "allow_missing": False, "limit": 3, "task_dir": [str(tmp_path)]}
    assert DataOptions(data="x", tasks=" TaxCalc, ,TaxQA").task_names == ["TaxCalc", "TaxQA"]


def test_two_groups_with_one_option_name_are_refused() -> None:
    def both(*, a: ScoreInputOptions, b: MergeInputOptions) -> None: ...

    with pytest.raises(TypeError, match="two options named"):
        with_options(both)


#: The most lines `run --help` may take at 80 columns. It has 68 options in 8 panels: a line for
#: each option's flag and brief, a second for a brief that wraps or for what typer adds (the
#: environment variable, the default), and the panels' borders come to about 200; the help in
#: full is docs/options.md. It was 437 lines, with descriptions cut by "…" (issue 45, item 9).
RUN_HELP_LINES = 200


def test_run_help_is_short_and_names_every_option() -> None:
    res = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    assert len(res.output.splitlines()) <= RUN_HELP_LINES
    assert "…" not in res.output and "docs/options.md" in res.output
    flat = re.sub(r"\s*│\s*", " ", res.output)
    for param in COMMAND.commands["run"].params:
        for flag in [*param.opts, *param.secondary_opts]:
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", flat), flag


def test_docs_options_md_is_the_declarations() -> None:
    """docs/options.md holds every option's help in full (--help shows its brief)."""
    from taxpraben.options import options_markdown

    path = Path(__file__).resolve().parents[1] / "docs" / "options.md"
    assert path.read_text(encoding="utf-8") == options_markdown() + "\n"
    for param in COMMAND.commands["run"].params:
        if param.name not in ("help", "config", "trust_config"):
            assert f"`{param.opts[0]}" in path.read_text(encoding="utf-8"), param.opts[0]

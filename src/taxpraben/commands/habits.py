"""The command line's classes: help for habits brought from other harnesses, and errors
printed whole when stderr is not a terminal.

An option lm-evaluation-harness users type (``--output_path``, ``--log_samples``,
``--batch_size``, ``--apply_chat_template``, ``--verbosity``, ...) is answered with what
taxpraben does instead (:data:`HABITS`); any ``--snake_case`` spelling of an option the
command has is answered with its ``--kebab-case`` name. Click's own guess (its closest
spelling: ``--output-path`` -> ``--top-p``) is dropped where a habit answers.

Piped or redirected, typer's error box would be wrapped at 80 columns; the error is then
printed as click prints it, one line per message.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer.core
from typer._click.core import Context as ClickContext
from typer._click.exceptions import NoSuchOption
from typer._click.formatting import HelpFormatter

#: lm-eval's options (either spelling): the option of ours the answer names (None: none), and
#: the answer. An answer naming an option the command does not have is not given.
_OUT = ("--out", "use --out DIR (or -o DIR)")
_LOG = (None, "no option needed: every item is always written to OUT/samples.jsonl")
_BATCH = ("--concurrency", "use --concurrency N (requests in flight; hf: prompts per batch)")
_TEMPLATE = ("--chat-template", "hf: the tokenizer's chat template is applied when it has one; --chat-template "
             "requires it, --no-chat-template sends the raw query")  # fmt: skip
_VERBOSITY = (None, "taxpraben has no log level: warnings and the summary are always printed "
              "(`taxpraben report --quiet` prints only the paths written)")  # fmt: skip
_FEWSHOT = (None, "TaxPraBen is zero-shot: each record's query is sent as it is")
HABITS: dict[str, tuple[str | None, str]] = {
    "--output_path": _OUT, "--output-path": _OUT, "--log_samples": _LOG, "--log-samples": _LOG,
    "--batch_size": _BATCH, "--batch-size": _BATCH, "--apply_chat_template": _TEMPLATE,
    "--apply-chat-template": _TEMPLATE, "--verbosity": _VERBOSITY, "--num_fewshot": _FEWSHOT,
    "--num-fewshot": _FEWSHOT,
}  # fmt: skip


def habit_hint(option: str, known: Sequence[str]) -> str | None:
    """What to type instead of ``option`` (an option this command does not have), or None."""
    name = option.split("=", 1)[0]
    needs, answer = HABITS.get(name, (None, ""))
    if answer and (needs is None or needs in known):
        return answer
    kebab = name.replace("_", "-")
    if kebab != name and kebab in known:
        return f"use {kebab}"
    return None


def fold_long_words_in_help() -> None:
    """Typer's help cuts a word longer than the description column with "…" (a model kind,
    the default base URL, an environment variable's name: read cut, they are wrong). Its
    option help becomes text that folds such a word onto the next line instead. Typer is
    pinned below 0.29 (pyproject), whose ``rich_utils._get_parameter_help`` this wraps."""
    from rich.text import Text
    from typer import rich_utils

    original = rich_utils._get_parameter_help
    if getattr(original, "folds", False):
        return

    def folded(**kwargs: Any) -> Any:
        columns = original(**kwargs)
        for item in getattr(columns, "renderables", ()):
            if isinstance(item, Text):
                item.overflow = "fold"
        return columns

    folded.folds = True  # type: ignore[attr-defined]  # a mark on the function: wrapped once
    rich_utils._get_parameter_help = folded


class HabitCommand(typer.core.TyperCommand):
    """A command whose unknown options are answered with :func:`habit_hint` when it has one,
    and whose help folds long words rather than cutting them (:func:`fold_long_words_in_help`)."""

    def format_help(self, ctx: ClickContext, formatter: HelpFormatter) -> None:
        fold_long_words_in_help()
        super().format_help(ctx, formatter)

    def parse_args(self, ctx: ClickContext, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as exc:
            known = [opt for param in self.get_params(ctx) for opt in [*param.opts, *param.secondary_opts]]
            hint = habit_hint(exc.option_name, known)
            if hint is None:
                raise
            raise NoSuchOption(exc.option_name, f"No such option: {exc.option_name}: {hint}.", ctx=ctx) from None


def _is_terminal(stream: object) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


class PlainErrorsGroup(typer.core.TyperGroup):
    """The app: a usage error goes to a terminal in typer's box, elsewhere as plain lines."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, windows_expand_args: bool = True,
             **extra: Any) -> Any:  # fmt: skip
        return typer.core._main(
            self, args=args, prog_name=prog_name, complete_var=complete_var, standalone_mode=standalone_mode,
            windows_expand_args=windows_expand_args,
            rich_markup_mode=self.rich_markup_mode if _is_terminal(sys.stderr) else None, **extra,
        )  # fmt: skip

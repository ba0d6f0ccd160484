"""The checks and parsers of option values that more than one group uses: a choice among names,
shards, generation and model arguments, a serving command, devices, limits, thresholds, trackers and
judge specs. A check raises ``ValueError`` with the message the user reads."""

from __future__ import annotations

from collections.abc import Callable

from taxpraben.compute.devices import parse_devices


def one_of(choices: tuple[str, ...], what: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        if value not in choices:
            raise ValueError(f"unknown {what} {value!r}; choose one of {', '.join(choices)}")

    return check


def check_shard(text: str) -> None:
    from taxpraben.run.shards import parse_shard

    parse_shard(text)


def check_gen_kwargs(text: str) -> None:
    from taxpraben.models.base import parse_gen_kwargs

    parse_gen_kwargs(text)


def check_model_args(text: str) -> None:
    from taxpraben.models.model_args import parse_model_args

    parse_model_args(text)


def check_serve(text: str) -> None:
    from taxpraben.run.serve import served_port

    served_port(text)


def check_devices(text: str) -> None:
    parse_devices(text)


#: The largest ``--limit`` count: no task holds more (1e30 is a typo, not a plan).
MAX_LIMIT = 10**9


def check_limit(value: float) -> None:
    """``--limit``: a count (an integer >= 1) or a fraction in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number; give a count such as 50 or a fraction such as 0.1")
    if value <= 0:
        raise ValueError(f"{value:g} is not a count (an integer >= 1) nor a fraction in (0, 1)")
    if value >= 1 and value != int(value):
        raise ValueError(f"{value:g} is neither a count (an integer >= 1) nor a fraction in (0, 1)")
    if value > MAX_LIMIT:
        raise ValueError(f"{value:g} is more records than any task holds (at most {MAX_LIMIT:,}); leave --limit out "
                         "to use every record")  # fmt: skip


def parse_threshold(text: str) -> tuple[str | None, float]:
    """``--fail-under``'s value: ``X`` (the Overall Average) or ``TASK=X``, X in [0, 1] (the
    results' own scale, not points); ValueError saying what is wrong."""
    task, sep, number = text.rpartition("=")
    task = task.strip()
    if sep and not task:
        raise ValueError(f"{text!r}: give TASK=X (e.g. TaxCalc=0.8) or X alone for the Overall Average")
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"{text!r}: {number.strip()!r} is not a number; give X or TASK=X, X in [0, 1]") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(
            f"{text!r}: {value:g} is out of range: a threshold is in the results' 0-1 scale (0.8, not 80)"
        )
    return (task or None), value


def check_threshold(text: str) -> None:
    parse_threshold(text)


TRACKERS = ("wandb", "mlflow")


def parse_trackers(values: list[str] | None) -> list[str]:
    """``--log``'s values (repeated, or comma-separated) as tracker names, each once, in
    order; ValueError naming an unknown one and the choices."""
    names: list[str] = []
    for value in values or []:
        for name in (part.strip().lower() for part in value.split(",")):
            if not name:
                continue
            if name not in TRACKERS:
                raise ValueError(f"unknown tracker {name!r}; choose one of {', '.join(TRACKERS)} "
                                 "(repeat --log, or separate them by commas)")  # fmt: skip
            if name not in names:
                names.append(name)
    return names


def check_trackers(value: str) -> None:
    parse_trackers([value])


def check_judge_spec(text: str) -> None:
    kind, sep, name = text.partition(":")
    if not sep or not kind.strip() or not name.strip():
        raise ValueError(f"{text!r}: give a model spec KIND:NAME, e.g. openai:qwen2.5-72b-instruct or hf:PATH")

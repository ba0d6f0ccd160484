"""The executable pauses the cyclic collector while a command loads (taxpraben.__main__,
taxpraben.terminal.collector)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.probes import probe
from taxpraben.terminal import collector


@pytest.fixture
def gc_state() -> Iterator[None]:
    """The collector as it was, afterwards (running, nothing frozen by the test)."""
    was = gc.isenabled()
    yield
    gc.unfreeze()
    collector._paused = False
    (gc.enable if was else gc.disable)()


def test_resume_freezes_what_was_loaded_and_collects_again(gc_state: None) -> None:
    gc.enable()
    collector.pause_collection()
    assert not gc.isenabled()
    loaded = [[n] for n in range(1000)]  # what a command loads, while nothing is collected
    collector.resume_collection()
    assert gc.isenabled() and gc.get_freeze_count() >= len(loaded)
    frozen = gc.get_freeze_count()
    more = [[n] for n in range(1000)]  # loaded after the pause ended
    collector.resume_collection()  # once only: what came after is not frozen
    # (frozen objects that other threads free may lower the count; a second freeze would raise it by `more`)
    assert gc.get_freeze_count() < frozen + len(more) and gc.isenabled()


def test_only_a_pause_of_its_own_is_resumed(gc_state: None) -> None:
    gc.enable()
    gc.unfreeze()
    collector.resume_collection()  # nothing paused: a library user's process is left alone
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()  # paused by someone else: not ours to resume
    collector.pause_collection()
    collector.resume_collection()
    assert not gc.isenabled() and gc.get_freeze_count() == 0


PROBE = """
import gc, json, os, sys
import taxpraben.cli as cli
import taxpraben.run.runner as runner

seen = {}
build = cli.build_app

def build_app(only=None):
    app = build(only)
    def invoke():
        seen["at_invoke"] = gc.isenabled()
        if only != "run":
            print(json.dumps(seen), flush=True)
            os._exit(0)
        app()
    seen["while_loading"] = gc.isenabled()
    return invoke

def first_request(self, requests):
    seen["at_first_request"] = gc.isenabled()
    seen["frozen"] = gc.get_freeze_count()
    print(json.dumps(seen), flush=True)
    os._exit(0)

cli.build_app = build_app
runner.Runner.run = first_request
sys.argv = ["taxpraben", *sys.argv[1:]]
from taxpraben.__main__ import main
main()
"""


def test_run_loads_with_the_collector_paused_and_sends_with_it_running(tmp_path: Path) -> None:
    seen = probe(PROBE, "run", "--model", "baseline:oracle", "--data", "sample", "--limit", "1", "--no-cache",
                 "--out", str(tmp_path / "out"))  # fmt: skip
    assert seen["while_loading"] is False and seen["at_invoke"] is False
    assert seen["at_first_request"] is True and isinstance(seen["frozen"], int) and seen["frozen"] > 10_000


def test_every_other_command_runs_with_the_collector_running() -> None:
    seen = probe(PROBE, "tasks")
    assert seen == {"while_loading": False, "at_invoke": True}

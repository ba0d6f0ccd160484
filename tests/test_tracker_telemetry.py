"""The trackers' libraries send their vendors no telemetry of their own: taxpraben turns it off
(when the user has not said otherwise) before it imports them."""

from __future__ import annotations

import os

import pytest

from taxpraben.jobs.trackers import TELEMETRY_OFF, require_trackers, telemetry_off
from taxpraben.options import TrackerOptions

VARIABLES = [name for names in TELEMETRY_OFF.values() for name in names]


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.setenv(name, "placeholder")  # recorded, so that the test's own changes are undone
        monkeypatch.delenv(name)


def test_the_variables_are_the_ones_the_libraries_read() -> None:
    mlflow_variables = pytest.importorskip("mlflow.environment_variables")
    wandb_env = pytest.importorskip("wandb.env")
    assert TELEMETRY_OFF["mlflow"] == {mlflow_variables.MLFLOW_DISABLE_TELEMETRY.name: "true"}
    assert TELEMETRY_OFF["wandb"] == {wandb_env.ERROR_REPORTING: "false"}


def test_starting_mlflow_turns_its_telemetry_off(clean_environment: None) -> None:
    pytest.importorskip("mlflow")
    assert require_trackers(TrackerOptions(log=["mlflow"])) == ["mlflow"]
    assert os.environ["MLFLOW_DISABLE_TELEMETRY"] == "true"
    assert "WANDB_ERROR_REPORTING" not in os.environ  # only the tracker named


def test_a_users_own_setting_is_kept(clean_environment: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "false")
    assert telemetry_off("mlflow") == {}
    assert os.environ["MLFLOW_DISABLE_TELEMETRY"] == "false"
    assert telemetry_off("wandb") == {"WANDB_ERROR_REPORTING": "false"}
    assert os.environ["WANDB_ERROR_REPORTING"] == "false"

"""The issue-12 benchmarks run end to end on CPU with tiny models (on a GPU: --device cuda).

They are measuring scripts, so only what does not depend on the machine is asserted: the
workload is the pipeline's, float32 scores equal the references on it, every variant ran and
counted its tokens.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import gpu_scoring
import hf_generation


@pytest.mark.slow
def test_gpu_scoring_tiny_matches_the_references(tmp_path: Path) -> None:
    out = tmp_path / "scoring.json"
    code = gpu_scoring.main(["--tiny", "--scale", "0.01", "--repeat", "1", "--dtypes", "float32,bf16",
                             "--reference-stride", "2", "--json", str(out)])  # fmt: skip
    assert code == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    work = figures["workload"]
    assert 0 < work["bert_distinct"] <= work["bert_pairs"] and 0 < work["bart_distinct"] <= work["bart_pairs"]
    assert set(figures["taxpraben"]) == {"float32", "bf16"}
    exact = figures["float32_vs_reference"]
    assert exact["bertscore_f1"]["max_abs_pair"] < 1e-6
    assert exact["bartscore_raw"]["max_abs_pair"] < 1e-5
    assert figures["reference"]["timed_pairs"]["neulab"] == (work["bart_distinct"] + 1) // 2
    bf16 = figures["taxpraben"]["bf16"]["bertscore_f1_vs_float32"]
    assert 0 < bf16["max_abs_task_mean"] <= bf16["max_abs_pair"] < 0.05


@pytest.mark.slow
def test_hf_generation_tiny_counts_every_token(tmp_path: Path) -> None:
    out = tmp_path / "generation.json"
    code = hf_generation.main(["--tiny", "--max-new-tokens", "3", "--before-items", "12",
                               "--json", str(out)])  # fmt: skip
    assert code == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    n = figures["prompts"]["n"]
    assert figures["before"]["items"] == 12 and 0 < figures["before"]["tokens"] <= 12 * 3
    for variant in figures["taxpraben"].values():
        assert variant["static_cache"] is False  # CPU: the dynamic cache
        assert variant["attention"] == "sdpa"
        assert 0 < variant["tokens"] <= n * 3


@pytest.mark.slow
def test_gpu_scoring_devices_times_each_device_value(tmp_path: Path) -> None:
    out = tmp_path / "devices.json"
    code = gpu_scoring.main(["--tiny", "--scale", "0.01", "--repeat", "1", "--devices", "cpu", "cpu,cpu",
                             "--json", str(out)])  # fmt: skip
    assert code == 0
    figures = json.loads(out.read_text(encoding="utf-8"))
    one, two = figures["devices"]["cpu"], figures["devices"]["cpu,cpu"]
    assert one["devices"] == ["cpu"] and two["devices"] == ["cpu", "cpu"]
    assert "speedup" not in one and two["speedup"] == pytest.approx(one["total_s"] / two["total_s"])
    # Two workers score what one does, up to float rounding (their batches differ).
    assert two["bertscore_f1_vs_first"]["max_abs_pair"] < 1e-6
    assert two["bartscore_raw_vs_first"]["max_abs_pair"] < 1e-5
    assert "taxpraben" not in figures and "reference" not in figures  # the scaling alone

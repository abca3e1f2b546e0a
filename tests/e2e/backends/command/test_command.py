"""``--command`` trials: the device-side sh sampler under mksh, dash and busybox sh, the shipped step patterns on real
tool output, and ``edgebench run --command`` end to end on the local target.  The end-to-end half: what runs the
real command, a real worker or another process; the rest is in tests/unit/backends/command/test_command.py.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.paths import FIXTURES


def test_run_command_end_to_end_stores_a_result(cli, tmp_path: Path):
    out = FIXTURES / "command" / "tflite_benchmark_model.out"
    proc = cli(
        "run", "--command", "cat bench.out", "--push", f"{out}:bench.out", "--step-pattern", "tflite-benchmark-model",
        "--model", "mobilenet_v1_tflite", "--batch-size", "1", "--idle", "0", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (
        result["status"] == "ok"
        and result["trial"]["backend"] == "command"
        and result["trial"]["model"] == "mobilenet_v1_tflite"
    )
    assert result["latency"]["step_ms"]["mean"] == pytest.approx(65.3612) and result["latency"]["step_ms"]["n"] == 50
    assert result["device"]["extra"]["step_times"] == "mean only"
    # one printed mean is not 50 steps: no spread and no predictability are made up from it
    assert result["latency"]["step_ms"]["std"] is None and result["latency"]["step_ms"]["cv"] is None
    assert result["predictability"] is None and result["latency"]["throughput_sps"] is not None  # --batch-size 1
    with sqlite3.connect(cli.store_path) as db:
        ids = [row[0] for row in db.execute("select trial_id from trials")]
    assert result["trial_id"] in ids


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--command", "true", "--backend", "torch", "--step-pattern", "x"), "--backend: --command runs your own"),
        (("--command", "true"), "--step-pattern: a command trial needs --step-pattern"),
        (("--step-pattern", "x"), "--step-pattern: only a --command trial uses it"),
        (("--command", "true", "--step-pattern", "x", "--push", "/no/such/file"), "--push"),
    ],
)
def test_command_nonsense_is_refused_in_one_line(cli, args: tuple[str, ...], message: str):
    proc = cli("run", *args)
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1

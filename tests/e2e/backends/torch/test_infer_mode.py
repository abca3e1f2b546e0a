"""``--mode infer`` and ``--precision int8`` on the torch backend, and how both are declared and refused.  The end-to-
end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/backends/torch/test_infer_mode.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from edgebench.records.events import measured_steps, parse_events, steps_of
from edgebench.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return tmp_path_factory.mktemp("infer-store") / "store.sqlite"


def run_json(store, *args):
    env = dict(os.environ, EDGEBENCH_STORE=str(store))
    proc = subprocess.run([sys.executable, "-m", "edgebench", "run", "--json", *args], capture_output=True,
                          text=True, env=env, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def inferred(store):
    return run_json(store, "-m", "lenet", "-b", "4", "--mode", "infer", "--steps", "4", "--warmup", "2")


def test_an_inference_trial_times_forward_passes_only(store, inferred):
    assert inferred["status"] == "ok" and inferred["trial"]["mode"] == "infer"
    assert (
        inferred["latency"]["step_ms"] == inferred["latency"]["infer_ms"] and inferred["latency"]["step_ms"]["n"] == 4
    )
    assert inferred["loss"] is None  # no training step ran
    assert inferred["memory"]["peak_bytes"] == inferred["memory"]["infer_peak_bytes"]
    with Store(store) as db:
        events = parse_events(db.series(inferred["trial_id"], "events"))
    assert len(steps_of(events, "infer_warmup")) == 2 and len(steps_of(events, "infer")) == 4
    assert not steps_of(events, "train") and not steps_of(events, "warmup")
    assert measured_steps(events) == steps_of(events, "infer")

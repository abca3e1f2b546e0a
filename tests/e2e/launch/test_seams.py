"""The agent command run for real in a child process: it runs a trial and prints the bundle the workstation measures.
The seams' in-process tests are in tests/unit/launch/test_seams.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from edgebench.launch.trial import resolve_placement
from edgebench.measure.trial import measure
from edgebench.records.bundle import TrialBundle
from edgebench.records.events import Ready
from edgebench.records.trial import Trial


def test_the_agent_command_runs_a_trial_and_prints_a_bundle_the_workstation_measures(tmp_path):
    trial = resolve_placement(Trial(model="lenet", batch_size=2, steps=2, warmup=1, infer_steps=1, idle_s=0.2))
    proc = subprocess.run(
        [sys.executable, "-m", "edgebench.agents.python.agent", "-"],
        input=trial.model_dump_json(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    bundle = TrialBundle.model_validate_json(proc.stdout)
    assert bundle.failure is None and bundle.trial == trial
    kinds = [e.event for e in bundle.events]
    assert kinds[:2] == ["ready", "idle"] and kinds[-1] == "done"  # idle on the worker's clock, after ready
    ready = bundle.events[0]
    assert isinstance(ready, Ready) and ready.params == 349_980
    assert bundle.env["cpu_count"] >= 1 and bundle.sampler_meta is not None
    assert bundle.samples_csv.startswith("t_ns,")
    r = measure(bundle, "20260101-000000-0002")
    assert r.ok and r.latency.step_ms.n == 2 and r.energy.idle_window_s == pytest.approx(0.2, abs=0.05)

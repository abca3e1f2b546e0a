"""Two identical sweeps started at the same moment on one store: every planned trial runs once, not twice."""

from __future__ import annotations

import sqlite3

from tests.sweeping import start_sweep

# The fake backend: the race is the store's and the sweep's, not the framework's.
CONFIG = """
name: twice
models: [lenet]
batch_sizes: [1, 2, 4]
backend: fake
steps: 2
warmup: 1
infer_steps: 0
idle: 0
"""


def test_two_identical_sweeps_at_once_run_each_trial_once(cli, tmp_path):
    config = tmp_path / "grid.yaml"
    config.write_text(CONFIG)
    first, second = start_sweep(cli, str(config)), start_sweep(cli, str(config))
    outputs = [first.communicate(timeout=300), second.communicate(timeout=300)]
    for proc, (_, err) in zip((first, second), outputs, strict=True):
        assert proc.returncode in (0, 2), err  # 2: it started after the other stored a trial, and says --resume
    db = sqlite3.connect(tmp_path / "store.sqlite")
    keys = [r[0] for r in db.execute("SELECT trial_key FROM sweep_trials")]
    assert len(keys) == 3 and len(set(keys)) == 3, keys
    assert db.execute("SELECT count(*) FROM trials").fetchone()[0] == 3
    assert db.execute("SELECT count(*) FROM sweep_claims").fetchone()[0] == 0  # both let go of their claims

"""A sweep sets what only ``run`` could set before (trace, preset, data, memory budget, idle, estimated energy),
as constants and as an axis: planned, run end to end with real workers, stored, and resumed by the same keys."""

import os

import pytest

from edgebench.config.sweep_file import load_config
from edgebench.host.sysfs import SysFS
from edgebench.store import Store
from edgebench.sweep.plan import plan

# Two tiny trials: one LeNet on real MNIST, every new key a constant but the idle baseline, an axis.
CONFIG = """
models: lenet
batch_sizes: 2
steps: 2
warmup: 1
infer_steps: 0
preset: mnist
data: mnist
memory_budget: 4GiB
estimate_energy: idle=2W,max=6W
min_time: auto
trace: layers
idle: [0, 200ms]
"""
POWER_MODEL = "idle=2W,max=6W"


@pytest.fixture(scope="module")
def swept(cli_factory):
    """The sweep run once for this module: its config file, the harness on its store, plan and stored results."""
    cli = cli_factory("sweep_settings", columns=160)
    config, store = cli.store_path.parent / "settings.yaml", cli.store_path
    config.write_text(CONFIG)
    proc = cli("sweep", str(config))
    assert proc.returncode == 0, proc.stderr
    planned = plan(load_config(config).config, source=config, sysfs=SysFS("/"), allowed=tuple(os.sched_getaffinity(0)))
    with Store(store) as db:
        results = db.query(sweep_id=planned.sweep_id)
    return config, cli, planned, results


def test_the_plan_carries_every_new_key(swept):
    _, _, planned, _ = swept
    trials = [p.trial for p in planned.trials]
    assert [t.idle_s for t in trials] == [0.0, 0.2]  # the axis, in the order written
    for t in trials:
        assert (t.preset, t.data, t.trace) == ("mnist", "mnist", "layers")
        assert t.memory_budget_bytes == 4 * 2**30
        assert t.estimate_energy == POWER_MODEL


def test_the_stored_trials_carry_them(swept):
    _, _, planned, results = swept
    assert len(results) == 2 and all(r.ok for r in results)
    by_key = {r.sweep.trial_key: r for r in results}
    assert set(by_key) == {p.key for p in planned.trials}
    no_idle, idle = (by_key[p.key] for p in planned.trials)
    for r in results:
        assert (r.trial.preset, r.trial.data, r.trial.memory_budget_bytes) == ("mnist", "mnist", 4 * 2**30)
        assert r.trace_summary is not None and r.trace_summary.granularity == "layers" and r.trace_summary.spans > 0
        assert r.estimated_energy is not None and "2 W" in r.estimated_energy.source
    assert no_idle.energy.idle_window_s is None
    assert idle.energy.idle_window_s == pytest.approx(0.2, abs=0.1)


def test_resume_finds_every_trial_stored(swept):
    config, cli, _, _ = swept
    proc = cli("sweep", str(config), "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "0 trials run, 2 already stored" in proc.stdout

"""Sweep execution with a stand-in launcher: failures, resume, interruption, and the device put back every time."""

import itertools
import os
import shutil
import signal

import pytest

from edgebench.config.sweep_file import CooldownConfig, load_config
from edgebench.errors import UsageError
from edgebench.host.sysfs import SysFS
from edgebench.launch.cooldown import Cooler
from edgebench.records.finished import FinishedTrial
from edgebench.records.result import Latency
from edgebench.store import Store
from edgebench.sweep.execute import run_sweep
from edgebench.sweep.plan import plan
from edgebench.targets.local import LocalTarget
from tests.factories import events, result, with_context

POLICY = "sys/devices/system/cpu/cpufreq/policy0"


class FakeRunner:
    """Stands in for run_trial: returns a made-up result at once, or fails the way it is told to on trial n."""

    ids = itertools.count()

    def __init__(self, fail_on: dict[int, object] | None = None, on_call=None) -> None:
        self.calls: list = []
        self.fail_on = fail_on or {}
        self.on_call = on_call

    def __call__(self, trial, *, target, sample=True, context=None):
        n = len(self.calls)
        self.calls.append(trial)
        if self.on_call:
            self.on_call(trial, str(target.sysfs().root))
        action = self.fail_on.get(n)
        if isinstance(action, BaseException | type):
            raise action
        steps = [10.0 + trial.batch_size, 11.0 + trial.batch_size, 10.5 + trial.batch_size]
        r = result(f"20260101-000000-{next(self.ids):04x}", steps, model=trial.model, batch_size=trial.batch_size,
                   cores=list(trial.cores or (0, 1)), freq_khz=trial.freq_khz)  # fmt: skip
        if action == "crash":
            r = r.model_copy(update={"status": "crashed", "reason": "RuntimeError: boom", "latency": Latency()})
        return FinishedTrial(result=with_context(r, context), events=events(steps))


def make_plan(*overrides, tree=None, allowed=(0, 1)):
    config = load_config(None, ["steps=3", *overrides]).config
    sysfs = SysFS(tree or "/nonexistent")
    return plan(config, source=None, sysfs=sysfs, allowed=allowed), config, sysfs


def sweep(p, store, runner, *, sysfs=None, resume=False, cooler=None, **kw):
    sysfs = sysfs or SysFS("/nonexistent")
    return run_sweep(p, store, config_json="{}", cooler=cooler or Cooler(CooldownConfig(), sysfs), resume=resume,
                     target=LocalTarget(sysfs.root), runner=runner, **kw)  # fmt: skip


@pytest.fixture
def pi(tmp_path, sysfs_tree):
    root = tmp_path / "rpi4"
    shutil.copytree(sysfs_tree("rpi4"), root)
    return root


def controls(root):
    return {name: (root / POLICY / name).read_text().strip() for name in
            ("scaling_governor", "scaling_min_freq", "scaling_max_freq")}  # fmt: skip


def test_failures_do_not_stop_the_sweep_and_every_trial_lands(tmp_path):
    p, _, _ = make_plan("models=[lenet, alexnet]", "batch_sizes=[1, 2]")
    runner = FakeRunner({1: "crash", 2: OSError("no space left on device")})
    with Store(tmp_path / "s.sqlite") as store:
        outcome = sweep(p, store, runner)
        assert len(runner.calls) == 4 and not outcome.interrupted
        assert [r.status for r in outcome.results] == ["ok", "crashed", "error", "ok"]
        assert outcome.results[2].reason == "OSError: no space left on device"
        done = store.sweep_done(p.sweep_id)
        assert sorted(done) == sorted(t.key for t in p.trials)
        stored = store.query(sweep_id=p.sweep_id)
        assert [r.sweep.position for r in stored] == [0, 1, 2, 3]
        assert stored[0].sweep.trial_key == p.trials[0].key


def test_interrupted_sweep_resumes_without_repeating_or_losing_trials(tmp_path):
    p, _, _ = make_plan("models=[lenet, alexnet]", "batch_sizes=[1, 2]", "cores=[0x1, 0x2]")
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        outcome = sweep(p, store, FakeRunner({3: KeyboardInterrupt()}))
        assert outcome.interrupted and len(outcome.results) == 3
    with Store(path) as store:
        with pytest.raises(UsageError) as err:
            sweep(p, store, FakeRunner())
        assert err.value.field == "--resume" and "3 of its 8 trials" in err.value.message
        runner = FakeRunner()
        outcome = sweep(p, store, runner, resume=True)
        assert len(runner.calls) == 5 and outcome.skipped == 3
        assert [t.model_dump() for t in runner.calls] == [t.trial.model_dump() for t in p.trials[3:]]
        keys = [r.sweep.trial_key for r in store.query(sweep_id=p.sweep_id)]
        assert sorted(keys) == sorted(t.key for t in p.trials) and len(keys) == 8
        assert len(sweep(p, store, FakeRunner(), resume=True).results) == 0  # nothing left


def test_retry_failed_reruns_only_failed_trials(tmp_path):
    p, _, _ = make_plan("batch_sizes=[1, 2, 4]")
    with Store(tmp_path / "s.sqlite") as store:
        sweep(p, store, FakeRunner({1: "crash"}))
        runner = FakeRunner()
        sweep(p, store, runner, resume=True, retry_failed=True)
        assert [t.batch_size for t in runner.calls] == [2]
        assert set(store.sweep_done(p.sweep_id).values()) == {"ok"}


def test_frequencies_pinned_per_trial_and_restored(tmp_path, pi):
    before = controls(pi)
    p, _, sysfs = make_plan("batch_sizes=[1]", "frequencies=[600000, 1.2GHz]", tree=pi)
    seen = []

    def check(trial, sysfs_root):
        assert sysfs_root == str(pi)
        seen.append(((pi / POLICY / "scaling_governor").read_text(), (pi / POLICY / "scaling_setspeed").read_text()))

    with Store(tmp_path / "s.sqlite") as store:
        outcome = sweep(p, store, FakeRunner(on_call=check), sysfs=sysfs, is_root=lambda: True)
    assert seen == [("userspace", "600000"), ("userspace", "1200000")]
    assert [r.sweep.freq_set_khz for r in outcome.results] == [{"policy0": 600_000}, {"policy0": 1_200_000}]
    assert controls(pi) == before


@pytest.mark.parametrize("failure", ["exception", "interrupt", "sigterm"])
def test_an_exception_in_the_middle_of_a_sweep_restores_the_governor(tmp_path, pi, failure):
    before = controls(pi)
    p, _, sysfs = make_plan("batch_sizes=[1, 2, 4]", "frequencies=[700000]", tree=pi)

    class Breaks:
        def begin(self, *a):
            pass

        def trial_started(self, planned, index):
            pass

        def trial_finished(self, planned, r):
            assert controls(pi)["scaling_governor"] == "userspace"
            if planned.position == 1:
                if failure == "exception":
                    raise RuntimeError("report failed")
                if failure == "interrupt":
                    raise KeyboardInterrupt
                os.kill(os.getpid(), signal.SIGTERM)

        def status(self, text):
            pass

        def note(self, text):
            pass

    with Store(tmp_path / "s.sqlite") as store:
        if failure == "exception":
            with pytest.raises(RuntimeError, match="report failed"):
                sweep(p, store, FakeRunner(), sysfs=sysfs, is_root=lambda: True, reporter=Breaks())
        else:
            outcome = sweep(p, store, FakeRunner(), sysfs=sysfs, is_root=lambda: True, reporter=Breaks())
            assert outcome.interrupted and len(outcome.results) == 2
        assert len(store.sweep_done(p.sweep_id)) == 2  # the trials that ended are stored
    assert controls(pi) == before
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_refused_when_not_root_before_anything_is_stored(tmp_path, pi):
    before = controls(pi)
    p, _, sysfs = make_plan("batch_sizes=[1]", "frequencies=[700000]", tree=pi)
    runner = FakeRunner()
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(UsageError) as err:
            sweep(p, store, runner, sysfs=sysfs, is_root=lambda: False)
        assert err.value.field == "frequencies" and "needs root" in err.value.message
        assert store.sweep_ids() == [] and not runner.calls
    assert controls(pi) == before


def test_cooldown_between_trials_is_recorded(tmp_path):
    p, _, _ = make_plan("models=[lenet, alexnet]", "batch_sizes=[1, 2]")
    clock = {"now": 0.0}
    cooler = Cooler(CooldownConfig(seconds=30, between="models"), SysFS("/nonexistent"),
                    clock=lambda: clock["now"], sleep=lambda s: clock.__setitem__("now", clock["now"] + s))  # fmt: skip
    with Store(tmp_path / "s.sqlite") as store:
        outcome = sweep(p, store, FakeRunner(), cooler=cooler)
    waits = [(r.trial.model, r.trial.batch_size, r.sweep.cooldown_s, r.sweep.cooldown_by) for r in outcome.results]
    assert waits == [
        ("lenet", 1, 0.0, None),
        ("lenet", 2, 0.0, "none"),
        ("alexnet", 1, 30.0, "fixed 30 s"),
        ("alexnet", 2, 0.0, "none"),
    ]


def test_repeats_run_interleaved_in_a_seeded_order_each_recorded_with_its_place(tmp_path):
    """Two configurations of three repeats: six trials of their own keys, in a random order whose seed (from the
    sweep id) every repeat records; a resumed sweep keeps the order."""
    from edgebench.sweep.runner import order_seed, run_order

    p, _, _ = make_plan("models=[lenet, alexnet]", "batch_sizes=[1]", "repeats=3")
    keys = [t.key for t in p.trials]
    assert len(keys) == 6 and keys[1] == keys[0] + "-r1" and [t.repeat for t in p.trials[:3]] == [0, 1, 2]
    seed = order_seed(p)
    assert seed is not None and run_order(p, list(p.trials)) != list(p.trials)  # interleaved, not grouped
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        outcome = sweep(p, store, FakeRunner({2: KeyboardInterrupt()}))
        assert outcome.interrupted and len(outcome.results) == 2
        runner = FakeRunner()
        sweep(p, store, runner, resume=True)
        stored = store.query(sweep_id=p.sweep_id)
    ran = [r.sweep.trial_key for r in stored]
    assert ran == [t.key for t in run_order(p, list(p.trials)) if t.key in set(ran)] and len(ran) == 6
    assert {(r.trial.model, r.repeat.index) for r in stored} == {(m, i) for m in ("lenet", "alexnet") for i in range(3)}
    assert {(r.repeat.order_seed, r.repeat.planned) for r in stored} == {(seed, 3)}
    assert len({r.repeat.config_key for r in stored}) == 2


def test_one_configuration_or_one_repeat_each_runs_in_plan_order():
    from edgebench.sweep.runner import order_seed

    assert order_seed(make_plan("batch_sizes=[1]", "repeats=3")[0]) is None
    assert order_seed(make_plan("batch_sizes=[1, 2]")[0]) is None


class Spread(FakeRunner):
    """Each call's steps scaled by its own factor: processes that differ as much as ``factors`` do."""

    def __init__(self, factors):
        super().__init__()
        self.factors = itertools.cycle(factors)

    def __call__(self, trial, *, target, sample=True, context=None):
        f = next(self.factors)
        finished = super().__call__(trial, target=target, sample=sample, context=context)
        steps = [f * (10.0 + d) for d in (0.0, 0.2, 0.1)]
        r = result(finished.result.trial_id, steps, model=trial.model, batch_size=trial.batch_size)
        return FinishedTrial(result=with_context(r, context), events=events(steps))


@pytest.mark.parametrize(("factors", "repeats"), [([1.0], 3), ([1.0, 1.03, 0.97, 1.0], 4), ([0.8, 1.2], 20)])
def test_auto_repeats_add_rounds_until_the_spread_is_resolved_or_the_cap(tmp_path, factors, repeats):
    p, _, _ = make_plan("batch_sizes=[1]", "repeats=auto")
    assert len(p.trials) == 3  # the pilot
    runner = Spread(factors)
    with Store(tmp_path / "s.sqlite") as store:
        outcome = sweep(p, store, runner)
        stored = store.query(sweep_id=p.sweep_id)
    assert len(runner.calls) == len(stored) == repeats and not outcome.interrupted
    assert sorted(r.repeat.index for r in stored) == list(range(repeats))
    assert len({r.sweep.trial_key for r in stored}) == repeats

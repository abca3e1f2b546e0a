"""Grid expansion: order, stable keys, core roles and `all` frequencies resolved against a device tree."""

import pytest

from edgebench.config.sweep_file import load_config
from edgebench.errors import UsageError
from edgebench.host.sysfs import SysFS
from edgebench.records.trial import Trial
from edgebench.sweep.plan import plan, trial_key
from tests.paths import EXAMPLES

EIGHT = tuple(range(8))


def planned(*overrides, sysfs=None, allowed=(0, 1), source=None):
    config = load_config(None, list(overrides)).config
    return plan(config, source=source, sysfs=sysfs or SysFS("/nonexistent"), allowed=allowed)


def test_grid_order_and_fields():
    p = planned("models=[lenet, alexnet]", "batch_sizes=[1, 2]", "cores=[0x1, 0x2]", "steps=4", "warmup=1")
    assert len(p.trials) == 8
    order = [(t.trial.cores, t.trial.model, t.trial.batch_size) for t in p.trials]
    assert order[:4] == [((0,), "lenet", 1), ((0,), "lenet", 2), ((0,), "alexnet", 1), ((0,), "alexnet", 2)]
    assert all(t.trial.steps == 4 and t.trial.warmup == 1 for t in p.trials)
    assert [t.position for t in p.trials] == list(range(8))
    assert len({t.key for t in p.trials}) == 8


def test_keys_are_stable_and_ignore_fields_left_at_their_defaults():
    assert trial_key(Trial(model="lenet", batch_size=8)) == trial_key(Trial(model="lenet", batch_size=8, seed=0))
    assert trial_key(Trial(batch_size=8)) != trial_key(Trial(batch_size=16))
    # a stored sweep resumes under a later edgebench only if keys never change: this one is pinned
    assert trial_key(Trial(model="lenet", batch_size=8, cores=(0, 1))) == "54bcc44c3b11912b"
    a = planned("batch_sizes=[1, 2]", source="x.yaml")
    b = planned("batch_sizes=[1, 2]", "cooldown=30s", source="x.yaml")
    assert [t.key for t in a.trials] == [t.key for t in b.trials]
    assert a.sweep_id == b.sweep_id and a.sweep_id.startswith("x-")  # cool-down does not change what is measured
    assert planned("batch_sizes=[1, 4]", source="x.yaml").sweep_id != a.sweep_id
    assert planned("name=mine").sweep_id == "mine"


def test_equal_core_sets_run_once():
    assert len(planned("batch_sizes=[1]", "cores=[0x3, 0-1, [0, 1]]").trials) == 1


def test_unavailable_cores_are_refused_with_the_key():
    with pytest.raises(UsageError) as err:
        planned("cores=[0x1, f0]")
    assert err.value.field == "cores[1]" and "cpu 4-7 (mask f0) is not available here (usable: 0-1" in err.value.message


def test_big_and_little_come_from_cpufreq_clusters(sysfs_tree):
    phone = SysFS(sysfs_tree("sm8150_meizu16t"))
    p = planned("batch_sizes=[1]", "cores=[big, little, all]", sysfs=phone, allowed=EIGHT)
    assert [t.trial.cores for t in p.trials] == [(4, 5, 6, 7), (0, 1, 2, 3), None]
    pi = SysFS(sysfs_tree("rpi4"))  # one cluster: big and little are the same four cores
    p = planned("batch_sizes=[1]", "cores=[big]", sysfs=pi, allowed=(0, 1, 2, 3))
    assert p.trials[0].trial.cores == (0, 1, 2, 3)
    with pytest.raises(UsageError, match="cpufreq clusters"):
        planned("cores=[big]")


def test_all_frequencies_per_core_set(sysfs_tree):
    phone = SysFS(sysfs_tree("sm8150_meizu16t"))
    p = planned("batch_sizes=[1]", "cores=[0f, 0x80]", "frequencies=all", sysfs=phone, allowed=EIGHT)
    little = [t.trial.freq_khz for t in p.trials if t.trial.cores == (0, 1, 2, 3)]
    prime = [t.trial.freq_khz for t in p.trials if t.trial.cores == (7,)]
    assert len(little) == 18 and little[0] == 300_000 and little[-1] == 1_785_600
    assert len(prime) == 20 and prime[-1] == 2_841_600
    assert len({t.key for t in p.trials}) == 38


def test_all_frequencies_need_cpufreq():
    with pytest.raises(UsageError) as err:
        planned("frequencies=all")
    assert err.value.field == "frequencies" and "scaling_available_frequencies" in err.value.message


def test_example_mnn_suite_plans_on_the_phone(sysfs_tree):
    phone = SysFS(sysfs_tree("sm8150_meizu16t"))
    config = load_config(EXAMPLES / "mnn_suite_cores.yaml").config
    p = plan(config, source=None, sysfs=phone, allowed=EIGHT)
    assert p.sweep_id == "meizu-cores" and len(p.trials) == 5 * 6 * 2
    assert {t.trial.threads for t in p.trials} == {4}


def test_core_roles_come_from_every_cluster_not_the_usable_ones(sysfs_tree):
    """A replayed phone tree (Snapdragon 855: cpu0-3 little, 4-6 gold, 7 prime) on a machine that may use cpu0-1:
    ``big`` is cpu4-7 and not usable here, never the little cluster renamed."""
    from edgebench.sweep.plan import resolve_cores

    tree = SysFS(str(sysfs_tree("sm8150_meizu16t")))
    assert resolve_cores("big", 0, tree, tuple(range(8))) == (4, 5, 6, 7)
    assert resolve_cores("little", 0, tree, (0, 1)) == (0, 1)
    with pytest.raises(UsageError) as info:
        resolve_cores("big", 0, tree, (0, 1))
    assert (
        info.value.message
        == "the big cores of this device (cpu 4-7) are not usable here (usable: cpu 0-1); give usable cores"
    )


def test_a_model_entry_may_pin_its_batch_size_and_threads():
    """Entries that pin both name single trials (the sweep files `predict --suggest` writes): the same model
    twice, at its own batch size and threads, whatever the sweep's axes say."""
    p = planned(
        "models=[{name: lenet, batch_size: 8, threads: 1}, {name: lenet, batch_size: 2, threads: 2}, "
        "{name: squeezenet, batch_size: 4, threads: 1, input_shape: 3x32x32}]",
        "batch_sizes=[1]",
    )
    got = [(t.trial.model, t.trial.batch_size, t.trial.threads, t.trial.input_shape) for t in p.trials]
    assert got == [("lenet", 8, 1, None), ("lenet", 2, 2, None), ("squeezenet", 4, 1, (3, 32, 32))]
    with pytest.raises(UsageError, match=r"models\[0\].batch_size"):
        planned("models=[{name: lenet, batch_size: 0}]")

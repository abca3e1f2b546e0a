"""compare: side by side, ratios, and decisions taken across repeats (never over the steps of one process each)."""

import math

import pytest

from edgebench.errors import UsageError
from edgebench.records.result import Hygiene, Repeat
from edgebench.report.compare import (
    DEVICE_MATCH_FIELDS,
    MATCH_FIELDS,
    compare_groups,
    compare_trials,
    resolve,
    setting_differences,
    short,
)
from edgebench.store import Store
from tests.factories import add, result, save, steps


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "s.sqlite") as db:
        add(db, "20260101-000001-aaaa", steps(10.0, 1))
        add(db, "20260101-000002-bbbb", steps(12.0, 2))
        add(db, "20260101-000003-cccc", steps(10.0, 3))
        for i, (batch, slow, seed) in enumerate([(1, 1.0, 0), (2, 1.0, 0), (1, 1.5, 0), (2, 1.5, 0),
                                                  (1, 1.0, 1), (2, 1.0, 1), (1, 1.5, 1), (2, 1.5, 1),
                                                  (1, 1.0, 2), (2, 1.0, 2), (1, 1.5, 2), (2, 1.5, 2)]):  # fmt: skip
            sweep = "base" if slow == 1.0 else "tuned"
            db.add_sweep(sweep, 6, "{}")
            host = "board-a" if slow == 1.0 else "board-b"
            cores = (0, 1) if slow == 1.0 else (4, 5)
            offset = 1 + 0.02 * (seed - 1)  # each repeat (process) its own offset
            add(db, f"20260102-00000{i:02d}-dddd", steps(10.0 * batch * slow * offset, 10 + i), batch_size=batch,
                cores=cores, sweep=(sweep, f"key{batch}-r{seed}", i), env={"hostname": host})  # fmt: skip
        yield db


def test_two_trials_get_ratios_and_no_p_value(store):
    """One process per side cannot separate a difference from run-to-run variance: no test, no star."""
    a, b = (store.get(i) for i in ("20260101-000001", "20260101-000002"))
    rows = {r.label: r for r in compare_trials(a, b)}
    step = rows["step median (ms)"]
    assert step.ratio == pytest.approx(b.latency.step_ms.median / a.latency.step_ms.median)
    assert step.decision.p_value is None and step.decision.significant is None and step.decision.direction is None
    assert "one process per side cannot separate" in step.decision.answer and short(step.decision) == "one process each"
    assert rows["throughput (samples/s)"].decision is None  # the decision is taken on one measure


def test_a_disturbed_trial_makes_the_decision_inconclusive(store):
    a = store.get("20260101-000001")
    busy = a.model_copy(update={"hygiene": Hygiene(other_cpu_pct=46.0)})
    step = compare_trials(busy, store.get("20260101-000002"))[0]
    assert step.decision.answer.startswith("inconclusive: 1 of 2 trials disturbed (device busy: other processes "
                                           "used 46% of its cores)")  # fmt: skip


def test_sweeps_are_matched_configuration_by_configuration_and_decided_on_repeats(store):
    a, b = resolve(store, "base"), resolve(store, "tuned")
    assert (a.kind, len(a.results)) == ("sweep", 6)
    # core masks differ between the two sweeps: matching on them finds nothing, on model and batch size all
    assert compare_groups(a, b, MATCH_FIELDS).rows == []
    result = compare_groups(a, b, ("model", "batch_size"))
    assert [r.label for r in result.rows] == ["lenet b1", "lenet b2"]
    for row in result.rows:  # three repeats a side, 1.5x apart: clearly slower, with the ratio's interval
        d = row.decision
        assert d.direction == "slower" and d.p_value < 0.05 and (d.n_a, d.n_b) == (3, 3)
        assert d.low < d.ratio < d.high and d.test == "Welch's t on log repeat medians"
        assert row.a.endswith("(3)")
    ratios = [r.ratio for r in result.rows]
    assert result.geometric_mean == pytest.approx(math.sqrt(ratios[0] * ratios[1]))
    assert result.geometric_mean == pytest.approx(1.5, rel=0.05)
    assert "cores: 0-1 (mask 3) vs 4-5 (mask 30)" in result.differences


def test_devices_pair_without_core_numbers(store):
    a, b = resolve(store, "board-a"), resolve(store, "board-b")
    assert a.kind == "device" and len(a.results) == 9  # the three loose trials (batch 8) ran on board-a too
    result = compare_groups(a, b, DEVICE_MATCH_FIELDS)
    assert [r.label for r in result.rows] == ["lenet b1 t2", "lenet b2 t2"]  # cpu 0-1 vs 4-5 still pair
    assert (result.only_a, result.only_b) == (1, 0)  # board-b never ran batch 8


def test_two_configurations_are_compared_whatever_they_differ_in(tmp_path):
    """Two `run --repeats` of one configuration each, differing only in --cores (seen: `1.30x faster (p=6.4e-51)`
    from one process each, with nothing said of the cores)."""
    with Store(tmp_path / "s.sqlite") as db:
        for sweep, core in (("run-a", 0), ("run-b", 1)):
            db.add_sweep(sweep, 5, "{}")
            for k in range(5):
                r = result(f"2026010{core}-00000{k}-eeee", steps(10.0 * (1 + 0.03 * k), k), cores=[core], threads=1,
                           sweep=(sweep, f"key-r{k}", k))  # fmt: skip
                r = r.model_copy(update={"repeat": Repeat(config_key=f"cfg{core}", index=k, planned=5)})
                save(db, r, steps(10.0, k))
        found = compare_groups(resolve(db, "run-a"), resolve(db, "run-b"), MATCH_FIELDS)
    (row,) = found.rows
    assert row.decision.direction is None and "no clear difference" in row.decision.answer  # the same offsets
    assert found.differences == ["cores: 0 (mask 1) vs 1 (mask 2)"]


def test_every_differing_setting_is_named():
    a = result("a", [1.0], cores=[0], threads=1).trial
    b = result("b", [1.0], cores=[1], threads=1, batch_size=16).trial
    assert setting_differences([a], [b]) == ["batch_size: 8 vs 16", "cores: 0 (mask 1) vs 1 (mask 2)"]
    assert setting_differences([a], [a]) == []


def test_references_that_resolve_to_nothing_or_to_several(store):
    with pytest.raises(UsageError, match="3 trials start with it"):
        resolve(store, "20260101-00000")
    with pytest.raises(UsageError, match="no sweep, trial id or hostname"):
        resolve(store, "nothing")
    assert resolve(store, "20260101-000002").kind == "trial"

"""compare: side by side, ratios, and Welch's t-test on the stored step times of trials, sweeps and devices."""

import math

import pytest
from scipy import stats

from edgebench.errors import UsageError
from edgebench.report.compare import (
    DEVICE_MATCH_FIELDS,
    MATCH_FIELDS,
    Verdict,
    compare_groups,
    compare_trials,
    resolve,
)
from edgebench.store import Store
from tests.factories import add, steps


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "s.sqlite") as db:
        add(db, "20260101-000001-aaaa", steps(10.0, 1))
        add(db, "20260101-000002-bbbb", steps(12.0, 2))
        add(db, "20260101-000003-cccc", steps(10.0, 3))
        for i, (batch, slow) in enumerate([(1, 1.0), (2, 1.0), (1, 1.5), (2, 1.5)]):
            sweep = "base" if slow == 1.0 else "tuned"
            db.add_sweep(sweep, 2, "{}")
            host = "board-a" if slow == 1.0 else "board-b"
            cores = (0, 1) if slow == 1.0 else (4, 5)
            add(db, f"20260102-00000{i}-dddd", steps(10.0 * batch * slow, 10 + i), batch_size=batch, cores=cores,
                sweep=(sweep, f"key{batch}", i), env={"hostname": host})  # fmt: skip
        yield db


def test_two_trials_side_by_side_with_a_t_test(store):
    a, b, c = (store.get(i) for i in ("20260101-000001", "20260101-000002", "20260101-000003"))
    rows = {r.label: r for r in compare_trials(store, a, b)}
    step = rows["train step mean (ms)"]
    assert step.verdict.ratio == pytest.approx(b.latency.step_ms.mean / a.latency.step_ms.mean)
    expected_p = stats.ttest_ind(steps(10.0, 1), steps(12.0, 2), equal_var=False).pvalue
    assert step.verdict.p_value == pytest.approx(expected_p) and step.verdict.significant
    assert step.verdict.text().startswith("1.2") and "slower" in step.verdict.text()
    assert rows["throughput (samples/s)"].verdict.p_value is None  # one number per trial: a ratio, no test
    same = {r.label: r for r in compare_trials(store, a, c)}["train step mean (ms)"]
    assert not same.verdict.significant and same.verdict.text().startswith("not significant")


def test_verdict_wording():
    assert Verdict(0.8, 0.001).text() == "1.25x faster (p=0.001)"
    assert Verdict(1.25, 0.001).text(lower_is_better=False) == "1.25x faster (p=0.001)"
    assert Verdict(None).text() == "-"


def test_sweeps_are_matched_configuration_by_configuration(store):
    a, b = resolve(store, "base"), resolve(store, "tuned")
    assert (a.kind, len(a.results)) == ("sweep", 2)
    # core masks differ between the two sweeps: matching on them finds nothing, on model and batch size all
    assert compare_groups(store, a, b, MATCH_FIELDS).rows == []
    result = compare_groups(store, a, b, ("model", "batch_size"))
    assert [r.label for r in result.rows] == ["lenet b1", "lenet b2"]
    assert all(r.verdict.significant for r in result.rows)
    ratios = [r.verdict.ratio for r in result.rows]
    assert result.geometric_mean == pytest.approx(math.sqrt(ratios[0] * ratios[1]))
    assert result.geometric_mean == pytest.approx(1.5, rel=0.05)


def test_devices_pair_without_core_numbers(store):
    a, b = resolve(store, "board-a"), resolve(store, "board-b")
    assert a.kind == "device" and len(a.results) == 5  # the three loose trials (batch 8) ran on board-a too
    result = compare_groups(store, a, b, DEVICE_MATCH_FIELDS)
    assert [r.label for r in result.rows] == ["lenet b1 t2", "lenet b2 t2"]  # cpu 0-1 vs 4-5 still pair
    assert (result.only_a, result.only_b) == (1, 0)  # board-b never ran batch 8
    pooled = compare_groups(store, a, resolve(store, "20260101-000002"), ("model",))
    assert pooled.rows[0].a.endswith("(5 trials)")  # several trials of one configuration: step times pooled


def test_references_that_resolve_to_nothing_or_to_several(store):
    with pytest.raises(UsageError, match="3 trials start with it"):
        resolve(store, "20260101-00000")
    with pytest.raises(UsageError, match="no sweep, trial id or hostname"):
        resolve(store, "nothing")
    assert resolve(store, "20260101-000002").kind == "trial"

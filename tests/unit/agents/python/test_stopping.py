"""The target-CI stop rule: stops as soon as the mean is known to the target, or at a cap, and says which."""

import numpy as np
import pytest

from edgebench.agents.python.stopping import FixedSteps, TargetCI, train_rule
from edgebench.agents.python.worker import timed
from edgebench.measure.stats import ci95_half_width
from edgebench.records.events import EventWriter
from edgebench.records.trial import Trial


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run(rule, durations):
    """Feed ``durations`` to ``rule`` as the worker would (asked before each step); returns (steps taken, reason)."""
    taken = []
    for d in durations:
        reason = rule.check(taken)
        if reason is not None:
            return len(taken), reason
        taken.append(d)
    return len(taken), rule.check(taken)


def test_running_interval_equals_the_one_from_all_steps():
    x = list(np.random.default_rng(7).normal(10.0, 2.0, 3000))
    rule = TargetCI(2.0, min_steps=2, max_steps=2500, max_time_s=60)  # beyond the cap: the quantile is computed
    for n in (2, 3, 10, 100, 2499, 2500, 3000):
        expected = 100 * ci95_half_width(x[:n]) / np.mean(x[:n])
        assert rule.relative_ci_pct(x[:n]) == pytest.approx(expected, rel=1e-9)
    assert rule.relative_ci_pct(x[:5]) == pytest.approx(100 * ci95_half_width(x[:5]) / np.mean(x[:5]), rel=1e-9)


def test_stable_steps_stop_at_the_minimum():
    rule = TargetCI(2.0, min_steps=5, max_steps=1000, max_time_s=60)
    n, reason = run(rule, [10.0, 10.1, 9.9, 10.0, 10.05] + [10.0] * 100)
    assert n == 5 and reason.startswith("target-ci: ±") and "after 5 steps" in reason


def test_noisy_steps_run_until_the_interval_is_within_target():
    x = list(np.random.default_rng(3).normal(10.0, 2.0, 5000))  # cv 20%: about (1.96 * 0.2 / 0.02)^2 = 384 steps
    rule = TargetCI(2.0, min_steps=5, max_steps=5000, max_time_s=1e9)
    n, reason = run(rule, x)
    assert reason.startswith("target-ci")
    assert 100 < n < 1500
    assert 100 * ci95_half_width(x[:n]) / np.mean(x[:n]) <= 2.0
    assert 100 * ci95_half_width(x[: n - 1]) / np.mean(x[: n - 1]) > 2.0  # it did not stop later than needed


def test_step_cap_reports_the_precision_reached():
    x = list(np.random.default_rng(4).normal(10.0, 5.0, 100))
    n, reason = run(TargetCI(1.0, min_steps=5, max_steps=30, max_time_s=1e9), x)
    assert n == 30 and reason.startswith("step cap: 30 steps (ci ±") and "target 1%" in reason


def test_time_cap_uses_the_clock():
    clock = FakeClock()
    rule = TargetCI(0.1, min_steps=2, max_steps=10**6, max_time_s=5.0, clock=clock)
    taken = []
    rng = np.random.default_rng(5)
    while (reason := rule.check(taken)) is None:
        taken.append(float(rng.normal(10, 3)))
        clock.now += 0.5
    assert len(taken) == 10 and reason.startswith("time cap: 5 s after 10 steps")


def test_minimum_steps_hold_even_when_the_first_steps_agree():
    n, _ = run(TargetCI(5.0, min_steps=8, max_steps=100, max_time_s=60), [10.0] * 50)
    assert n == 8


def test_trial_selects_the_rule():
    assert isinstance(train_rule(Trial(steps=7)), FixedSteps)
    rule = train_rule(Trial(steps=5, target_ci_pct=2.0, max_steps=50, max_time_s=9.0))
    assert isinstance(rule, TargetCI)
    assert (rule.target_pct, rule.min_steps, rule.max_steps, rule.max_time_s) == (2.0, 5, 50, 9.0)


def test_cap_below_the_minimum_is_refused():
    with pytest.raises(ValueError, match="max_steps"):
        Trial(steps=20, target_ci_pct=2.0, max_steps=10)


def test_worker_loop_records_the_reason(tmp_path):
    with open(tmp_path / "events.jsonl", "w") as stream:
        durations, reason = timed(lambda: None, TargetCI(50.0, min_steps=3, max_steps=3, max_time_s=60),
                                  "train", EventWriter(stream), lambda: None)  # fmt: skip
    assert len(durations) == 3 and reason


def test_fixed_steps_go_on_until_the_phase_has_lasted_its_minimum_time():
    clock = FakeClock()
    rule = FixedSteps(3, min_time_s=1.0, clock=clock)
    taken = []
    while (reason := rule.check(taken)) is None:
        taken.append(5.0)
        clock.now += 0.25  # each step lasts a quarter second: 3 asked steps are too short a window
    assert len(taken) == 4
    assert reason == "min time: 1.00 s after 4 steps (3 asked)"


def test_fixed_steps_whose_window_is_long_enough_stop_at_the_count_asked():
    clock = FakeClock()
    rule = FixedSteps(3, min_time_s=0.5, clock=clock)
    taken = []
    while (reason := rule.check(taken)) is None:
        taken.append(5.0)
        clock.now += 1.0
    assert (len(taken), reason) == (3, "fixed: 3 steps")


def test_the_default_trial_measures_long_enough_for_the_cpu_share_and_given_steps_mean_exactly_that():
    from edgebench.agents.python.stopping import min_time_s
    from edgebench.config.settings import with_adaptive_minimum
    from edgebench.measure.utilization import min_cpu_share_window_s

    default = Trial(**with_adaptive_minimum({}), cores=(0, 1))
    assert default.min_time_s == "auto"
    assert min_time_s(default) == min_cpu_share_window_s(2)
    assert Trial(**with_adaptive_minimum({"steps": 20})).min_time_s is None
    assert Trial(**with_adaptive_minimum({"target_ci_pct": 2.0})).min_time_s is None
    assert with_adaptive_minimum({"command": "./bench", "step_pattern": "step"}).get("min_time_s") is None
    assert isinstance(train_rule(Trial(steps=20)), FixedSteps) and train_rule(Trial(steps=20)).min_time_s == 0.0


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"min_time_s": 2.0, "target_ci_pct": 2.0}, "--target-ci decides"),
        ({"min_time_s": 2.0, "command": "./bench", "step_pattern": "step"}, "--command decides"),
        ({"min_time_s": 1000.0, "timeout_s": 1500.0}, "leave nothing of the 1500 s timeout"),
    ],
)
def test_a_minimum_time_that_cannot_apply_is_refused_in_one_line(values, words):
    with pytest.raises(ValueError, match=words):
        Trial(**values)

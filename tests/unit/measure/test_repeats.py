"""Statistics at the repeat level: A/A calibration on the fake backend's step model (per-process offsets, AR(1)
steps), the configuration's interval, the best pick, and how many repeats ``auto`` asks for."""

from __future__ import annotations

import random
import statistics
from itertools import islice

import numpy as np
import pytest
from scipy import stats

from edgebench.backends.fake.session import StepModel
from edgebench.measure.repeats import (
    best_of,
    compare_repeats,
    compare_results,
    configuration_interval,
    repeats_needed,
    summarize_configuration,
)
from edgebench.records.result import Hygiene, Repeat
from tests.factories import result

#: Steps as real LeNet processes make them here: 6 ms, processes 12% apart, steps 6% about their level, AR(1) 0.5.
LIKE_LENET = StepModel(step_ms=6.0, process_cv_pct=12.0, step_cv_pct=6.0, ar1=0.5)


def process(seed: int, model: StepModel = LIKE_LENET, steps: int = 100) -> list[float]:
    return list(islice(model.process(random.Random(seed)), steps))


def test_aa_pairs_are_called_different_at_about_alpha_at_the_repeat_level_and_not_at_the_step_level():
    """40 A/A pairs of one configuration, 5 repeats a side, fixed seeds: the old test (Welch over the steps of one
    process each) calls most of them different, as it did with real LeNet processes (5 of 8); Welch on the repeats'
    log medians calls at most a few (alpha 0.05 expects 2 of 40)."""
    old = pooled = new = 0
    for pair in range(40):
        a = [process(pair * 1000 + k) for k in range(5)]
        b = [process(pair * 1000 + 500 + k) for k in range(5)]
        old += stats.ttest_ind(a[0], b[0], equal_var=False).pvalue < 0.05
        pooled += stats.ttest_ind(np.concatenate(a), np.concatenate(b), equal_var=False).pvalue < 0.05
        new += bool(compare_repeats([statistics.median(x) for x in a], [statistics.median(x) for x in b]).significant)
    assert old >= 25 and pooled >= 25  # steps of a process share its offset: "significant" almost every time
    assert new <= 4


def test_a_true_difference_is_found_with_its_interval():
    a = [statistics.median(process(k)) for k in range(10)]
    b = [statistics.median(process(100 + k, StepModel(6.0 * 1.4, 12.0, 6.0, 0.5))) for k in range(10)]
    found = compare_repeats(a, b)
    assert found.direction == "slower" and found.p_value < 0.05 and found.low < 1.4 < found.high
    assert found.answer.startswith("1.4") and "Welch's t on log repeat medians, 10 vs 10 repeats" in found.answer
    assert compare_repeats(b, a).direction == "faster"
    throughput = compare_repeats(a, b, lower_is_better=False)
    assert throughput.direction == "faster"  # more of a higher-is-better figure


def test_one_repeat_a_side_gives_a_ratio_and_no_test():
    found = compare_repeats([6.0], [7.0])
    assert found.ratio == pytest.approx(7 / 6) and found.p_value is None and found.significant is None
    assert "one process per side cannot separate the difference from run-to-run variance" in found.answer


def trial(trial_id: str, median: float, index: int, **hygiene) -> object:
    r = result(trial_id, [median * f for f in (0.98, 1.0, 1.02)])
    update = {"repeat": Repeat(config_key="k", index=index, planned=3)}
    if hygiene:
        update["hygiene"] = Hygiene(**hygiene)
    return r.model_copy(update=update)


def test_disturbed_repeats_are_left_out_with_a_note_or_make_it_inconclusive():
    a = [trial(f"a{k}", 6.0 + 0.1 * k, k) for k in range(3)]
    b = [trial("b0", 9.0, 0), trial("b1", 9.1, 1), trial("b2", 9.2, 2, other_cpu_pct=80.0)]
    found = compare_results(a, b)
    assert found.direction == "slower" and (found.n_a, found.n_b) == (3, 2)
    assert found.notes == ["left out 1 of 6 trials as disturbed (device busy: other processes used 80% of its "
                           "cores): b2"]  # fmt: skip
    busy = [trial("b0", 9.0, 0, other_cpu_pct=70.0), trial("b1", 9.1, 1, step_modes_ms=[1.0, 9.0]), b[2]]
    assert compare_results(a, busy).answer.startswith("inconclusive: 3 of 6 trials disturbed (")


def test_the_configuration_interval_is_over_repeats():
    assert configuration_interval([6.0]) is None  # one process says nothing of the next
    i = configuration_interval([5.2, 6.1, 7.4, 5.9, 6.3])
    expected = stats.t.interval(0.95, 4, loc=statistics.mean([5.2, 6.1, 7.4, 5.9, 6.3]),
                                scale=stats.sem([5.2, 6.1, 7.4, 5.9, 6.3]))  # fmt: skip
    assert (i.low, i.high) == pytest.approx(expected) and i.n == 5 and i.method == "t interval over 5 repeats"
    summary = summarize_configuration([trial(f"t{k}", m, k) for k, m in enumerate([5.2, 6.1, 7.4])])
    assert summary.values == pytest.approx([5.2, 6.1, 7.4]) and summary.between_pct > 10
    from edgebench.report.repeats import configuration_line

    # the figure is the mean of the repeats' medians, and the line says so (not the median of anything)
    assert configuration_line(summary).startswith("median step 6.23 ms (the mean of 3 repeats' medians), 95% interval")


def test_a_best_is_clear_only_where_its_interval_overlaps_no_other():
    assert best_of({"a": [5.0, 5.1, 5.2], "b": [6.0, 6.1, 6.2]}).answer == "best: a"
    mixed = best_of({"a": [5.0, 5.1, 5.2], "b": [6.0, 6.1, 6.2], "c": [5.1, 5.3, 5.2]})
    assert not mixed.clear and mixed.answer == "no clear best: a, c overlap"
    one = best_of({"a": [5.0], "b": [6.0]}, what="step ms")
    assert one.label == "a" and not one.clear and "cannot tell it clearly best" in one.answer


def test_auto_asks_for_the_repeats_the_spread_needs():
    assert repeats_needed([6.0]) == 2  # no spread known yet
    assert repeats_needed([6.0, 6.01, 6.02]) == 2  # hardly any spread: two are within 5%
    assert repeats_needed([5.8, 6.2, 6.0, 5.9]) == 4 and repeats_needed([5.6, 6.4, 6.0, 5.8]) == 8  # cv 2.9%, 5.7%
    assert repeats_needed([5.2, 6.1, 7.4, 5.9, 6.3]) == 20  # 13% between processes: more than the cap allows

"""Whether a trial may feed a decision: one reason per failed hygiene check, none for a quiet trial."""

from edgebench.measure.trust import disturbances, inconclusive, left_out_note, split_disturbed
from edgebench.records.result import Hygiene, ZoneTrip
from tests.factories import result, steps


def flagged(trial_id: str, **hygiene) -> object:
    return result(trial_id, steps(10.0, 1)).model_copy(update={"hygiene": Hygiene(**hygiene)})


def test_a_quiet_trial_and_one_that_predates_the_checks_may_decide():
    assert disturbances(flagged("t1", other_cpu_pct=3.0, step_cv=0.4)) == ()  # unstable steps: a warning only
    assert disturbances(result("t2", steps(10.0, 1))) == ()


def test_each_failed_check_is_one_reason_with_its_figures():
    busy = flagged("t1", other_cpu_pct=46.0, step_modes_ms=[12.7, 312.0], clock_moved=True,
                   clock_range_khz=[1_200_000.0, 2_000_000.0], thermal_status_end=3,
                   zone_trip_start=ZoneTrip(zone="cpu-thermal", temp_c=91.0, passive_trip_c=90.0))  # fmt: skip
    assert disturbances(busy) == (  # the parts of the warning line every table shows, spread aside
        "device busy: other processes used 46% of its cores",
        "steps in two modes (near 12.7 and 312 ms): the mean describes neither",
        "clock moved 1200-2000 MHz",
        "the phone reported thermal status 3 (severe) at the trial's end: it throttles",
        "thermal zone cpu-thermal was at 91.0 °C at the trial's start, at or above its first passive trip point "
        "(90.0 °C): the kernel throttles",
    )
    assert disturbances(flagged("t2", other_cpu_pct=20.0)) == ()  # at the threshold: not busy


def test_a_decision_names_what_it_left_out_or_says_it_is_inconclusive():
    results = [flagged("a", other_cpu_pct=82.0), flagged("b", other_cpu_pct=51.0), flagged("c", other_cpu_pct=1.0)]
    usable, disturbed = split_disturbed(results)
    assert [r.trial_id for r in usable] == ["c"] and [r.trial_id for r in disturbed] == ["a", "b"]
    assert inconclusive(disturbed, 3) == (
        "inconclusive: 2 of 3 trials disturbed (device busy: other processes used 82% of its cores in 2)"
    )
    assert left_out_note(disturbed, 3).startswith("left out 2 of 3 trials as disturbed") and "a, b" in left_out_note(
        disturbed, 3
    )
    assert left_out_note([], 3) is None

"""The reasons this branch adds to ``measure.trust.disturbances`` (contention at any window, a window nothing can
judge, a replayed tree), read from what a result carries, so a table that shows a trial and a decision that leaves
it out say the same thing."""

from __future__ import annotations

import numpy as np

from edgebench.measure.hygiene import hygiene
from edgebench.measure.trust import REPLAYED, disturbances, replayed_reason
from edgebench.records.device import DeviceEnvironment
from edgebench.records.events import Scheduling
from edgebench.report.warnings import hygiene_warning
from tests.factories import result

MS = 1_000_000


def test_a_busy_short_trial_and_a_window_nothing_can_judge_are_disturbances_and_spread_alone_is_not():
    busy = hygiene(np.array([10.0, 14.0, 10.0, 15.0]), None, [0], 0, 280 * MS, threads=1,
                   sched=Scheduling(on_cpu_s=0.1, run_queue_wait_s=0.18, involuntary_switches=70, threads=1,
                                    window_s=0.28))  # fmt: skip
    r = result("20260101-000001-aaaa0001", [10.0, 14.0]).model_copy(update={"hygiene": busy})
    reasons = disturbances(r)
    assert len(reasons) == 1 and reasons[0].startswith("device busy: its threads waited for a CPU 64%")
    assert "unstable steps" in busy.warning  # shown in the warning line, but spread is not someone else's load
    unjudged = hygiene(np.full(4, 10.0), None, [0], 0, 50 * MS)
    r = r.model_copy(update={"hygiene": unjudged})
    assert disturbances(r) == (unjudged.quiet_unknown,) and "nothing tells whether" in disturbances(r)[0]
    quiet = hygiene(np.full(4, 10.0), None, [0], 0, 280 * MS,
                    sched=Scheduling(on_cpu_s=0.28, run_queue_wait_s=0.001, threads=1, window_s=0.28))  # fmt: skip
    assert disturbances(r.model_copy(update={"hygiene": quiet})) == ()


def test_a_replayed_trial_says_so_in_every_table_and_its_measured_steps_still_count():
    """A replayed trial's sensors are another device's constant files (the decisions needing them say so: study's
    ``replayed``, a device's identity in predict and partition); its steps were measured here like any other."""
    tree = DeviceEnvironment(hostname="laptop", sysfs_root="/t/fixtures/sysfs/jetson_tx2", sensor_source="replayed")
    r = result("20260101-000001-aaaa0001", [10.0, 10.1]).model_copy(update={"device": tree})
    assert disturbances(r) == ()
    reason = replayed_reason(r)
    assert reason.startswith(REPLAYED) and "jetson_tx2" in reason and "laptop" in reason
    assert hygiene_warning(r) == f"trial {r.trial_id}: {reason}"
    # an older record (no sensor_source) read through a tree is replayed too; one with neither is not known
    old = DeviceEnvironment(hostname="laptop", sysfs_root="/t/fixtures/sysfs/rpi4")
    assert old.replayed is True and old.identity == "laptop [replayed rpi4]"
    assert DeviceEnvironment(hostname="laptop").replayed is None
    assert disturbances(result("20260101-000002-aaaa0002", [10.0, 10.1])) == ()

"""Each cpufreq policy's reference clock, read from recorded device trees: the clock throttling is judged against
(the detection over samples is tests/unit/measure/test_throttling.py)."""

from __future__ import annotations

import shutil

from edgebench.host.cpu import policy_limits
from edgebench.host.sysfs import SysFS


def test_reference_clock_from_the_device(sysfs_tree):
    tx2 = SysFS(sysfs_tree("jetson_tx2"))
    assert [(p.name, p.cores, p.max_khz) for p in policy_limits(tx2)] == [
        ("policy0", (0, 3, 4, 5), 2035200),
        ("policy1", (1, 2), 2035200),
    ]
    assert policy_limits(SysFS(sysfs_tree("container"))) == []


def test_a_clock_chosen_with_the_userspace_governor_is_the_reference(sysfs_tree, tmp_path):
    """A frequency sweep's low clock is a choice, not throttling: the reference is scaling_setspeed."""
    root = tmp_path / "phone"
    shutil.copytree(sysfs_tree("android_phone"), root)
    policy4 = root / "sys/devices/system/cpu/cpufreq/policy4"
    (policy4 / "scaling_governor").write_text("userspace\n")
    (policy4 / "scaling_setspeed").write_text("1056000\n")
    limits = {p.name: p.max_khz for p in policy_limits(SysFS(root))}
    assert limits["policy4"] == 1056000
    assert limits["policy0"] == int((root / "sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq").read_text())

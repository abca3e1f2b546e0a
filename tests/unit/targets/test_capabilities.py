"""Every target class declares what it can do beyond the protocol (``capabilities``), and the declaration matches
the methods it has, so the launcher can read the declaration instead of probing (tests/unit/launch/test_seams.py
shows it does)."""

from __future__ import annotations

import pytest

from edgebench.registry import TARGETS
from edgebench.targets.base import TargetCapabilities
from edgebench.targets.remote import RemoteTarget
from edgebench.targets.remote_sysfs import RemoteSysFS


@pytest.mark.parametrize("scheme", TARGETS.names())
def test_a_target_declares_its_capabilities_and_has_what_it_declares(scheme):
    target = TARGETS.load(scheme)
    capabilities = target.capabilities
    assert isinstance(capabilities, TargetCapabilities)
    assert capabilities.thermal_status == callable(getattr(target, "thermal_status", None))
    assert capabilities.local_counters == callable(getattr(target, "missing_counters", None))
    assert capabilities.mirrored_sysfs == issubclass(target, RemoteTarget)  # its sysfs() is a RemoteSysFS
    assert callable(RemoteSysFS.refresh)


def test_what_each_kind_of_target_can_do():
    assert TARGETS.load("local").capabilities == TargetCapabilities(local_counters=True)
    assert TARGETS.load("ssh").capabilities == TargetCapabilities(mirrored_sysfs=True)
    assert TARGETS.load("adb").capabilities == TargetCapabilities(thermal_status=True, mirrored_sysfs=True)

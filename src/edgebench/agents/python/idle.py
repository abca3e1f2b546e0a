"""The idle baseline: a quiet window before the trial in which the device's idle power is measured.

The agent holds the worker (model built, waiting for ``go``) for ``idle_s`` seconds while the sampler polls, and
records the window as an ``idle`` event on the sampler's clock; ``measure.energy`` subtracts that power from the
trial's (DNNTune's ``E = T * (P_active - P_idle)``).  By default the window is taken only where a power sensor can
use it.
"""

from __future__ import annotations

import time

from edgebench.host.sysfs import SysFS
from edgebench.records.events import Idle
from edgebench.records.trial import Trial
from edgebench.registry import SENSORS

DEFAULT_IDLE_S = 5.0
#: Sensors that measure power or energy.
POWER_SENSORS = ("rapl", "jetson_power", "power_supply", "nvml")


def power_sensors_present(sysfs: SysFS) -> list[str]:
    """Names of the power sensors this device has."""
    return [name for name in POWER_SENSORS if SENSORS.load(name)(sysfs).available()]


def resolve_idle_s(trial: Trial, sysfs_root: str) -> float:
    """The trial's ``idle_s``, or :data:`DEFAULT_IDLE_S` where a power sensor exists and 0 where none does."""
    if trial.idle_s is not None:
        return trial.idle_s
    return DEFAULT_IDLE_S if power_sensors_present(SysFS(sysfs_root)) else 0.0


def wait_idle(seconds: float) -> Idle:
    """Do nothing for ``seconds`` and return the window as an ``idle`` event (``perf_counter_ns``, the sampler's)."""
    start = time.perf_counter_ns()
    time.sleep(seconds)
    return Idle(start_ns=start, end_ns=time.perf_counter_ns(), seconds=seconds)

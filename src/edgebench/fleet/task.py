"""What runs on a fleet host for one trial: open the device there, cool it down, pin its clock, run, restore.

This module imports no Ray: the Ray executor wraps :func:`run_on_device` in a task that holds the device's
resource, so the trial, its cool-down and its frequency pinning all happen on the host that owns the device, and
the governor is restored there on every way out (a cancelled task gets a KeyboardInterrupt, and the ``with``
block restores the policies it touched before the task ends).  The driver gets back records only; it stores them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edgebench.config.sweep_file import CooldownConfig
from edgebench.fleet.devices import device_here
from edgebench.launch.cooldown import Cooler
from edgebench.launch.session import Launcher
from edgebench.records.finished import FinishedTrial
from edgebench.records.launch import LaunchContext
from edgebench.sweep.plan import PlannedTrial
from edgebench.targets import open_target
from edgebench.workloads import name_model


@dataclass(frozen=True)
class DeviceRequest:
    device: str
    planned: PlannedTrial
    cooldown: CooldownConfig
    #: Cool down before this trial (the driver knows what the device ran last).
    cool_first: bool
    #: The device's idle temperatures, measured by its first trial of the sweep (None: measure them now).
    idle_c: dict[str, float] | None = None
    #: The trial's place in its sweep and its repeat, recorded with its result.
    context: LaunchContext | None = None


@dataclass(frozen=True)
class DeviceReply:
    """The finished trial (its one JSON, as the store and a rescue file hold it) and the fleet-only facts."""

    finished_json: str
    host: str
    waited_s: float
    cooldown_rule: str
    freq_set_khz: dict[str, int] | None
    idle_c: dict[str, float] = field(default_factory=dict)

    @property
    def finished(self) -> FinishedTrial:
        return FinishedTrial.from_json(self.finished_json)


def run_on_device(request: DeviceRequest) -> DeviceReply:
    """Run one planned trial on a device this host owns, through the launch path (cool-down, pinning restored on
    every way out, run, measure); a failed trial comes back as a failed result.  The driver stores it."""
    device = device_here(request.device)
    target = open_target(device.spec, sysfs_root=device.sysfs_root)
    cooler = Cooler(request.cooldown, target.sysfs())
    if request.idle_c is None:
        idle = cooler.measure_idle() if request.cooldown.until_idle else {}
    else:
        idle = cooler.idle_c = dict(request.idle_c)
    trial = request.planned.trial
    name_model(trial.model)  # the host's side of a sweep the user named its model for (see edgebench.workloads)
    launcher = Launcher(
        target,
        cooler=cooler,
        pins_frequency=trial.freq_khz is not None,
        contain_errors=True,
    )
    with launcher:  # restored on the way out, Ctrl-C on the driver (a cancelled task) included
        launched = launcher.launch(trial, cool_first=request.cool_first, context=request.context)
    cooled = launched.cooled
    return DeviceReply(launched.finished.to_json(), device.host, cooled.waited_s, cooled.rule, launched.freq_set_khz,
                       idle)  # fmt: skip

"""Where a trial may run in a fleet: on one named device (pinned) or on any device of a class (spread).

A sweep names its trials' target the same way on every executor, so one sweep file runs unchanged locally and on
Ray: ``local`` means a host's own CPU -- this machine's locally, any host's CPU (class ``local``) on a fleet --
``class:pixel7`` any device of that class, and any other name that one device.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from edgebench.fleet.devices import LOCAL_CLASS, Device

CLASS_PREFIX = "class:"


@dataclass(frozen=True)
class Placement:
    #: ``device``: only the device ``name``; ``class``: any device whose class is ``name``.
    kind: str
    name: str

    def accepts(self, device: Device) -> bool:
        return device.name == self.name if self.kind == "device" else device.device_class == self.name

    def describe(self) -> str:
        return f"device {self.name}" if self.kind == "device" else f"a device of class {self.name}"


def placement_of(target: str) -> Placement:
    """The placement of trials whose target is ``target`` (as the sweep or ``--target`` names it)."""
    if target == "local":
        return Placement("class", LOCAL_CLASS)
    if target.startswith(CLASS_PREFIX):
        return Placement("class", target.removeprefix(CLASS_PREFIX))
    return Placement("device", target)


def candidates(placement: Placement, devices: Iterable[Device]) -> list[Device]:
    return [d for d in devices if placement.accepts(d)]

"""The device itself: what it can measure (every sensor, a reading of each, why the rest is missing), a copy of the
files edgebench reads on it (a ``--sysfs-root`` tree, captured once and replayed anywhere), and what makes it noisy
for benchmarks, quieted (root) and put back."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.host.tuning import Check
    from edgebench.sensors.inventory import SensorReport


@dataclass(frozen=True)
class Inventory:
    """Every sensor of the device (``target``, read through ``sysfs_root``), for process ``pid``."""

    target: str
    sysfs_root: str
    pid: int | None
    sensors: list[SensorReport]


@dataclass(frozen=True)
class Snapshot:
    """The tree written: how many files, from which target, and the files that could not be read."""

    files: int
    target: str
    denied: list[str]


def sensor_inventory(
    target: str | None = None, *, sysfs_root: str = "/", root: bool = False, pid: int | None = None
) -> Inventory:
    """Every registered sensor on the device: available or why not, one live reading, power in watts.  ``pid`` is
    the process the process sensors watch (on a live device, this one when not given)."""
    from edgebench.sensors.inventory import inventory
    from edgebench.targets import open_target

    device = open_target(target, sysfs_root=sysfs_root, root=root or None)
    fs = device.sysfs()
    if pid is None and fs.is_live:
        pid = os.getpid()
    return Inventory(device.name, str(fs.root), pid, inventory(fs, pid))


def snapshot(out: Path, target: str | None = None, *, root: bool = False) -> Snapshot:
    """Copy the device's ``/proc`` and ``/sys`` files that edgebench reads into ``out`` (new or empty), written whole:
    nothing half-written is left under the name given."""
    from edgebench.host.capture import dump_script, parse_dump, write_tree_whole
    from edgebench.targets import open_target

    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError("-o", f"{out} is not an empty folder; give a new one")
    device = open_target(target, root=root or None)
    if device.name == "local":
        from edgebench.targets.shell import LocalShell

        dump = parse_dump(LocalShell().run(dump_script("/"), timeout_s=60).stdout)
    else:
        dump = device.sysfs().dump()  # type: ignore[attr-defined]
    count = write_tree_whole(dump, out)  # in a folder it makes: it removed a user's OUT.partial
    return Snapshot(count, device.name, sorted(dump.denied))


def system_checks(sysfs_root: str = "/") -> list[Check]:
    """What makes this device noisy for benchmarks: the governor of each cpufreq policy, turbo/boost, other load,
    and the temperatures (each with what to do, where something should be done)."""
    from edgebench.host.cpu import online_cores
    from edgebench.host.sysfs import SysFS
    from edgebench.host.tuning import Check, checks
    from edgebench.sensors.thermal import temperature_sources

    sysfs = SysFS(sysfs_root)
    found = checks(sysfs, len(online_cores(sysfs)))
    temps = []
    for source in temperature_sources(sysfs):
        milli = sysfs.read_int(source.path)
        if milli is not None:
            temps.append(f"{source.label} {milli / 1e3:.1f} °C")
    found.append(Check("thermal", ", ".join(temps) if temps else "unknown: no temperature sensor"))
    return found


def state_path(state: Path | None) -> Path:
    """Where ``system tune`` saves the state ``reset`` puts back: ``state`` (the file inside it when it is a folder:
    ``--state DIR`` said it saved the state and saved nothing), or under ``$XDG_STATE_HOME``."""
    from edgebench.host.tuning import state_file

    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state_file(state) if state else base / "edgebench" / "system-tune.json"


def system_tune(sysfs_root: str = "/", state: Path | None = None) -> list[str]:
    """(root) Every cpufreq policy to the performance governor and boost off, the state found saved first to
    :func:`state_path`; returns what was changed."""
    from edgebench.host.sysfs import SysFS
    from edgebench.host.tuning import tune

    return tune(SysFS(sysfs_root), state_path(state))


def system_reset(sysfs_root: str = "/", state: Path | None = None) -> list[str]:
    """(root) Put back what :func:`system_tune` found; returns what was restored."""
    from edgebench.host.sysfs import SysFS
    from edgebench.host.tuning import reset

    return reset(SysFS(sysfs_root), state_path(state))

"""``edgebench system show|tune|reset``: what makes this device noisy for benchmarking, and (root) quieting it."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import JsonOption, sysfs_root

app = typer.Typer(
    help="What makes this device noisy for benchmarks; tune it (root) and reset it.", no_args_is_help=True
)

SysfsRootOption = Annotated[
    Path | None, typer.Option("--sysfs-root", help="Read and set this copy of a device's /proc and /sys (tests).")
]
StateOption = Annotated[
    Path | None,
    typer.Option("--state", help="Where `tune` saves the state `reset` puts back [default: ~/.local/state/edgebench]."),
]


def _state_path(state: Path | None) -> Path:
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state or base / "edgebench" / "system-tune.json"


def _sysfs(root: Path | None):  # type: ignore[no-untyped-def]
    from edgebench.host.sysfs import SysFS

    return SysFS(sysfs_root(root))


def show(sysfs_root_dir: SysfsRootOption = None, as_json: JsonOption = False) -> int:
    """Governor per cpufreq policy, turbo/boost, other load, temperatures, and whether scaling is available."""
    from edgebench.host.cpu import online_cores
    from edgebench.host.tuning import Check, checks
    from edgebench.sensors.thermal import temperature_sources

    sysfs = _sysfs(sysfs_root_dir)
    found = checks(sysfs, len(online_cores(sysfs)))
    temps = []
    for source in temperature_sources(sysfs):
        milli = sysfs.read_int(source.path)
        if milli is not None:
            temps.append(f"{source.label} {milli / 1e3:.1f} °C")
    found.append(Check("thermal", ", ".join(temps) if temps else "unknown: no temperature sensor"))
    if as_json:
        typer.echo(json.dumps([asdict(c) for c in found], indent=2))
        return 0
    for c in found:
        typer.echo(f"{c.name}: {c.state}" + (f"  -> {c.advice}" if c.advice else ""))
    noisy = [c for c in found if c.advice]
    typer.echo(
        f"{len(noisy)} thing(s) make benchmarks noisy here" if noisy else "nothing found that makes benchmarks noisy"
    )
    return 0


def tune(sysfs_root_dir: SysfsRootOption = None, state: StateOption = None) -> int:
    """(root) Every cpufreq policy to the performance governor and boost off; the state found is saved first."""
    from edgebench.host.tuning import state_file
    from edgebench.host.tuning import tune as tune_device

    path = state_file(_state_path(state))  # a folder: the file inside it
    changed = tune_device(_sysfs(sysfs_root_dir), path)
    for line in changed or ["already tuned: nothing to change"]:
        typer.echo(line)
    typer.echo(f"saved the state to put back in {path}; `edgebench system reset` restores it")
    return 0


def reset(sysfs_root_dir: SysfsRootOption = None, state: StateOption = None) -> int:
    """(root) Put back the governors and boost `system tune` found."""
    from edgebench.host.tuning import reset as reset_device

    for line in reset_device(_sysfs(sysfs_root_dir), _state_path(state)):
        typer.echo(f"restored {line}")
    return 0

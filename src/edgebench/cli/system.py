"""``edgebench system show|tune|reset``: what makes this device noisy for benchmarking, and (root) quieting it."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import JsonOption
from edgebench.config.flags import sysfs_root

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


def show(sysfs_root_dir: SysfsRootOption = None, as_json: JsonOption = False) -> int:
    """Governor per cpufreq policy, turbo/boost, other load, temperatures, and whether scaling is available."""
    from edgebench.workflows.device import system_checks

    found = system_checks(sysfs_root(sysfs_root_dir))
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
    from edgebench.workflows.device import state_path, system_tune

    path = state_path(state)
    changed = system_tune(sysfs_root(sysfs_root_dir), path)
    for line in changed or ["already tuned: nothing to change"]:
        typer.echo(line)
    typer.echo(f"saved the state to put back in {path}; `edgebench system reset` restores it")
    return 0


def reset(sysfs_root_dir: SysfsRootOption = None, state: StateOption = None) -> int:
    """(root) Put back the governors and boost `system tune` found."""
    from edgebench.workflows.device import system_reset

    for line in system_reset(sysfs_root(sysfs_root_dir), state):
        typer.echo(f"restored {line}")
    return 0

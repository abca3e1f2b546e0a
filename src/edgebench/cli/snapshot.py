"""``edgebench snapshot --target T -o DIR``: copy every file edgebench's sensors read on a device into a tree that
``--sysfs-root DIR`` accepts, so a board is captured once and replayed anywhere (and test fixtures grow from real
devices)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import RootOption, TargetOption
from edgebench.errors import UsageError


def snapshot(
    out: Annotated[Path, typer.Option("-o", "--out", help="Folder to write the tree into (new or empty).")],
    target_spec: TargetOption = None,
    root: RootOption = False,
) -> int:
    """Copy the device's /proc and /sys files that edgebench reads into a --sysfs-root tree."""
    from edgebench.host.capture import dump_script, parse_dump, write_tree_whole
    from edgebench.targets import open_target

    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError("-o", f"{out} is not an empty folder; give a new one")
    target = open_target(target_spec, root=root or None)
    if target.name == "local":
        from edgebench.targets.shell import LocalShell

        dump = parse_dump(LocalShell().run(dump_script("/"), timeout_s=60).stdout)
    else:
        dump = target.sysfs().dump()  # type: ignore[attr-defined]
    count = write_tree_whole(dump, out)  # nothing half-written under the name the user gave
    denied = f"; {len(dump.denied)} were not readable ({'root may read them' if not root else 'even as root'})"
    typer.echo(f"copied {count} files from {target.name} into {out}" + (denied if dump.denied else ""))
    return 0

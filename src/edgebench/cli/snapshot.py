"""``edgebench snapshot --target T -o DIR``: copy every file edgebench's sensors read on a device into a tree that
``--sysfs-root DIR`` accepts, so a board is captured once and replayed anywhere (and test fixtures grow from real
devices)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import RootOption, TargetOption


def snapshot(
    out: Annotated[Path, typer.Option("-o", "--out", help="Folder to write the tree into (new or empty).")],
    target_spec: TargetOption = None,
    root: RootOption = False,
) -> int:
    """Copy the device's /proc and /sys files that edgebench reads into a --sysfs-root tree."""
    from edgebench.workflows.device import snapshot as capture

    done = capture(out, target_spec, root=root)
    denied = f"; {len(done.denied)} were not readable ({'root may read them' if not root else 'even as root'})"
    typer.echo(f"copied {done.files} files from {done.target} into {out}" + (denied if done.denied else ""))
    return 0

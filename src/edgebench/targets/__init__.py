"""Targets: where a trial runs.  ``open_target("local")``; remote transports register in ``TARGETS``."""

from __future__ import annotations

from edgebench.registry import TARGETS
from edgebench.targets.base import Target


def open_target(spec: str = "local", *, sysfs_root: str = "/") -> Target:
    """The target a user named (``local``; the scheme of a URL picks the transport)."""
    scheme = spec.split("://", 1)[0]
    return TARGETS.load(scheme).open(spec, sysfs_root=sysfs_root)

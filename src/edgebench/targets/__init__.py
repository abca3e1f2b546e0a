"""Targets: where a trial runs.  ``open_target("local")``; ``ssh://host``, ``adb://SERIAL`` or a name from the
configuration file open a remote one (``registry.TARGETS`` maps each URL scheme to its class)."""

from __future__ import annotations

from edgebench.registry import TARGETS
from edgebench.targets.base import Target
from edgebench.targets.named import TargetConfig, resolve


def open_target(
    spec: str | None = "local",
    *,
    sysfs_root: str = "/",
    root: bool | None = None,
    named: dict[str, TargetConfig] | None = None,
) -> Target:
    """The target a user named: ``local``, a URL (its scheme picks the transport), or a configured name."""
    spec = spec or "local"
    if spec == "local":
        if root:
            from edgebench.errors import UsageError

            raise UsageError("--root", "is for remote targets; run edgebench itself as root on this machine")
        return TARGETS.load("local").open(spec, sysfs_root=sysfs_root)  # type: ignore[no-any-return]
    config = resolve(spec, named, root=root)
    if sysfs_root != "/":
        from edgebench.errors import UsageError

        raise UsageError(
            "--sysfs-root", "reads a tree on this machine; a remote target's tree is set by its sysfs_root"
        )
    scheme = config.url.split("://", 1)[0]
    return TARGETS.load(scheme).from_config(config)  # type: ignore[no-any-return]


def target_of(spec: str | None, named: dict[str, TargetConfig] | None = None) -> TargetConfig | None:
    """The configuration of a remote target spec (None for ``local``), without connecting."""
    if not spec or spec == "local":
        return None
    return resolve(spec, named)

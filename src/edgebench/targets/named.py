"""Targets named once in the configuration file and used by name everywhere.

``~/.config/edgebench/config.yaml`` (or ``$EDGEBENCH_CONFIG``) holds::

    targets:
      pixel: "adb://8A2X0KDLN"                       # a URL alone
      orin:                                          # or its settings
        url: ssh://orin
        root: true
        su: "su -c"
        workdir: /home/nvidia/edgebench
        device_name: "Jetson AGX Orin"
        python: /home/nvidia/venv/bin/python

and then ``--target pixel`` works on ``run``, ``sweep``, ``sensors``, ``monitor`` and ``snapshot``; a sweep's YAML may
name targets in the same form.  A URL given directly opens with the defaults.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, field_validator

from edgebench.errors import UsageError, explain
from edgebench.host.files import yaml_file
from edgebench.records.model import Record


class TargetConfig(Record):
    """How to reach one device and what to do there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    #: The name a user calls it by (``pixel``); the URL when none was given.
    name: str | None = None
    #: Use root on the device (``adb root``, then the su form): needed to set frequencies and read root-only sensors.
    root: bool = False
    #: The su form, e.g. ``su -c`` or ``su -0``: the script is given to it as one quoted argument.  Unset: try
    #: ``su -0`` then ``su -c`` (as the MNN-based suite does), once per target.
    su: str | None = None
    #: Where edgebench keeps its files on the device (sessions, pushed binaries, the restore script).
    workdir: str | None = None
    #: The device's name in exports (``--format mnn-suite``): a phone model, a board name.
    device_name: str | None = None
    #: The device's Python that has edgebench installed (for trials of edgebench's own models).
    python: str = "python3"
    #: Environment variables set for every command on the device (``PATH``, ``PYTHONPATH``, ``LD_LIBRARY_PATH``).
    env: dict[str, str] = Field(default_factory=dict)
    #: Where the device's ``/proc`` and ``/sys`` are read (``/``; a copied tree on a test device).
    sysfs_root: str = "/"
    #: SSH only: an ``ssh_config`` file to use instead of ``~/.ssh/config``, and extra ``-o`` options.
    ssh_config: str | None = None
    ssh_options: list[str] = Field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name or self.url

    # A target's settings can come from a shared file (a lab's config, a sweep's YAML): none may become an option
    # or a command on this machine, or a shell word on the device.
    @field_validator("workdir")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and (not value.startswith("/") or "\0" in value):
            raise ValueError(f"{value!r} must be an absolute path on the device")
        return value

    @field_validator("env")
    @classmethod
    def _names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not an environment variable's name (letters, digits, _)")
        return value

    @field_validator("ssh_options")
    @classmethod
    def _options(cls, value: list[str]) -> list[str]:
        for option in value:
            key = re.split(r"[=\s]", option.strip(), maxsplit=1)[0].lower()
            if not re.fullmatch(r"[a-z0-9]+", key):
                raise ValueError(f"{option!r} is not an ssh option (Keyword=value, as ssh -o takes it)")
            if key in _COMMAND_OPTIONS:
                raise ValueError(
                    f"{option!r} runs a command on this machine; put it in your own ~/.ssh/config (Host ...) instead"
                )
        return value


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: ssh options that run a command on this machine (or include a file that could): a shared file must not set them.
_COMMAND_OPTIONS = frozenset(
    {"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "include", "match",
     "pkcs11provider", "securitykeyprovider"}
)  # fmt: skip


def config_path() -> Path:
    return Path(os.environ.get("EDGEBENCH_CONFIG") or Path.home() / ".config" / "edgebench" / "config.yaml")


def parse_targets(raw: Any, source: str) -> dict[str, TargetConfig]:
    """A ``targets:`` mapping (name -> URL or settings) as configurations; errors name the key at fault."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise UsageError(f"{source}: targets", "give a mapping of names to URLs, e.g. {pixel: adb://SERIAL}")
    out = {}
    for name, value in raw.items():
        fields = {"url": value} if isinstance(value, str) else value
        if not isinstance(fields, dict):
            raise UsageError(f"{source}: targets.{name}", "give a URL or a mapping with url:, root:, su:, workdir:")
        try:
            out[str(name)] = TargetConfig(**{**fields, "name": str(name)})
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise UsageError(f"{source}: targets.{name}.{where}", explain(error)) from None
    return out


def configured_targets() -> dict[str, TargetConfig]:
    """The targets of the user's configuration file (none when it does not exist)."""
    path = config_path()
    if not path.is_file():
        return {}
    raw = yaml_file(path, str(path), "edgebench's configuration (YAML with a targets: mapping)") or {}
    if not isinstance(raw, dict):
        raise UsageError(str(path), "give a mapping with a targets: key")
    return parse_targets(raw.get("targets"), str(path))


def resolve(spec: str, extra: dict[str, TargetConfig] | None = None, *, root: bool | None = None) -> TargetConfig:
    """A target's configuration from a name (``extra`` first, then the configuration file) or a URL."""
    if "://" in spec:
        config = TargetConfig(url=spec)
    else:
        known = {**configured_targets(), **(extra or {})}
        if spec not in known:
            names = ", ".join(sorted(known)) or f"none are named in {config_path()}"
            raise UsageError(
                "--target", f"{spec!r} is neither local, ssh://HOST, adb://SERIAL nor a named target ({names})"
            )
        config = known[spec]
    return config.model_copy(update={"root": True}) if root else config

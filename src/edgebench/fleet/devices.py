"""A fleet's devices as Ray sees them: each device a custom resource of 1 named after it, so Ray never runs two
trials on one device, and a second resource naming its class, so a sweep can ask for "any pixel7".

Resource names (advertised by ``edgebench fleet join``, read back by the executor and ``fleet status``):

* ``edgebench-target:<name>``: 1 -- the device itself; a trial holds it for its whole length (cool-down included).
* ``edgebench-class:<class>/<name>``: 1 -- which class the device belongs to (``local`` for a host's own CPU).
* ``edgebench-host:<host>``: 1 -- the host's name in the fleet (its hostname unless ``--name`` says otherwise).

How a host opens its devices (their target specs, a fixture ``sysfs_root``) never leaves it: ``fleet join`` hands
the table to ``ray start`` in :data:`ENV`, which the node's workers inherit, so a trial task opens the device there.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from edgebench.errors import UsageError

TARGET = "edgebench-target:"
CLASS = "edgebench-class:"
HOST = "edgebench-host:"
#: The environment variable that carries a node's device table to its workers.
ENV = "EDGEBENCH_FLEET_DEVICES"
#: The class of a host's own CPU; a sweep whose trials name ``local`` runs on any host's CPU.
LOCAL_CLASS = "local"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@:+-]*$")


def check_name(field: str, value: str) -> str:
    """Device, class and host names become parts of Ray resource names: letters, digits and ``_.@:+-``."""
    if not _NAME.match(value):
        raise UsageError(field, f"{value!r} must be letters, digits and _.@:+- (it names a Ray resource)")
    return value


@dataclass(frozen=True)
class Device:
    """One device of the fleet: what trials are placed on."""

    name: str
    device_class: str
    host: str
    #: How the device's host opens it (``local``, ``ssh://orin``, ``adb://SERIAL``); only known on that host.
    spec: str = "local"
    sysfs_root: str = "/"
    node_id: str = ""

    @property
    def resource(self) -> str:
        return TARGET + self.name


def local_device(host: str, sysfs_root: str = "/") -> Device:
    """A host's own CPU: ``local@<host>`` of class ``local``."""
    return Device(f"local@{host}", LOCAL_CLASS, host, "local", sysfs_root)


def resources_of(devices: Iterable[Device], host: str) -> dict[str, float]:
    """The custom resources ``ray start --resources`` advertises for ``devices`` on ``host``."""
    out: dict[str, float] = {HOST + host: 1}
    for d in devices:
        out[TARGET + d.name] = 1
        out[f"{CLASS}{d.device_class}/{d.name}"] = 1
    return out


def encode_table(devices: Iterable[Device]) -> str:
    return json.dumps({d.name: asdict(d) for d in devices}, sort_keys=True)


def device_here(name: str, environ: Mapping[str, str] = os.environ) -> Device:
    """The device ``name`` as this node's ``fleet join`` described it (run inside a trial task on the node)."""
    table = json.loads(environ.get(ENV) or "{}")
    if name not in table:
        raise RuntimeError(f"this node does not own device {name} (its fleet join named {', '.join(table) or 'none'})")
    return Device(**table[name])


def devices_of_nodes(nodes: Iterable[Mapping[str, Any]]) -> list[Device]:
    """Every device the alive nodes of ``ray.nodes()`` advertise, in host then name order."""
    out = []
    for node in nodes:
        if not node.get("Alive"):
            continue
        resources = node.get("Resources") or {}
        hosts = [k.removeprefix(HOST) for k in resources if k.startswith(HOST)]
        host = hosts[0] if hosts else str(node.get("NodeManagerAddress", "?"))
        classes = {}
        for key in resources:
            if key.startswith(CLASS):
                device_class, _, name = key.removeprefix(CLASS).rpartition("/")
                classes[name] = device_class
        for key in resources:
            if key.startswith(TARGET):
                name = key.removeprefix(TARGET)
                out.append(Device(name, classes.get(name, name), host, node_id=str(node.get("NodeID", ""))))
    return sorted(out, key=lambda d: (d.host, d.name))

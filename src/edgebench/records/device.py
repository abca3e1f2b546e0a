"""The device a trial ran on, as one typed record: what figures are compared by, read by name, never by dict key.

The agent and the backends report their environment as plain key/value pairs (:func:`host_environment`, a
backend's ``env``, a target's marks); :meth:`DeviceEnvironment.from_env` sorts them into the fields below once,
when the result is built or an older record is migrated.  Keys no field names (a backend's own settings such as
``mnn_threads`` or ``ort_providers``, which grow with each backend) land in ``extra`` as they came.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import ConfigDict, Field, JsonValue, ValidationError

from edgebench.records.model import Record

#: What :func:`edgebench.host.environment.host_environment` records of a device, all together (some possibly null).
#: ``sensor_source`` is not one: edgebench derives it from ``sysfs_root``, and a record that predates it keeps none.
_HOST_FACTS = (
    "hostname", "cpu_model", "cpu_count", "cores_online", "cores_allowed", "governors", "freq_max_khz",
    "mem_total_bytes", "machine", "kernel", "os", "python", "sysfs_root",
)  # fmt: skip


def sensor_source_of(sysfs_root: str | None) -> Literal["live", "replayed"] | None:
    """``live`` for a device's own root (``/``), ``replayed`` for any other tree, None where it is not known."""
    if sysfs_root is None:
        return None
    return "live" if sysfs_root.rstrip("/") == "" else "replayed"


class DeviceEnvironment(Record):
    """The machine, its OS and the framework a trial ran with.  ``hostname`` is the one place a result names the
    host it ran on (the store indexes it; ``uname -n`` on a remote target)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hostname: str | None = None
    cpu_model: str | None = None
    #: Online cores, and the cores this process may use (a cpuset can be narrower), as cpu lists (``0-3``).
    cpu_count: int | None = None
    cores_online: str | None = None
    cores_allowed: str | None = None
    #: Per cpufreq policy (``policy0``): its governor and its highest clock.
    governors: dict[str, str | None] | None = None
    freq_max_khz: dict[str, int | None] | None = None
    mem_total_bytes: int | None = None
    machine: str | None = None
    kernel: str | None = None
    os: str | None = None
    #: The device's Python; None on a device the POSIX sh agent ran (no Python there).
    python: str | None = None
    #: Where its /proc and /sys were read (``/``, or a captured tree in tests).
    sysfs_root: str | None = None
    #: ``live``: the sensors were the device's own files; ``replayed``: a copied tree read through ``--sysfs-root``
    #: (a capture of another device, whose files never change while the trial runs here).  None in records stored
    #: before it was kept: :attr:`replayed` then reads ``sysfs_root``.
    sensor_source: Literal["live", "replayed"] | None = None
    #: A configured target's ``device_name`` (the MNN suite's folder names), when it has one.
    device_name: str | None = None
    #: torch's version and threading as the trial ran: its intra/inter-op pools, OpenMP's setting, the cores the
    #: worker process was pinned to (any backend), ATen's parallel backend.
    torch: str | None = None
    torch_threads: int | None = None
    torch_interop_threads: int | None = None
    omp_num_threads: str | None = None
    affinity: list[int] | None = None
    parallel_backend: str | None = None
    #: The other frameworks' versions, where the trial's backend is that framework.
    mnn: str | None = None
    onnxruntime: str | None = None
    litert: str | None = None
    executorch: str | None = None
    #: What a backend or an importer recorded beyond these (``mnn_*``, ``ort_*``, ``onnx_*``, ``command_*``...).
    extra: dict[str, JsonValue] = Field(default_factory=dict)

    @property
    def replayed(self) -> bool | None:
        """Whether the trial's sensors were a replayed tree (from ``sensor_source``, or for an older record from
        ``sysfs_root``); None where the record cannot tell (an imported trial)."""
        source = self.sensor_source or sensor_source_of(self.sysfs_root)
        return None if source is None else source == "replayed"

    @property
    def tree(self) -> str | None:
        """The replayed tree's folder name (``jetson_tx2``), None for a live device."""
        return PurePosixPath(self.sysfs_root or "/").name if self.replayed else None

    @property
    def identity(self) -> str:
        """The device as predictions, partitions and Table 4 key it: its host and where its sensors came from, so
        a replayed tree's trials (another device's constant files, run on this host) never mix with the host's
        own (``orin``, ``laptop [replayed jetson_tx2]``)."""
        host = self.hostname or "?"
        return f"{host} [replayed {self.tree}]" if self.replayed else host

    @classmethod
    def from_env(cls, env: dict[str, Any]) -> DeviceEnvironment:
        """The record of a flat environment: named keys to their fields, the rest to ``extra``; a named key whose
        value is not of its field's type goes to ``extra`` too, so an older record always loads."""
        named = {k: v for k, v in env.items() if k in cls.model_fields and k != "extra"}
        try:
            return cls(**named, extra={k: v for k, v in env.items() if k not in named})
        except ValidationError as exc:  # a value of another type than the field's (an older agent's): kept as it came
            odd = {str(e["loc"][0]) for e in exc.errors() if e["loc"] and e["loc"][0] in named}
            if not odd:
                raise
            kept = {k: v for k, v in named.items() if k not in odd}
            return cls(**kept, extra={k: v for k, v in env.items() if k not in kept})

    def to_env(self) -> dict[str, Any]:
        """The flat key/value form of the record (the trials table's ``env.*`` columns): the fields that hold a
        value, then ``extra``'s keys.  Where the agent described the host (any fact besides its name), every host
        fact is listed, null or not, as the agent wrote them."""
        fields = self.model_dump(mode="json", exclude={"extra"})
        described = any(fields[k] is not None for k in _HOST_FACTS[1:])
        return {k: v for k, v in fields.items() if v is not None or (described and k in _HOST_FACTS)} | self.extra

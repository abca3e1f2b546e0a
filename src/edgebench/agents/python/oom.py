"""Was a SIGKILLed worker killed by the kernel's out-of-memory killer, or by someone else?

A SIGKILL carries no sender, and calling every one of them ``oom`` blames memory for a user's ``kill -9`` or a
supervisor's timeout.  The kernel leaves evidence of its own kills: it counts them (``oom_kill`` in
``/proc/vmstat`` system-wide, and in the worker's cgroup: ``memory.events`` on cgroup v2,
``memory.oom_control`` on v1), and it logs ``Killed process <pid>`` (``/dev/kmsg``, readable by root).  The agent
reads the counters before the worker starts and after it died: a count that rose, or a log line naming the worker,
means memory; counters that stayed put mean some other sender (``killed``).  Where none of this can be read, the
old guess stands (``oom``, "most likely"), since a device with no counters gives nothing better.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from typing import Literal

from edgebench.host.sysfs import SysFS

Cause = tuple[Literal["oom", "killed"], str]


@dataclass(frozen=True)
class OomCounts:
    """The kernel's OOM-kill counters at one moment, by where they were read (``/proc/vmstat``, a cgroup file)."""

    counts: dict[str, int]

    @classmethod
    def read(cls, sysfs: SysFS) -> OomCounts:
        counts: dict[str, int] = {}
        for path in ("/proc/vmstat", *_cgroup_oom_files(sysfs)):
            value = _oom_kill_field(sysfs, path)
            if value is not None:
                counts[path] = value
        return cls(counts)

    def rose_since(self, before: OomCounts) -> list[str]:
        """``path a -> b`` for each counter that grew since ``before``."""
        return [
            f"{path} oom_kill {before.counts[path]} -> {value}"
            for path, value in self.counts.items()
            if path in before.counts and value > before.counts[path]
        ]


def sigkill_cause(pid: int, before: OomCounts | None, after: OomCounts | None, kernel_log: str | None) -> Cause:
    """``oom`` or ``killed`` with the evidence, for worker ``pid`` that died of SIGKILL."""
    if kernel_log is not None:
        return "oom", f"worker killed by the kernel's out-of-memory killer ({kernel_log})"
    rose = after.rose_since(before) if before is not None and after is not None else []
    if rose:
        return "oom", f"worker killed by SIGKILL while the kernel's out-of-memory killer ran ({'; '.join(rose)})"
    compared = sorted(set(before.counts) & set(after.counts)) if before is not None and after is not None else []
    if compared:
        return "killed", (
            f"worker killed by SIGKILL, not by the out-of-memory killer ({', '.join(compared)} counted no OOM kill): "
            "another process or a user sent it"
        )
    return "oom", "worker killed by SIGKILL, most likely by the kernel's out-of-memory killer"


def kernel_oom_line(pid: int, kmsg: str = "/dev/kmsg") -> str | None:
    """The kernel log's ``Killed process <pid>`` line, or None (not there, or the log is not readable)."""
    needle = f"Killed process {pid} ("
    try:
        fd = os.open(kmsg, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    found = None
    try:
        while True:
            try:
                record = os.read(fd, 8192)
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # a record was overwritten while reading: go on with the next
                    continue
                break  # EAGAIN: the end of the log
            if not record:
                break
            text = record.decode(errors="replace")
            if needle in text:
                found = text.split(";", 1)[-1].strip()
    finally:
        os.close(fd)
    return found


def _cgroup_oom_files(sysfs: SysFS) -> list[str]:
    """The files counting OOM kills in this process's cgroup (the worker is its child, in the same cgroup)."""
    try:
        lines = sysfs.read_text("/proc/self/cgroup").splitlines()
    except OSError:
        return []
    files = []
    for line in lines:
        hierarchy, controllers, path = [*line.split(":", 2), "", ""][:3]
        if hierarchy == "0" and not controllers:
            files.append(f"/sys/fs/cgroup{path.rstrip('/')}/memory.events")
        elif "memory" in controllers.split(","):
            files.append(f"/sys/fs/cgroup/memory{path.rstrip('/')}/memory.oom_control")
    return [f for f in files if sysfs.exists(f)]


def _oom_kill_field(sysfs: SysFS, path: str) -> int | None:
    try:
        text = sysfs.read_text(path)
    except OSError:
        return None
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == "oom_kill" and value.strip().isdigit():
            return int(value)
    return None

"""CPU time and resident memory of one process (the worker), from ``/proc/<pid>/stat``."""

from __future__ import annotations

import os

from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import Availability, Reading, Sensor, Source, missing, present


def parse_pid_stat(stat: bytes) -> tuple[int, int, int, int, int]:
    """``(utime_ticks, stime_ticks, rss_pages, cutime_ticks, cstime_ticks)``; ``comm`` may hold spaces, so fields
    count from its ``)``.  ``cutime``/``cstime``: the CPU time of the children it waited for."""
    fields = stat[stat.rfind(b")") + 2 :].split()
    # After comm: state is field 3 of proc(5); utime is 14, stime 15, cutime 16, cstime 17, rss 24.
    return int(fields[11]), int(fields[12]), int(fields[21]), int(fields[13]), int(fields[14])


def read_status_kib(sysfs: SysFS, pid: int | str, key: str) -> int | None:
    """A ``kB`` line of ``/proc/<pid>/status`` (``VmHWM``, ``VmRSS``...) in KiB, or None."""
    try:
        text = sysfs.read_text(f"/proc/{pid}/status")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return None


def resident_bytes() -> int | None:
    """This process's resident memory now (``VmRSS``), or None where ``/proc`` is not readable."""
    kib = read_status_kib(SysFS("/"), "self", "VmRSS")
    return None if kib is None else kib * 1024


class ProcFileSensor(Sensor):
    """A sensor reading one file of ``/proc/<pid>/`` of the watched process, with page counts to convert."""

    #: The file under ``/proc/<pid>/`` it reads.
    proc_file = "stat"

    def __init__(self, sysfs: SysFS, *, pid: int | None = None, page_size_bytes: int | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self.page_size_bytes = page_size_bytes or os.sysconf("SC_PAGE_SIZE")

    def available(self) -> Availability:
        if self.pid is None:
            return missing("no process to watch (give the worker's pid, or --pid)")
        if not self.sysfs.exists(f"/proc/{self.pid}/{self.proc_file}"):
            return missing(f"/proc/{self.pid}/{self.proc_file} is missing: process {self.pid} is not running")
        return present()


class ProcessSensor(ProcFileSensor):
    """utime/stime ticks and RSS bytes of ``pid``; reads ``None`` once the process has exited."""

    name = "process"
    # The worker measures its own CPU time exactly per phase; this series is for RSS and CPU over time.
    min_period_ms = 100.0

    def open(self) -> tuple[str, ...]:
        return ("proc_utime_ticks", "proc_stime_ticks", "proc_rss_bytes", "proc_children_ticks")

    def sources(self) -> list[Source]:
        return [Source(f"/proc/{self.pid}/stat", 1024)]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        try:
            utime, stime, rss_pages, cutime, cstime = parse_pid_stat(blobs[0] or b"")
        except (IndexError, ValueError):  # the process has exited: the read failed or came back empty
            return [None, None, None, None]
        return [utime, stime, rss_pages * self.page_size_bytes, cutime + cstime]

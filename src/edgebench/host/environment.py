"""The environment a trial ran in, recorded with every result so that figures can be compared honestly."""

from __future__ import annotations

import os
import platform
import socket
from typing import Any

from edgebench.host.cpu import cpu_model, freq_policies, online_cores
from edgebench.host.cpuset import format_cpu_list
from edgebench.host.sysfs import SysFS


def allowed_cores() -> tuple[int, ...]:
    """Cores this process may run on (a container's cpuset can be narrower than the online cores)."""
    return tuple(sorted(os.sched_getaffinity(0)))


def host_environment(sysfs: SysFS) -> dict[str, Any]:
    """CPU model, cores, governors and memory from ``sysfs``; OS facts from the running interpreter."""
    mem_total = None
    try:
        for line in sysfs.read_text("/proc/meminfo").splitlines():
            if line.startswith("MemTotal:"):
                mem_total = int(line.split()[1]) * 1024
                break
    except OSError:
        pass
    policies = freq_policies(sysfs)
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(sysfs),
        "cpu_count": len(online_cores(sysfs)),
        "cores_online": format_cpu_list(online_cores(sysfs)),
        "cores_allowed": format_cpu_list(allowed_cores()) if sysfs.is_live else None,
        "governors": {p.name: p.governor for p in policies} or None,
        "freq_max_khz": {p.name: p.max_khz for p in policies} or None,
        "mem_total_bytes": mem_total,
        "machine": platform.machine(),
        "kernel": platform.release(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "sysfs_root": str(sysfs.root),
        "sensor_source": "live" if sysfs.is_live else "replayed",
    }

"""This device's compute and memory ceilings (dense fp32 GEMM GFLOP/s, copy GB/s) for a placement, measured once in
a fresh pinned process and kept in the store; the roofline of ``edgebench layers`` reads them per trial."""

from __future__ import annotations

import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UsageError
from edgebench.workflows.common import Notify, quiet


class PeakNotMeasured(Exception):
    """The micro-benchmark failed (its process died, timed out or could not start): nothing was stored."""


@dataclass(frozen=True)
class PeakRequest:
    """The placement to measure: cores (a hex mask as taskset takes, a list such as ``0,2-3``, or ids; None: every
    usable core), intra-op threads (None: one per core), and whether to measure again over a stored figure."""

    cores: str | tuple[int, ...] | None = None
    threads: int | None = None
    refresh: bool = False
    store: Path | None = None


def _torch_version() -> str:
    from importlib.metadata import version

    return version("torch")


def trial_peak_key(result: Any) -> str:
    """The device key a trial's figures are compared against: its host, CPU, cores, threads and torch."""
    from edgebench.backends.torch.peak import device_key
    from edgebench.host.cpuset import format_cpu_list

    device = result.device
    cores = format_cpu_list(result.trial.cores) if result.trial.cores else "?"
    return device_key(device.hostname or "?", device.cpu_model, cores, result.trial.threads or 1, device.torch or "?")


def peak_for_trial(
    store: Any, result: Any, *, refresh: bool = False, measure_ok: bool = True, notify: Notify = quiet
) -> dict[str, Any] | None:
    """The stored peak for the trial's device and placement; measured now (and stored) if this is that device.

    A trial from another device gets None: its ceilings can only be measured there.
    """
    from edgebench.backends.torch.peak import measure
    from edgebench.host.cpuset import format_cpu_list
    from edgebench.host.environment import allowed_cores

    key = trial_peak_key(result)
    stored = None if refresh else store.device_peak(key)
    if stored is not None or not measure_ok:
        return stored
    if result.device.hostname != socket.gethostname() or not result.trial.cores:
        return None
    if not set(result.trial.cores) <= set(allowed_cores()):
        return None  # the trial's cores are not ours to use now
    cores = format_cpu_list(result.trial.cores)
    notify(f"measuring this device's GEMM and copy peaks on cpu {cores}, {result.trial.threads} threads ...")
    try:
        peak = measure(tuple(result.trial.cores), result.trial.threads or 1).to_dict()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        notify(f"edgebench: warning: {exc}; shares of peak are left out")
        return None
    if peak["key"] != key:  # e.g. torch upgraded since the trial: keep it, but under the trial's key too
        peak = {**peak, "key": key}
    store.save_device_peak(peak)
    return peak


def device_peak(request: PeakRequest, *, notify: Notify = quiet) -> dict[str, Any]:
    """The stored figure of this placement, or measured now (``notify`` says so) and stored: the key, GEMM GFLOP/s
    and its size, copy GB/s and its bytes, when it was measured.  A failed measurement raises
    :class:`PeakNotMeasured`."""
    from edgebench.backends.torch.peak import device_key, measure
    from edgebench.config.flags import parse
    from edgebench.host.cpu import cpu_model
    from edgebench.host.cpuset import format_cpu_list, parse_cores
    from edgebench.host.environment import allowed_cores
    from edgebench.host.sysfs import SysFS
    from edgebench.store import Store

    allowed = allowed_cores()
    cores = request.cores
    chosen = (parse("--cores", cores, parse_cores) if isinstance(cores, str) else cores) or allowed
    missing = sorted(set(chosen) - set(allowed))
    if missing:
        raise UsageError(
            "--cores", f"cpu {format_cpu_list(missing)} is not available here (usable: {format_cpu_list(allowed)})"
        )
    if request.threads is not None and request.threads < 1:
        raise UsageError("--threads", "must be at least 1")
    n_threads = request.threads or len(chosen)
    key = device_key(socket.gethostname(), cpu_model(SysFS("/")), format_cpu_list(chosen), n_threads, _torch_version())
    with Store(request.store) as db:
        figure = None if request.refresh else db.device_peak(key)
        if figure is None:
            notify(f"measuring GEMM and copy peaks on cpu {format_cpu_list(chosen)}, {n_threads} threads ...")
            try:
                figure = {**measure(tuple(chosen), n_threads).to_dict(), "key": key}
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
                raise PeakNotMeasured(str(exc)) from None
            db.save_device_peak(figure)
    return figure

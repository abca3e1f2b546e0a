"""This device's compute and memory ceilings (dense fp32 GEMM GFLOP/s, copy GB/s) for a placement, measured once in
a fresh pinned process and kept in the store; the roofline of ``edgebench layers`` reads them per trial.

A figure measured on a busy device (the benchmark's threads waited for a CPU: other load takes a ceiling down, 3.6
GB/s copy bandwidth where the quiet device gives 96.7) is stored flagged, said, and measured again the next time it
is asked for; of two measurements the best of each ceiling is kept, and the flag goes once a quiet one is taken."""

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
    if (stored is not None and not stored.get("busy")) or not measure_ok:
        return stored
    if result.device.hostname != socket.gethostname() or not result.trial.cores:
        return stored  # another device's (flagged, where it was measured busy): only measurable there
    if not set(result.trial.cores) <= set(allowed_cores()):
        return stored  # the trial's cores are not ours to use now
    cores = format_cpu_list(result.trial.cores)
    again = f" again: the stored one was measured on a busy device ({stored['busy']})" if stored else ""
    notify(f"measuring this device's GEMM and copy peaks on cpu {cores}, {result.trial.threads} threads{again} ...")
    try:
        peak = measure(tuple(result.trial.cores), result.trial.threads or 1).to_dict()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        notify(f"edgebench: warning: {exc}; shares of peak are left out")
        return stored
    peak = _kept({**peak, "key": key}, stored, notify)  # the trial's key (torch may have been upgraded since)
    store.save_device_peak(peak)
    return peak


def _kept(fresh: dict[str, Any], stored: dict[str, Any] | None, notify: Notify) -> dict[str, Any]:
    """What is stored after a measurement: with a busy figure before it, the best of the two; a busy result is
    said, and stays flagged so the next use measures again."""
    from edgebench.backends.torch.peak import best_of

    kept = best_of(stored, fresh) if stored else fresh
    if kept.get("busy"):
        notify(f"edgebench: warning: the peak was measured on a busy device ({kept['busy']}); it is stored flagged "
               "and measured again when next needed: run `edgebench peak --refresh` on a quiet device")  # fmt: skip
    return kept


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
        stored = db.device_peak(key)
        figure = None if request.refresh else stored
        if figure is None or figure.get("busy"):
            again = f" again: the stored one was measured on a busy device ({figure['busy']})" if figure else ""
            notify(f"measuring GEMM and copy peaks on cpu {format_cpu_list(chosen)}, {n_threads} threads{again} ...")
            try:
                fresh = {**measure(tuple(chosen), n_threads).to_dict(), "key": key}
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
                raise PeakNotMeasured(str(exc)) from None
            # --refresh measures anew: a quiet figure replaces the stored one; a busy one keeps the best of both
            figure = _kept(fresh, stored if stored and (stored.get("busy") or fresh.get("busy")) else None, notify)
            db.save_device_peak(figure)
    return figure

"""``edgebench peak``: measure (once) and show this device's GEMM and copy ceilings for a placement."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Annotated, Any

import typer

from edgebench.backends.torch.peak import device_key, measure
from edgebench.cli.options import StoreOption, parse
from edgebench.errors import UsageError
from edgebench.host.cpuset import format_cpu_list, parse_cores
from edgebench.units import MIB


def _torch_version() -> str:
    from importlib.metadata import version

    return version("torch")


def trial_peak_key(result: Any) -> str:
    """The device key a trial's figures are compared against: its host, CPU, cores, threads and torch."""
    device = result.device
    cores = format_cpu_list(result.trial.cores) if result.trial.cores else "?"
    return device_key(device.hostname or "?", device.cpu_model, cores, result.trial.threads or 1, device.torch or "?")


def peak_for_trial(store: Any, result: Any, *, refresh: bool = False, measure_ok: bool = True) -> dict[str, Any] | None:
    """The stored peak for the trial's device and placement; measured now (and stored) if this is that device.

    A trial from another device gets None: its ceilings can only be measured there.
    """
    key = trial_peak_key(result)
    stored = None if refresh else store.device_peak(key)
    if stored is not None or not measure_ok:
        return stored
    from edgebench.host.environment import allowed_cores

    if result.device.hostname != socket.gethostname() or not result.trial.cores:
        return None
    if not set(result.trial.cores) <= set(allowed_cores()):
        return None  # the trial's cores are not ours to use now
    cores = format_cpu_list(result.trial.cores)
    print(
        f"measuring this device's GEMM and copy peaks on cpu {cores}, {result.trial.threads} threads ...",
        file=sys.stderr,
    )
    try:
        peak = measure(tuple(result.trial.cores), result.trial.threads or 1).to_dict()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"edgebench: warning: {exc}; shares of peak are left out", file=sys.stderr)
        return None
    if peak["key"] != key:  # e.g. torch upgraded since the trial: keep it, but under the trial's key too
        peak = {**peak, "key": key}
    store.save_device_peak(peak)
    return peak


def peak(
    cores: Annotated[
        str | None, typer.Option(help="Cores: hex mask as taskset (f0 = cpu4-7) or list (0,2-3) [default: all usable].")
    ] = None,
    threads: Annotated[int | None, typer.Option(help="Intra-op threads [default: one per core].")] = None,
    refresh: Annotated[bool, typer.Option("--refresh", help="Measure again even if a figure is stored.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    store: StoreOption = None,
) -> int:
    """Measure this device's dense fp32 GEMM GFLOP/s and copy GB/s (once per placement; stored and reused)."""
    from edgebench.host.environment import allowed_cores
    from edgebench.store import Store

    allowed = allowed_cores()
    chosen = parse("--cores", cores, parse_cores) or allowed
    missing = sorted(set(chosen) - set(allowed))
    if missing:
        raise UsageError(
            "--cores", f"cpu {format_cpu_list(missing)} is not available here (usable: {format_cpu_list(allowed)})"
        )
    if threads is not None and threads < 1:
        raise UsageError("--threads", "must be at least 1")
    n_threads = threads or len(chosen)
    from edgebench.host.cpu import cpu_model
    from edgebench.host.sysfs import SysFS

    key = device_key(socket.gethostname(), cpu_model(SysFS("/")), format_cpu_list(chosen), n_threads, _torch_version())
    with Store(store) as db:
        figure = None if refresh else db.device_peak(key)
        if figure is None:
            print(
                f"measuring GEMM and copy peaks on cpu {format_cpu_list(chosen)}, {n_threads} threads ...",
                file=sys.stderr,
            )
            try:
                figure = {**measure(tuple(chosen), n_threads).to_dict(), "key": key}
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
                from edgebench.cli import fail

                return fail(str(exc), 1)
            db.save_device_peak(figure)
    if as_json:
        typer.echo(json.dumps(figure, indent=2))
    else:
        typer.echo(
            f"{figure['key']}\n  GEMM {figure['gemm_gflops']:.1f} GFLOP/s (fp32, n={figure['gemm_size']})\n"
            f"  copy {figure['copy_gbps']:.1f} GB/s (read + write, {figure['copy_bytes'] // MIB} MiB)\n"
            f"  ridge {figure['gemm_gflops'] / figure['copy_gbps']:.1f} FLOP/B; measured {figure['measured_at']}"
        )
    return 0

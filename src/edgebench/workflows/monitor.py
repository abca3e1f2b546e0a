"""The long-running monitor as a use case: sample every available sensor into a folder (constant memory) until a
duration ends or the user stops it, and report thermal throttling; on a remote target the device's own edgebench
samples there, on its clock, and its files are copied back when it ends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgebench.errors import UsageError
from edgebench.workflows.common import Notify, quiet

if TYPE_CHECKING:
    from edgebench.monitor.session import MonitorSummary


@dataclass(frozen=True)
class MonitorRequest:
    """Where the files go, how often and how long to sample (text such as ``10ms``, ``1h``, or numbers: ms, s), the
    device tree, a process to watch, the sensors (None: every one the device has), the throttling temperature, and
    the target (None or ``local``: this machine)."""

    out: Path
    interval: str | float = "10ms"
    duration: str | float | None = None
    sysfs_root: Path | None = None
    pid: int | None = None
    sensors: str | Sequence[str] | None = None
    throttle_temp: float | None = None
    target: str | None = None
    root: bool = False


@dataclass(frozen=True)
class _Checked:
    interval_ms: float
    duration_s: float | None
    sensors: tuple[str, ...]
    tree: str


@dataclass(frozen=True)
class RemoteMonitor:
    """What the device's own ``edgebench monitor`` printed (its folder named as the local copy) and its exit code."""

    stdout: str
    stderr: str
    returncode: int


def sensor_names(text: str) -> tuple[str, ...]:
    """``cpu_freq,thermal`` as the sensors' canonical names."""
    from edgebench.registry import SENSORS

    names = tuple(filter(None, (n.strip() for n in text.split(","))))
    if not names:
        raise ValueError(f"names no sensor; choose from: {', '.join(SENSORS.names())}")
    return tuple(SENSORS.canonical(n) for n in names)


def _check(r: MonitorRequest) -> _Checked:
    """Every option read, and the folder checked (a file, a place nobody may write, an earlier run), before sampling."""
    from edgebench.config.flags import parse, sysfs_root
    from edgebench.config.settings import sample_interval
    from edgebench.monitor.session import FILES
    from edgebench.report.outputs import check_output_folder
    from edgebench.sensors.sampler import DEFAULT_SENSORS
    from edgebench.units import parse_duration_s

    interval_ms = r.interval
    if isinstance(interval_ms, str):
        interval_ms = parse("--interval", interval_ms, lambda t: parse_duration_s(t, "ms") * 1e3)  # type: ignore[assignment]
    if not interval_ms or interval_ms <= 0:
        raise UsageError("--interval", "must be above 0, e.g. 10ms")
    parse("--interval", str(interval_ms), lambda t: sample_interval(float(t)))  # the sampler's floor, as for run
    duration_s = parse("--duration", r.duration, parse_duration_s) if isinstance(r.duration, str) else r.duration
    if duration_s is not None and duration_s <= 0:
        raise UsageError("--duration", "must be above 0, e.g. 10m or 1h")
    sensors = r.sensors if r.sensors is None or isinstance(r.sensors, str) else ",".join(r.sensors)
    names = parse("--sensors", sensors, sensor_names) or DEFAULT_SENSORS
    tree = sysfs_root(r.sysfs_root)
    check_output_folder("--out", r.out)  # a file, or a place nobody may write (/proc): refused before sampling
    taken = [f for f in FILES if (r.out / f).exists()]
    if taken:
        raise UsageError("--out", f"{r.out} already holds a monitor run ({', '.join(taken)}); choose another folder")
    return _Checked(float(interval_ms), duration_s, names, tree)


def is_remote(request: MonitorRequest) -> bool:
    """Whether the request names a remote target (then :func:`monitor_remote` samples it, on the device)."""
    return request.target not in (None, "local")


def monitor_here(
    request: MonitorRequest,
    *,
    on_start: Callable[[MonitorSummary], None] | None = None,
    on_throttle: Callable[[str, Any], None] | None = None,
) -> MonitorSummary:
    """Sample this machine until the duration ends or a stop signal (Ctrl-C, SIGTERM) arrives; ``on_start`` hears
    which sensors are sampled (and which are not on the device), ``on_throttle`` each throttling episode as it
    starts and ends.  The summary (samples, lateness, energy per power channel, throttling) is also in the folder."""
    from edgebench.monitor.session import MonitorConfig, run_monitor

    c = _check(request)
    if is_remote(request):
        raise UsageError("--target", f"{request.target} is a remote target: use monitor_remote")
    config = MonitorConfig(request.out, c.interval_ms, c.duration_s, c.tree, request.pid, c.sensors,
                           request.throttle_temp)  # fmt: skip
    return run_monitor(config, on_start=on_start, on_throttle=on_throttle)


def monitor_remote(request: MonitorRequest, *, as_json: bool = False, notify: Notify = quiet) -> RemoteMonitor:
    """``monitor`` on a remote target: the device's own edgebench samples there (a remote monitor needs a
    duration: it is stopped on the device, not by Ctrl-C here); its files are copied into ``out`` when it ends."""
    import os
    import shlex

    from edgebench.monitor.session import FILES
    from edgebench.targets import open_target
    from edgebench.targets.remote_sysfs import sh_text

    c = _check(request)
    if c.duration_s is None:
        raise UsageError("--duration", "a monitor on a remote target needs one, e.g. --duration 10m")
    target = open_target(request.target, root=request.root or None)
    remote_out = f"{target.workdir}/monitor-{os.urandom(6).hex()}"  # type: ignore[attr-defined]
    args = ["monitor", "--out", remote_out, "--interval", f"{c.interval_ms:g}ms", "--duration", f"{c.duration_s:g}s"]
    if target.config.sysfs_root != "/":  # type: ignore[attr-defined]
        args += ["--sysfs-root", target.config.sysfs_root]  # type: ignore[attr-defined]
    if request.sensors:
        args += ["--sensors", request.sensors if isinstance(request.sensors, str) else ",".join(request.sensors)]
    if request.throttle_temp is not None:
        args += ["--throttle-temp", f"{request.throttle_temp:g}"]
    if as_json:
        args.append("--json")
    notify(f"monitoring {target.name} for {c.duration_s:g} s on the device")
    done = target.run_edgebench(args, c.duration_s + 300)  # type: ignore[attr-defined]
    request.out.mkdir(parents=True, exist_ok=True)
    try:
        for name in FILES:
            try:
                target.shell.pull(f"{remote_out}/{name}", request.out / name)  # type: ignore[attr-defined]
            except OSError:
                continue  # a file this run did not write
    finally:
        sh_text(target.shell, f"rm -rf {shlex.quote(remote_out)}", 30, None)  # type: ignore[attr-defined]
        target.close()  # type: ignore[attr-defined]
    return RemoteMonitor(done.stdout.replace(remote_out, str(request.out)), done.stderr, done.returncode)

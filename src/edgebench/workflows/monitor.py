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
    from edgebench.monitor.session import MonitorConfig, MonitorSummary


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
    #: ``python`` (this process's sampler, here), ``native`` (the static sampler built for the device) or ``auto``
    #: (native on a remote target, python here).
    sampler: str = "auto"


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
    if r.sampler not in ("auto", "python", "native"):
        raise UsageError("--sampler", f"is auto, python or native, not {r.sampler!r}")
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
    starts and ends.  The summary (samples, lateness, energy per power channel, throttling) is also in the folder.
    ``sampler="native"`` samples with the static sampler built for this machine instead of this process's."""
    from edgebench.host.sysfs import SysFS
    from edgebench.monitor.session import run_monitor

    c = _check(request)
    if is_remote(request):
        raise UsageError("--target", f"{request.target} is a remote target: use monitor_remote")
    config = _config(request, c)
    if request.sampler == "native":
        from edgebench.targets.local import LocalTarget

        with LocalTarget(c.tree).command_shell() as (shell, local_root):
            loop, _ = _native_loop(config, shell, "native", SysFS(c.tree), local_root, "monotonic")
            return run_monitor(config, on_start, on_throttle, loop=loop)
    return run_monitor(config, on_start=on_start, on_throttle=on_throttle)


def _config(request: MonitorRequest, c: _Checked) -> MonitorConfig:
    from edgebench.monitor.session import MonitorConfig

    return MonitorConfig(request.out, c.interval_ms, c.duration_s, c.tree, request.pid, c.sensors,
                         request.throttle_temp)  # fmt: skip


def _native_loop(config: MonitorConfig, shell: Any, setting: str, sysfs: Any, root: str, clock: str) -> tuple[Any, str]:
    """The native sampler's loop on the device behind ``shell`` and why; None where none fits and ``setting`` is
    ``auto`` (``native`` then refuses in one line)."""
    from edgebench.agents.sh.native import choose_sampler
    from edgebench.monitor.native import NativeLoop

    choice = choose_sampler("native" if setting == "native" else "auto", shell, native_by_default=True)
    if choice.kind != "native":
        return None, choice.why
    return NativeLoop(config, shell, choice, sysfs, root=root, clock=clock), choice.why


def monitor_remote(
    request: MonitorRequest,
    *,
    as_json: bool = False,
    notify: Notify = quiet,
    on_start: Callable[[MonitorSummary], None] | None = None,
    on_throttle: Callable[[str, Any], None] | None = None,
) -> MonitorSummary | RemoteMonitor:
    """``monitor`` on a remote target.  The native sampler built for the device streams its records over the
    device's shell and they are decoded and written here as they arrive (no Python on the device; a summary as
    :func:`monitor_here` gives).  Where no build fits (or ``sampler="python"``), the device's own edgebench samples
    there instead (it needs a duration: it is stopped on the device, not by Ctrl-C here) and its files are copied
    into ``out`` when it ends (what it printed comes back)."""
    from edgebench.monitor.session import run_monitor
    from edgebench.targets import open_target

    c = _check(request)
    target = open_target(request.target, root=request.root or None)
    try:
        if request.sampler != "python":
            config = _config(request, c)
            with target.command_shell() as (shell, device_root):  # type: ignore[attr-defined]
                loop, why = _native_loop(config, shell, request.sampler, target.sysfs(), device_root, "uptime")
                if loop is not None:
                    return run_monitor(config, on_start, on_throttle, loop=loop)
            notify(f"{target.name}: {why}; the device's edgebench monitors")
        return _device_edgebench(request, c, target, as_json=as_json, notify=notify)
    finally:
        target.close()  # type: ignore[attr-defined]


def _device_edgebench(
    request: MonitorRequest, c: _Checked, target: Any, *, as_json: bool, notify: Notify
) -> RemoteMonitor:
    """The device's own ``edgebench monitor``, its files copied into ``out`` when it ends."""
    import os
    import shlex

    from edgebench.monitor.session import FILES
    from edgebench.targets.remote_sysfs import sh_text

    if c.duration_s is None:
        raise UsageError("--duration", "a monitor on a remote target needs one, e.g. --duration 10m")
    remote_out = f"{target.workdir}/monitor-{os.urandom(6).hex()}"
    args = ["monitor", "--out", remote_out, "--interval", f"{c.interval_ms:g}ms", "--duration", f"{c.duration_s:g}s"]
    if target.config.sysfs_root != "/":
        args += ["--sysfs-root", target.config.sysfs_root]
    if request.sensors:
        args += ["--sensors", request.sensors if isinstance(request.sensors, str) else ",".join(request.sensors)]
    if request.throttle_temp is not None:
        args += ["--throttle-temp", f"{request.throttle_temp:g}"]
    if as_json:
        args.append("--json")
    notify(f"monitoring {target.name} for {c.duration_s:g} s on the device")
    done = target.run_edgebench(args, c.duration_s + 300)
    request.out.mkdir(parents=True, exist_ok=True)
    try:
        for name in FILES:
            try:
                target.shell.pull(f"{remote_out}/{name}", request.out / name)
            except OSError:
                continue  # a file this run did not write
    finally:
        sh_text(target.shell, f"rm -rf {shlex.quote(remote_out)}", 30, None)
    return RemoteMonitor(done.stdout.replace(remote_out, str(request.out)), done.stderr, done.returncode)

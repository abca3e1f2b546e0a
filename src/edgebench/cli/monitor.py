"""``edgebench monitor``: sample every available sensor into a folder until told to stop, and report throttling."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import RootOption, TargetOption, parse, sysfs_root
from edgebench.config.settings import sample_interval
from edgebench.errors import UsageError
from edgebench.host.sysfs import SysFS
from edgebench.report.outputs import check_output_folder
from edgebench.units import parse_duration_s

THROTTLE_HELP = "°C from which a busy clock held down counts as throttling [default: lowest passive trip - 5, or 70]."


def _sensor_names(text: str) -> tuple[str, ...]:
    from edgebench.registry import SENSORS

    names = tuple(filter(None, (n.strip() for n in text.split(","))))
    if not names:
        raise ValueError(f"names no sensor; choose from: {', '.join(SENSORS.names())}")
    return tuple(SENSORS.canonical(n) for n in names)


SAMPLER_HELP = (
    "python: this process's sampler (here); native: the static sampler built for the device (pip install "
    "'edgebench[native-sampler]'); auto: native on a --target, python here."
)


def monitor(
    out: Annotated[Path, typer.Option(help="Folder for samples.csv, freq_temperature.csv, meta.json, summary.json.")],
    interval: Annotated[str, typer.Option(help="Sampling period, e.g. 10ms.")] = "10ms",
    duration: Annotated[str | None, typer.Option(help="Stop after this long, e.g. 1h [default: until Ctrl-C].")] = None,
    sysfs_root_dir: Annotated[
        Path | None, typer.Option("--sysfs-root", help="Read a tree copied from a device instead of /.")
    ] = None,
    pid: Annotated[int | None, typer.Option(help="Also watch this process's CPU time and memory.")] = None,
    sensors: Annotated[
        str | None, typer.Option(help="Comma-separated sensors [default: every one this device has].")
    ] = None,
    throttle_temp: Annotated[
        float | None,
        typer.Option(help=THROTTLE_HELP),
    ] = None,
    sampler: Annotated[str, typer.Option(help=SAMPLER_HELP)] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON at the end.")] = False,
    target_spec: TargetOption = None,
    root: RootOption = False,
) -> int:
    """Sample all available sensors to disk (constant memory), survive Ctrl-C, and report thermal throttling."""
    from edgebench.monitor.session import FILES, MonitorConfig, run_monitor
    from edgebench.sensors.sampler import DEFAULT_SENSORS

    interval_ms = parse("--interval", interval, lambda t: parse_duration_s(t, "ms") * 1e3)
    if not interval_ms or interval_ms <= 0:
        raise UsageError("--interval", "must be above 0, e.g. 10ms")
    parse("--interval", str(interval_ms), lambda t: sample_interval(float(t)))  # the sampler's floor, as for run
    duration_s = parse("--duration", duration, parse_duration_s)
    if duration_s is not None and duration_s <= 0:
        raise UsageError("--duration", "must be above 0, e.g. 10m or 1h")
    if sampler not in ("auto", "python", "native"):
        raise UsageError("--sampler", f"is auto, python or native, not {sampler!r}")
    names = parse("--sensors", sensors, _sensor_names) or DEFAULT_SENSORS
    tree = sysfs_root(sysfs_root_dir)
    check_output_folder("--out", out)  # a file, or a place nobody may write (/proc): refused before sampling
    taken = [f for f in FILES if (out / f).exists()]
    if taken:
        raise UsageError("--out", f"{out} already holds a monitor run ({', '.join(taken)}); choose another folder")
    config = MonitorConfig(out, interval_ms, duration_s, tree, pid, names, throttle_temp)

    def started(summary) -> None:  # type: ignore[no-untyped-def]
        until = f" for {duration}" if duration else " until Ctrl-C"
        where = f"{summary.sampler} sampler" + (f": {summary.sampler_why}" if summary.sampler_why else "")
        print(f"monitoring {', '.join(summary.sensors)} every {interval_ms:g} ms into {out}{until} ({where})",
              file=sys.stderr)  # fmt: skip
        for name, reason in summary.unavailable.items():
            print(f"  not on this device: {name}: {reason}", file=sys.stderr)

    def throttle(kind: str, e) -> None:  # type: ignore[no-untyped-def]
        now = time.strftime("%H:%M:%S")
        if kind == "start":
            print(f"{now} throttling: {e.policy} (cpu {','.join(map(str, e.cores))}) at {e.min_freq_khz / 1e3:.0f} "
                  f"of {e.max_khz / 1e3:.0f} MHz under load, {e.max_temp_c:.1f} °C", file=sys.stderr)  # fmt: skip
        else:
            print(f"{now} throttling of {e.policy} ended after {e.duration_s:.0f} s", file=sys.stderr)

    if target_spec not in (None, "local"):
        from edgebench.targets import open_target

        target = open_target(target_spec, root=root or None)
        try:
            if sampler != "python":
                with target.command_shell() as (shell, device_root):  # type: ignore[attr-defined]
                    loop, why = _native_loop(config, shell, sampler, target.sysfs(), device_root, "uptime")
                    if loop is not None:
                        return _report(run_monitor(config, started, throttle, loop=loop), as_json, out)
                print(f"{target.name}: {why}; the device's edgebench monitors", file=sys.stderr)
            return _remote_monitor(target, out, interval_ms, duration_s, sensors, throttle_temp, as_json)
        finally:
            target.close()  # type: ignore[attr-defined]
    if sampler == "native":
        from edgebench.targets.local import LocalTarget

        with LocalTarget(tree).command_shell() as (shell, local_root):
            loop, _ = _native_loop(config, shell, sampler, SysFS(tree), local_root, "monotonic")
            return _report(run_monitor(config, started, throttle, loop=loop), as_json, out)
    return _report(run_monitor(config, on_start=started, on_throttle=throttle), as_json, out)


def _native_loop(config, shell, setting: str, sysfs, root: str, clock: str):  # type: ignore[no-untyped-def]
    """The native sampler's loop on the device behind ``shell`` and why; None where none fits and ``setting`` is
    ``auto`` (``native`` then refuses in one line)."""
    from edgebench.agents.sh.native import choose_sampler
    from edgebench.monitor.native import NativeLoop

    choice = choose_sampler("native" if setting == "native" else "auto", shell, native_by_default=True)
    if choice.kind != "native":
        return None, choice.why
    return NativeLoop(config, shell, choice, sysfs, root=root, clock=clock), choice.why


def _report(summary, as_json: bool, out: Path) -> int:  # type: ignore[no-untyped-def]
    if as_json:
        typer.echo(json.dumps(asdict(summary), indent=2))
        return 0
    typer.echo(
        f"{summary.samples} samples over {summary.duration_s:.1f} s ({summary.late_samples} late, {summary.sampler} "
        f"sampler {summary.cpu_pct_of_core:.2f}% of a core), stopped by {summary.stopped_by}; files in {out}"
    )
    for name, e in summary.energy.items():
        if e["energy_j"] is not None:
            typer.echo(f"  {name} ({e['scope']}): {e['energy_j']:.2f} J, mean {e['avg_power_w']:.3f} W")
    if summary.throttling is None:
        typer.echo(f"  thermal throttling: cannot be told ({summary.throttling_unknown})")
    elif not summary.throttling:
        typer.echo(f"  no thermal throttling (clock below 95% of max under load at >= {summary.hot_c:g} °C)")
    for t in summary.throttling or []:
        typer.echo(
            f"  throttled: {t['policy']} from {t['start']} for {t['duration_s']:.0f} s, down to "
            f"{t['min_freq_khz'] / 1e3:.0f} of {t['max_khz'] / 1e3:.0f} MHz, up to {t['max_temp_c']:.1f} °C"
        )
    return 0


def _remote_monitor(
    target,  # type: ignore[no-untyped-def]
    out: Path,
    interval_ms: float,
    duration_s: float | None,
    sensors: str | None,
    throttle_temp: float | None,
    as_json: bool,
) -> int:
    """``monitor --target`` without the native sampler: the device's own edgebench samples there, on its clock;
    its files are copied into ``out`` when it ends.  It needs ``--duration``: it is stopped on the device, not by
    Ctrl-C here."""
    import os
    import shlex

    from edgebench.monitor.session import FILES
    from edgebench.targets.remote_sysfs import sh_text

    if duration_s is None:
        raise UsageError("--duration", "a monitor on a remote target needs one, e.g. --duration 10m")
    remote_out = f"{target.workdir}/monitor-{os.urandom(6).hex()}"
    args = ["monitor", "--out", remote_out, "--interval", f"{interval_ms:g}ms", "--duration", f"{duration_s:g}s"]
    if target.config.sysfs_root != "/":
        args += ["--sysfs-root", target.config.sysfs_root]
    if sensors:
        args += ["--sensors", sensors]
    if throttle_temp is not None:
        args += ["--throttle-temp", f"{throttle_temp:g}"]
    if as_json:
        args.append("--json")
    print(f"monitoring {target.name} for {duration_s:g} s on the device", file=sys.stderr)
    done = target.run_edgebench(args, duration_s + 300)
    out.mkdir(parents=True, exist_ok=True)
    try:
        for name in FILES:
            try:
                target.shell.pull(f"{remote_out}/{name}", out / name)
            except OSError:
                continue  # a file this run did not write
    finally:
        sh_text(target.shell, f"rm -rf {shlex.quote(remote_out)}", 30, None)
    sys.stderr.write(done.stderr)
    typer.echo(done.stdout.replace(remote_out, str(out)).rstrip("\n"))
    return done.returncode

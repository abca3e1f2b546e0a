"""``edgebench monitor``: sample every available sensor into a folder until told to stop, and report throttling."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import RootOption, TargetOption, say
from edgebench.workflows.monitor import MonitorRequest

SAMPLER_HELP = (
    "python: this process's sampler (here); native: the static sampler built for the device (pip install "
    "'edgebench[native-sampler]'); auto: native on a --target, python here."
)
THROTTLE_HELP = "°C from which a busy clock held down counts as throttling [default: lowest passive trip - 5, or 70]."


def monitor(
    out: Annotated[Path, typer.Option(help="Folder for samples.csv, freq_temperature.csv, meta.json, summary.json.")],
    interval: Annotated[str, typer.Option(help="Sampling period, e.g. 10ms.")] = str(MonitorRequest.interval),
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
    sampler: Annotated[str, typer.Option(help=SAMPLER_HELP)] = MonitorRequest.sampler,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON at the end.")] = False,
    target_spec: TargetOption = None,
    root: RootOption = False,
) -> int:
    """Sample all available sensors to disk (constant memory), survive Ctrl-C, and report thermal throttling."""
    from edgebench.workflows.monitor import RemoteMonitor, is_remote, monitor_here, monitor_remote

    request = MonitorRequest(
        out, interval, duration, sysfs_root_dir, pid, sensors, throttle_temp, target_spec, root, sampler
    )

    def started(summary) -> None:  # type: ignore[no-untyped-def]
        until = f" for {duration}" if duration else " until Ctrl-C"
        where = f"{summary.sampler} sampler" + (f": {summary.sampler_why}" if summary.sampler_why else "")
        say(f"monitoring {', '.join(summary.sensors)} every {summary.interval_ms:g} ms into {out}{until} ({where})")
        for name, reason in summary.unavailable.items():
            say(f"  not on this device: {name}: {reason}")

    if is_remote(request):
        summary = monitor_remote(request, as_json=as_json, notify=say, on_start=started, on_throttle=_throttle)
        if isinstance(summary, RemoteMonitor):  # the device's own edgebench sampled: what it printed
            sys.stderr.write(summary.stderr)
            typer.echo(summary.stdout.rstrip("\n"))
            return summary.returncode
    else:
        summary = monitor_here(request, on_start=started, on_throttle=_throttle)
    if as_json:
        typer.echo(json.dumps(asdict(summary), indent=2))
    else:
        _print_summary(summary, out)
    return 0


def _throttle(kind: str, e) -> None:  # type: ignore[no-untyped-def]
    now = time.strftime("%H:%M:%S")
    if kind == "start":
        say(f"{now} throttling: {e.policy} (cpu {','.join(map(str, e.cores))}) at {e.min_freq_khz / 1e3:.0f} "
            f"of {e.max_khz / 1e3:.0f} MHz under load, {e.max_temp_c:.1f} °C")  # fmt: skip
    else:
        say(f"{now} throttling of {e.policy} ended after {e.duration_s:.0f} s")


def _print_summary(summary, out: Path) -> None:  # type: ignore[no-untyped-def]
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

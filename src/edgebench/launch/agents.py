"""Which device-side agent runs a trial: chosen here, once, for every target (devlib's split).

A target is transport only (run, push, pull, read files, restore): it runs the agent it is handed.  A trial of
edgebench's own workloads runs under the Python agent (:mod:`edgebench.agents.python.agent`: worker, sampler, idle
baseline, memory watchdog); a ``--command`` trial, the user's own binary, runs under the device-side ``sh`` agent
(:mod:`edgebench.agents.sh.run`), which needs no Python on the device (phones, old boards).
"""

from __future__ import annotations

from typing import Any, cast

from edgebench.agents.sh.counting import CounterTool, parse_stat, probe_script, read_probe
from edgebench.agents.sh.run import run_command_trial
from edgebench.errors import UsageError
from edgebench.records.bundle import TrialBundle
from edgebench.records.trial import Trial
from edgebench.sensors import android_thermal, thermal_trips
from edgebench.targets import Target
from edgebench.targets.base import LocalCountersTarget, MirroredSysFS, ThermalStatusTarget

#: The Python agent, by module: the local target calls its ``run_agent``, a remote one runs ``python -m`` on it.
PYTHON_AGENT = "edgebench.agents.python.agent"


def run_on_target(target: Target, trial: Trial, *, sample: bool = True) -> TrialBundle:
    """Run ``trial`` (placement resolved) on ``target`` under the agent it needs; failures come back in the bundle.

    A target that declares a thermal status of its own (a phone: ``AdbTarget.thermal_status``) is asked before and
    after, outside the trial's window; any other device's thermal zones are read against their passive trip points
    instead (a board has no thermal service).  The two readings travel in the bundle's environment."""
    capabilities = target.capabilities
    if not capabilities.thermal_status:
        start_trips = thermal_trips.zone_trips(target.sysfs())
        bundle = _run(target, trial, sample)
        sysfs = target.sysfs()
        if capabilities.mirrored_sysfs:  # read the zones now, not the mirror's copy
            cast(MirroredSysFS, sysfs).refresh()
        end_trips = thermal_trips.zone_trips(sysfs)
        return _with_readings(bundle, {thermal_trips.ENV_START: start_trips, thermal_trips.ENV_END: end_trips})
    thermal = cast(ThermalStatusTarget, target).thermal_status
    start = thermal()
    bundle = _run(target, trial, sample)
    end = thermal()
    return _with_readings(bundle, {android_thermal.ENV_START: start, android_thermal.ENV_END: end})


def _run(target: Target, trial: Trial, sample: bool) -> TrialBundle:
    if trial.command is None:
        return target.run_python_agent(PYTHON_AGENT, trial, sample=sample)
    with target.command_shell() as (shell, root):
        env = target.environment()
        counting = command_counter_tool(target, trial.counters) if trial.counters else None
        return run_command_trial(
            trial, shell, sysfs=target.sysfs(), root=root, env=env, sample=sample, counting=counting
        )


def _with_readings(bundle: TrialBundle, readings: dict[str, Any]) -> TrialBundle:
    if all(v is None for v in readings.values()):
        return bundle
    return bundle.model_copy(update={"env": {**bundle.env, **readings}})


def command_counter_tool(target: Target, names: tuple[str, ...]) -> CounterTool:
    """What counts ``--counters`` over a ``--command`` trial's process tree on ``target``, or a one-line refusal
    (:class:`UsageError`) naming what is missing.

    This machine (a target declaring ``local_counters``) counts with edgebench's own launcher over
    ``perf_event_open``; a remote device needs ``simpleperf`` or ``perf`` on its PATH, and counts ``true`` with it
    once here so that an event its kernel will not count is refused before the trial, not found missing after."""
    if target.capabilities.local_counters:
        why = cast(LocalCountersTarget, target).missing_counters(names)
        if why is not None:
            raise UsageError("--counters", why)
        return "launcher"
    with target.command_shell() as (shell, _):
        scratch = f"{shell.workdir().rstrip('/')}/edgebench-counters-probe"
        done = shell.run(probe_script(names, scratch), timeout_s=60)
    tool, status, said, stat = read_probe(done.stdout.decode(errors="replace"))
    name = target.name
    if tool is None:
        raise UsageError(
            "--counters",
            f"a --command trial on {name} counts perf events with the device's `simpleperf stat` or `perf stat`, "
            "and neither is on its PATH (command -v found none): install linux-perf on the board (Android has "
            "/system/bin/simpleperf since 9), or drop --counters",
        )
    _, missing = parse_stat(tool, stat, names)
    if status != 0 or missing:
        last = said.splitlines()[-1] if said else f"exit status {status}"
        what = f"cannot count {', '.join(missing)}" if missing and status == 0 else f"failed: {last}"
        raise UsageError(
            "--counters",
            f"`{tool} stat` on {name} {what} (a hardware event needs a PMU the device's kernel exposes; "
            "a permission refusal needs --root or a lower /proc/sys/kernel/perf_event_paranoid)",
        )
    return tool

"""Which device-side agent runs a trial: chosen here, once, for every target (devlib's split).

A target is transport only (run, push, pull, read files, restore): it runs the agent it is handed.  A trial of
edgebench's own workloads runs under the Python agent (:mod:`edgebench.runner.agent`: worker, sampler, idle
baseline, memory watchdog); a ``--command`` trial, the user's own binary, runs under the device-side ``sh`` agent
(:mod:`edgebench.command.run`), which needs no Python on the device (phones, old boards).
"""

from __future__ import annotations

from edgebench.command.run import run_command_trial
from edgebench.records.bundle import TrialBundle
from edgebench.records.trial import Trial
from edgebench.sensors import android_thermal
from edgebench.targets import Target

#: The Python agent, by module: the local target calls its ``run_agent``, a remote one runs ``python -m`` on it.
PYTHON_AGENT = "edgebench.runner.agent"


def run_on_target(target: Target, trial: Trial, *, sample: bool = True) -> TrialBundle:
    """Run ``trial`` (placement resolved) on ``target`` under the agent it needs; failures come back in the bundle.

    A target whose device reports a thermal status of its own (a phone: ``AdbTarget.thermal_status``) is asked
    before and after, outside the trial's window; the two readings travel in the bundle's environment."""
    thermal = getattr(target, "thermal_status", None)
    start = thermal() if thermal else None
    if trial.command is None:
        bundle = target.run_python_agent(PYTHON_AGENT, trial, sample=sample)
    else:
        with target.command_shell() as (shell, root):
            env = target.environment()
            bundle = run_command_trial(trial, shell, sysfs=target.sysfs(), root=root, env=env, sample=sample)
    end = thermal() if thermal else None
    if start is None and end is None:
        return bundle
    readings = {android_thermal.ENV_START: start, android_thermal.ENV_END: end}
    return bundle.model_copy(update={"env": {**bundle.env, **readings}})

"""The options of the commands that run a fixed plan (``feasibility``, ``frameworks``, ``study``), declared once.

Twelve options (placement, repeats, cool-down, resume, device, output, store) mean the same in every plan command;
a command lists its own options and a ``flags: PlanFlags`` parameter, and :func:`plan_command` puts the shared
options where that parameter stands, in this order, and hands the command their values as one :class:`PlanFlags`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from edgebench.cli.options import (
    CooldownOption,
    JsonOption,
    NoStoreOption,
    ResumeOption,
    RootOption,
    StoreOption,
    TargetOption,
    setting_default,
    setting_option,
)

if TYPE_CHECKING:
    from edgebench.workflows.plans import PlanOptions, PlanRun

ThreadsSetting = setting_option("threads")
CoresSetting = setting_option("cores")
FrequencySetting = setting_option("freq_khz")
TimeoutSetting = setting_option("timeout_s")
RepeatsSetting = setting_option("repeats")
#: ``--timeout``'s default: every command's, from the settings' declaration.
DEFAULT_TIMEOUT = setting_default("timeout_s")


def _placement(
    *,
    threads: ThreadsSetting = None,
    cores: CoresSetting = None,
    frequency: FrequencySetting = None,
    timeout: TimeoutSetting = DEFAULT_TIMEOUT,
) -> None:
    """Where a plan's trials run on the device: the settings' own flags (``run`` and ``sweep`` read them alike)."""


def _device_and_output(
    *,
    repeats: RepeatsSetting = None,
    cooldown: CooldownOption = None,
    resume: ResumeOption = False,
    target_spec: TargetOption = None,
    root: RootOption = False,
    as_json: JsonOption = False,
    store: StoreOption = None,
    no_store: NoStoreOption = False,
) -> None:
    """How often each trial runs, the device, the pause between trials, resuming, the output and the store of every
    plan command."""


@dataclass(frozen=True)
class PlanFlags:
    """The shared options' values: how the plan runs (the workflow's :class:`PlanOptions`) and ``--json``."""

    options: PlanOptions
    as_json: bool


def plan_command(*, placement: bool = True) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """A plan command taking the shared options where its ``flags`` parameter stands (``placement=False``: without
    ``--threads``, ``--cores``, ``--frequency`` and ``--timeout``, which a study's plan sets itself)."""
    blocks = [_placement, _device_and_output] if placement else [_device_and_output]
    shared = [p for block in blocks for p in inspect.signature(block, eval_str=True).parameters.values()]
    names = {p.name for p in shared}

    def decorate(command: Callable[..., int]) -> Callable[..., int]:
        own = inspect.signature(command, eval_str=True).parameters
        before = [p.replace(kind=p.KEYWORD_ONLY) for p in own.values()]
        at = list(own).index("flags")

        def wrapper(**given: object) -> int:
            from edgebench.workflows.plans import PlanOptions

            values = {name: given.pop(name, None) for name in names}
            options = PlanOptions(
                target=values["target_spec"], root=bool(values["root"]), cores=values.get("cores"),
                frequency=values.get("frequency"), threads=values.get("threads"), timeout=values.get("timeout"),
                cooldown=values["cooldown"], resume=bool(values["resume"]), store=values["store"],
                no_store=bool(values["no_store"]), repeats=values["repeats"],
            )  # fmt: skip
            return command(**given, flags=PlanFlags(options, bool(values["as_json"])))

        wrapper.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [*before[:at], *shared, *before[at + 1 :]], return_annotation=int
        )
        wrapper.__name__, wrapper.__doc__ = command.__name__, command.__doc__
        return wrapper

    return decorate


def interrupted_line(run: PlanRun) -> str:
    """What an interrupted plan command prints (exit 130): what is stored and how to run the rest."""
    if run.store is None:
        return "interrupted (with --no-store nothing was kept)"
    return (
        f"interrupted: {len(run.results)} of {run.planned} trials are stored in {run.store} (sweep {run.sweep_id}); "
        "the same command with --resume runs the rest"
    )

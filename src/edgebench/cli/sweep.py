"""``edgebench sweep CONFIG.yaml``: run a matrix of trials, each in its own worker, resumable, restoring the device."""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import ResumeOption, RootOption, StoreOption, TargetOption
from edgebench.errors import UsageError
from edgebench.markup import rich_text

if TYPE_CHECKING:
    from rich.console import Console

    from edgebench.config.sweep_file import LoadedConfig
    from edgebench.records.result import TrialResult

SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", help="Set any key of the configuration: --set batch_sizes=[1,2,4] (values are YAML)."),
]


def sweep(
    config: Annotated[
        Path | None, typer.Argument(help="YAML configuration (native keys or DNNTune's sections); optional.")
    ] = None,
    set_: SetOption = None,
    resume: ResumeOption = False,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="With --resume, also rerun trials that were stored as failed.")
    ] = False,
    target_ci: Annotated[
        str | None, typer.Option(help="Shorthand for --set target_ci=...: step until the 95% CI is within it.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the planned trials and exit.")] = False,
    max_trials: Annotated[
        int, typer.Option(help="Refuse a grid larger than this, before planning it (default 10000).")
    ] = 10_000,
    store: StoreOption = None,
    sysfs_root: Annotated[
        Path | None, typer.Option(help="Read and control the device through this copy of /proc and /sys (tests).")
    ] = None,
    executor: Annotated[
        str, typer.Option(help="Where trials run: local (this machine, one by one) or ray (a fleet, see `fleet join`).")
    ] = "local",
    address: Annotated[
        str | None, typer.Option(help="With --executor ray: the cluster, auto (this host's) or HOST:PORT.")
    ] = None,
    target_spec: TargetOption = None,
    root: RootOption = False,
) -> int:
    """Sweep models x batch sizes x threads x core masks x CPU frequencies x precision; results land as trials end."""
    from rich.console import Console

    from edgebench.cli import fail
    from edgebench.config.sweep_file import load_config
    from edgebench.registry import EXECUTORS
    from edgebench.sweep.plan import plan
    from edgebench.targets import open_target

    if executor not in EXECUTORS:
        raise UsageError("--executor", f"unknown executor {executor!r}; choose one of: {', '.join(EXECUTORS.names())}")
    overrides = list(set_ or [])
    if target_ci is not None:
        overrides.append(f"target_ci={target_ci}")
    loaded = load_config(config, overrides)
    from edgebench.targets.named import parse_targets

    axis = loaded.config.targets
    named = parse_targets(axis, "targets") if isinstance(axis, dict) else None
    fleet = executor != "local"  # the fleet's hosts open its devices; the driver plans on its own
    legs, target_field = [(target_spec or "local", loaded)], "--target"
    if axis and target_spec is None:
        if not fleet:  # each target's own process plans against that target (--dry-run too)
            return _sweep_each_target(
                list(axis), loaded, config, overrides, store, resume, retry_failed, root, dry_run=dry_run
            )
        # on a fleet the driver runs the axis itself: the sweeps the local executor's processes would store
        base = _axis_base(loaded, config)
        legs = [(spec, load_config(config, [*overrides, f"name={axis_sweep_name(base, spec)}"])) for spec in axis]
        target_field = "targets"
    target = open_target(
        None if fleet else target_spec, sysfs_root=str(sysfs_root or "/"), root=root or None, named=named
    )
    plans = []
    for _, leg in legs:
        try:
            plans.append(
                plan(
                    leg.config,
                    source=config,
                    sysfs=target.sysfs(),
                    allowed=target.allowed_cores(),
                    max_trials=max_trials,
                )
            )
        except UsageError as exc:  # name the key as the user wrote it (file or --set, DNNTune or native)
            raise leg.relabel(exc) from None
    console = Console()
    for note in loaded.notes:
        console.print(f"[dim]note: {rich_text(note)}[/dim]")
    if dry_run:
        for planned in plans:
            console.print(rich_text(f"sweep {planned.sweep_id}: {len(planned.trials)} trials"))
            for p in planned.trials:
                console.print(rich_text(f"  {p.position:>4}  {p.key}  {p.label}"))
        return 0

    from edgebench.launch.trial import check_device_present

    first_of_each = {(p.trial.backend, p.trial.device): p.trial for p in reversed(plans[0].trials)}
    for trial in (
        first_of_each.values() if not fleet else ()
    ):  # a device this machine lacks is refused before the first trial
        try:
            check_device_present(trial, target, field="device")
        except UsageError as exc:
            raise loaded.relabel(exc) from None

    from edgebench.store import Store
    from edgebench.sweep.job import SweepJob, open_executor
    from edgebench.sweep.progress import RichReporter

    runner = open_executor(executor, address=address)  # a missing extra or a stray --address is refused first
    from edgebench.store.sqlite import default_store_path, discard_if_empty

    store_path = Path(store) if store else default_store_path()
    fresh = not store_path.exists()
    try:
        with Store(store) as db, RichReporter(console) as reporter, _relabelled(loaded):
            db.verify()  # a damaged store is refused before the first trial, not after it
            jobs = [
                SweepJob(
                    plan=planned,
                    store=db,
                    config_json=json.dumps({"source": leg.source, "config": leg.config.model_dump(mode="json")}),
                    cooldown=leg.config.cooldown,
                    reporter=reporter,
                    resume=resume,
                    retry_failed=retry_failed,
                    target=spec,
                    target_field=target_field,
                    device=None if fleet else target,
                    sysfs_root=str(sysfs_root or "/"),
                )
                for (spec, leg), planned in zip(legs, plans, strict=True)
            ]
            outcomes = runner.run_each(jobs)  # type: ignore[attr-defined]
            reporter.progress.stop()
            stored = [db.query(sweep_id=planned.sweep_id) for planned in plans]
    except UsageError:
        if fresh:  # refused before any trial ran (a frequency this device cannot set...): no empty store left
            discard_if_empty(store_path)
        raise
    planned_n = sum(len(p.trials) for p in plans)
    ran = [r for o in outcomes for r in o.results]
    if any(o.interrupted for o in outcomes):
        left = planned_n - sum(map(len, stored))
        again = resume_command(
            config, list(set_ or []), target_ci, store, sysfs_root, target_spec, root, executor, address
        )
        return fail(
            f"interrupted: {len(ran)} trials of this run are stored, {left} of {planned_n} remain; `{again}` runs them",
            130,
        )
    for (_, leg), planned, records in zip(legs, plans, stored, strict=True):
        _summarise(console, records, f"sweep {planned.sweep_id} ({db.path})", leg.config.objective)
    failed = [r for r in ran if not r.ok]
    elsewhere = sum(o.taken_elsewhere for o in outcomes)
    also = f", {elsewhere} run by another sweep at the same time" if elsewhere else ""
    console.print(
        f"{len(ran)} trials run, {sum(o.skipped for o in outcomes)} already stored{also}, {len(failed)} failed"
    )
    if failed:
        return fail(f"{len(failed)} of {len(ran)} trials failed (stored with their reason)", 1)
    return 0


def _summarise(console: Console, stored: list[TrialResult], title: str, objective: str) -> None:
    """A sweep's table and the best configuration of each model for its objective."""
    from edgebench.report.sweep_summary import best_per_model, sweep_table
    from edgebench.report.warnings import hygiene_warnings
    from edgebench.sweep.plan import trial_label

    console.print(sweep_table(stored, title))
    for line in hygiene_warnings(stored):
        console.print(line, highlight=False, markup=False)
    best = best_per_model(stored, objective)
    for model, r in best.items():
        console.print(rich_text(f"best for {model} ({objective}): {trial_label(r.trial)}  [{r.trial_id}]"))
    if objective == "energy-first" and not best:
        console.print("energy-first: no trial has an energy figure (this device has no power sensor)")


def resume_command(
    config: Path | None,
    overrides: list[str],
    target_ci: str | None,
    store: Path | None,
    sysfs_root: Path | None,
    target: str | None = None,
    root: bool = False,
    executor: str = "local",
    address: str | None = None,
) -> str:
    """The exact command that resumes this sweep: the same file, every ``--set``, the same store, quoted for a shell.

    Leaving an override out would plan another sweep (another id, other trials), so the hint keeps all of them.
    """
    words = ["edgebench", "sweep"] + ([str(config)] if config else [])
    for item in overrides:
        words += ["--set", item]
    given = [("--target-ci", target_ci), ("--store", store), ("--sysfs-root", sysfs_root), ("--target", target)]
    given += [("--executor", executor if executor != "local" else None), ("--address", address)]
    for flag, value in given:
        if value is not None:
            words += [flag, str(value)]
    return shlex.join([*words, *(["--root"] if root else []), "--resume"])


@contextlib.contextmanager
def _relabelled(loaded: LoadedConfig) -> Iterator[None]:
    try:
        yield
    except UsageError as exc:
        raise loaded.relabel(exc) from None


def _axis_base(loaded: LoadedConfig, config: Path | None) -> str:
    return loaded.config.name or (config.stem if config else "sweep")


def axis_sweep_name(base: str, spec: str) -> str:
    """The sweep that a ``targets:`` axis stores for one target, on every executor: ``<name>-<target>``."""
    return f"{base}-{re.sub(r'[^A-Za-z0-9._-]+', '_', spec)}".strip("_")


def _sweep_each_target(
    targets: list[str],
    loaded: LoadedConfig,
    config: Path | None,
    overrides: list[str],
    store: Path | None,
    resume: bool,
    retry_failed: bool,
    root: bool,
    *,
    dry_run: bool = False,
) -> int:
    """``targets:`` in a sweep: one ``edgebench sweep --target T`` per device, a few at once, each running its
    trials one at a time on its device and storing them as the sweep ``<name>-<target>``.  Each has its own
    process (its own signals, store connection and frequency restore); their lines are prefixed with the target.
    """
    import sys

    from edgebench.host.lifetime import run_children

    base = _axis_base(loaded, config)
    children = {}
    for spec in targets:
        name = axis_sweep_name(base, spec)
        args = [sys.executable, "-m", "edgebench", "sweep", *([str(config)] if config else [])]
        for item in [*overrides, f"name={name}"]:
            args += ["--set", item]
        args += ["--target", spec, *(["--store", str(store)] if store else [])]
        args += [*(["--resume"] if resume else []), *(["--retry-failed"] if retry_failed else [])]
        args += [*(["--root"] if root else []), *(["--dry-run"] if dry_run else [])]
        children[spec] = args
    codes = run_children(children, lambda spec, line: typer.echo(f"[{spec}] {line}"))  # a few at a time
    failed = {spec: code for spec, code in codes.items() if code}
    if failed:
        from edgebench.cli import fail

        listed = ", ".join(f"{spec} (exit {code})" for spec, code in failed.items())
        return fail(f"the sweep failed on {listed}; see its lines above", max(failed.values()))
    return 0

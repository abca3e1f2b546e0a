"""The ``edgebench`` command: one module per subcommand, registered below.

Errors a user can fix are printed as one line, ``edgebench: error: <field>: <what to do>``, with exit code 2;
a trial that ran but failed exits 1; Ctrl-C exits 130 with nothing half-written.
"""

from __future__ import annotations

import functools
import sqlite3
import sys
from collections.abc import Callable
from typing import Any

import typer
from pydantic import ValidationError

from edgebench.cli import browse as browse_cmd
from edgebench.cli import compare as compare_cmd
from edgebench.cli import export as export_cmd
from edgebench.cli import feasibility as feasibility_cmd
from edgebench.cli import fleet as fleet_cmd
from edgebench.cli import frameworks as frameworks_cmd
from edgebench.cli import importing as import_cmd
from edgebench.cli import layers as layers_cmd
from edgebench.cli import models as models_cmd
from edgebench.cli import monitor as monitor_cmd
from edgebench.cli import partition as partition_cmd
from edgebench.cli import peak as peak_cmd
from edgebench.cli import predict as predict_cmd
from edgebench.cli import report as report_cmd
from edgebench.cli import run as run_cmd
from edgebench.cli import sensors as sensors_cmd
from edgebench.cli import snapshot as snapshot_cmd
from edgebench.cli import study as study_cmd
from edgebench.cli import sweep as sweep_cmd
from edgebench.cli import system as system_cmd
from edgebench.cli import trace as trace_cmd
from edgebench.errors import UsageError
from edgebench.host.lifetime import termination_as_interrupt
from edgebench.registry import UnknownName
from edgebench.workflows import NotStored

app = typer.Typer(
    name="edgebench",
    help="Benchmark and characterize deep-learning training on edge devices.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts are plain: "[default: ...]" in them is text, not a markup tag to drop
)


def fail(message: str, code: int = 2) -> int:
    print(f"edgebench: error: {message}", file=sys.stderr)
    return code


def interruptible(command: Callable[..., int], line: str = "interrupted") -> Callable[..., int]:
    """``command``, printing ``line`` and exiting 130 on Ctrl-C or SIGTERM.

    Typer turns a ``KeyboardInterrupt`` that reaches it into a silent exit 130, so the line has to be printed
    before the interrupt leaves the command.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            with termination_as_interrupt():  # `kill` too: cleanup runs (temporary folders, frequencies)
                return command(*args, **kwargs)
        except KeyboardInterrupt:
            return fail(line, 130)

    return wrapper


app.command("run")(interruptible(run_cmd.run, "interrupted; nothing was stored"))
app.command("sensors")(interruptible(sensors_cmd.sensors))
app.command("snapshot")(interruptible(snapshot_cmd.snapshot, "interrupted; nothing was written"))
app.command("monitor")(interruptible(monitor_cmd.monitor))
app.command("sweep")(interruptible(sweep_cmd.sweep, "interrupted before the first trial; nothing was stored"))
app.command("export")(interruptible(export_cmd.export, "interrupted; nothing was written"))
app.command("compare")(interruptible(compare_cmd.compare))
app.command("models")(interruptible(models_cmd.models))
app.command("feasibility")(
    interruptible(feasibility_cmd.feasibility, "interrupted; the cells that finished are stored")
)
app.command("frameworks")(interruptible(frameworks_cmd.frameworks, "interrupted; the cells that finished are stored"))
app.command("layers")(interruptible(layers_cmd.layers))
app.command("trace")(interruptible(trace_cmd.trace, "interrupted; nothing was written"))
app.command("peak")(interruptible(peak_cmd.peak))
app.command("partition")(interruptible(partition_cmd.partition))
app.command("predict")(interruptible(predict_cmd.predict))
app.command("trials")(interruptible(browse_cmd.trials))
app.command("show")(interruptible(browse_cmd.show))
app.command("report")(interruptible(report_cmd.report, "interrupted; nothing was written"))
app.command("plot")(interruptible(report_cmd.plot, "interrupted; nothing was written"))
app.command("import")(interruptible(import_cmd.import_trials, "interrupted; the files not yet stored are kept"))
fleet_cmd.app.command("join")(interruptible(fleet_cmd.join))
fleet_cmd.app.command("status")(interruptible(fleet_cmd.status))
app.add_typer(fleet_cmd.app, name="fleet")
system_cmd.app.command("show")(interruptible(system_cmd.show))
system_cmd.app.command("tune")(interruptible(system_cmd.tune))
system_cmd.app.command("reset")(interruptible(system_cmd.reset))
app.add_typer(system_cmd.app, name="system")
for _study in study_cmd.HELP:
    study_cmd.app.command(_study)(
        interruptible(study_cmd.command_for(_study), "interrupted; the trials that finished are stored")
    )
app.add_typer(study_cmd.app, name="study")


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context) -> None:
    """Benchmark and characterize deep-learning training on edge devices."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


def main(argv: list[str] | None = None) -> int:
    from edgebench.host.frequency import restore_stale_journals

    restore_stale_journals(lambda note: print(f"edgebench: note: {note}", file=sys.stderr))  # a killed run's clocks
    command = typer.main.get_command(app)
    try:
        rv = command.main(args=argv, prog_name="edgebench", standalone_mode=False)
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        return fail("interrupted", 130)
    except typer.TyperException as exc:  # typer's own click: bad or missing options and arguments
        return fail(exc.format_message(), getattr(exc, "exit_code", 2))  # type: ignore[attr-defined]
    except (UsageError, UnknownName) as exc:
        return fail(str(exc))
    except ValidationError as exc:
        return fail(str(exc))
    except sqlite3.DatabaseError as exc:  # the store went bad after it opened: a page a read or write reached
        return fail(f"--store: the store failed ({exc}); if it is damaged, move it aside and give another --store")
    except NotStored as exc:  # the trial ran; its record is in the file the line names
        return fail(str(exc), 1)
    except KeyboardInterrupt:
        return fail("interrupted; nothing was stored", 130)
    return rv if isinstance(rv, int) else 0

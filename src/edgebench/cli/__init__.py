"""The ``edgebench`` command: one module per subcommand, registered below.

Errors a user can fix are printed as one line, ``edgebench: error: <field>: <what to do>``, with exit code 2;
a trial that ran but failed exits 1; Ctrl-C exits 130 with nothing half-written.
"""

from __future__ import annotations

import sqlite3
import sys

import typer
from pydantic import ValidationError

from edgebench.cli import compare as compare_cmd
from edgebench.cli import export as export_cmd
from edgebench.cli import feasibility as feasibility_cmd
from edgebench.cli import import_ as import_cmd
from edgebench.cli import layers as layers_cmd
from edgebench.cli import models as models_cmd
from edgebench.cli import monitor as monitor_cmd
from edgebench.cli import peak as peak_cmd
from edgebench.cli import run as run_cmd
from edgebench.cli import sensors as sensors_cmd
from edgebench.cli import sweep as sweep_cmd
from edgebench.cli import trace as trace_cmd
from edgebench.errors import UsageError
from edgebench.registry import UnknownName
from edgebench.store.rescue import NotStored

app = typer.Typer(
    name="edgebench",
    help="Benchmark and characterize deep-learning training on edge devices.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("run")(run_cmd.run)
app.command("sensors")(sensors_cmd.sensors)
app.command("monitor")(monitor_cmd.monitor)
app.command("sweep")(sweep_cmd.sweep)
app.command("export")(export_cmd.export)
app.command("compare")(compare_cmd.compare)
app.command("models")(models_cmd.models)
app.command("feasibility")(feasibility_cmd.feasibility)
app.command("layers")(layers_cmd.layers)
app.command("trace")(trace_cmd.trace)
app.command("peak")(peak_cmd.peak)
app.command("import")(import_cmd.import_trials)


@app.callback(invoke_without_command=True)
def _root(ctx: typer.Context) -> None:
    """Benchmark and characterize deep-learning training on edge devices."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


def fail(message: str, code: int = 2) -> int:
    print(f"edgebench: error: {message}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
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

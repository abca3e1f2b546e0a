"""The ``edgebench`` command: one module per subcommand, registered below.

Errors a user can fix are printed as one line, ``edgebench: error: <field>: <what to do>``, with exit code 2;
a trial that ran but failed exits 1; Ctrl-C exits 130 with nothing half-written.
"""

from __future__ import annotations

import sys

import click
import typer
from pydantic import ValidationError

from edgebench.cli import run as run_cmd
from edgebench.errors import UsageError
from edgebench.registry import UnknownName

app = typer.Typer(
    name="edgebench",
    help="Benchmark and characterize deep-learning training on edge devices.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("run")(run_cmd.run)


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
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        return fail("interrupted", 130)
    except click.ClickException as exc:
        return fail(exc.format_message(), exc.exit_code)
    except (UsageError, UnknownName) as exc:
        return fail(str(exc))
    except ValidationError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        return fail("interrupted; nothing was stored", 130)
    return rv if isinstance(rv, int) else 0

"""The options the plan commands share are declared once (``cli/plans.py``) and each command takes them from there:
the same flags, defaults and help in the same order in ``feasibility``, ``frameworks`` and every study (a study
without the placement four, which its plan sets), handed to the command as one :class:`PlanFlags`."""

from __future__ import annotations

import typer

from edgebench.cli import app
from edgebench.cli.plans import PlanFlags, plan_command

SHARED = ["threads", "cores", "frequency", "timeout", "repeats", "cooldown", "resume", "target_spec", "root", "as_json",
          "store", "no_store"]  # fmt: skip
PLACEMENT = SHARED[:4]


def options(*path: str) -> list[tuple]:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return [(p.name, tuple(p.opts), p.default, p.help) for p in command.params]


def shared_block(params: list[tuple], names: list[str]) -> list[tuple]:
    named = [p for p in params if p[0] in names]
    assert [p[0] for p in named] == names  # all there, in this order
    return named


def test_the_plan_commands_share_one_declaration_of_their_options():
    feasibility = shared_block(options("feasibility"), SHARED)
    assert shared_block(options("frameworks"), SHARED) == feasibility
    device_and_output = [p for p in feasibility if p[0] not in PLACEMENT]
    for study in ("tx2", "dnntune", "mnn-suite"):
        params = options("study", study)
        assert not {p[0] for p in params} & set(PLACEMENT)
        assert shared_block(params, SHARED[4:]) == device_and_output
        assert [p[0] for p in params][-1] == "backend"  # the study's own option after the shared ones, as before


def test_a_plan_command_gets_the_shared_values_as_one_record():
    seen = {}

    @plan_command()
    def command(steps: int = 1, *, flags: PlanFlags) -> int:
        """A plan command."""
        seen.update(steps=steps, flags=flags)
        return 0

    values = dict(threads="2", cores="big", frequency="1.7GHz", timeout="5m", cooldown="idle", resume=True,
                  target_spec="adb://X", root=True, as_json=True, store=None, no_store=False, repeats="3")  # fmt: skip
    assert command(steps=3, **values) == 0
    flags = seen["flags"]
    assert seen["steps"] == 3 and flags.as_json
    assert (flags.options.target, flags.options.cores, flags.options.frequency, flags.options.threads) == (
        "adb://X",
        "big",
        "1.7GHz",
        "2",
    )
    assert (flags.options.timeout, flags.options.cooldown, flags.options.resume, flags.options.root) == (
        "5m",
        "idle",
        True,
        True,
    )
    assert flags.options.repeats == "3"
    assert command.__doc__ == "A plan command."

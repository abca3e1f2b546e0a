"""``--counters`` on a ``--command`` trial: which tool counts the user's command, how it is wrapped, what it says.

On this machine edgebench's own launcher (:mod:`edgebench.host.perf_exec`) opens the counters on the command's
process before it execs and reads them at every line the command prints, so each step line of the user's tool
gets its own counts.  On a remote device edgebench does not assume Python: ``simpleperf`` (Android's, in
``/system/bin`` since Android 9) or ``perf`` (linux-perf on boards) runs the command under ``stat`` and gives the
counts over its whole run, from exec to exit; per-step counts there would need the device to read counters at
each line, which neither tool does.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from edgebench.host.perf_events import NANOSECOND_EVENTS

#: ``launcher``: edgebench's own (this machine); ``perf``/``simpleperf``: the device's ``stat`` command.
CounterTool = Literal["launcher", "perf", "simpleperf"]
#: Tried in this order on a device: Android ships simpleperf; a board with linux-perf has perf.
DEVICE_TOOLS: tuple[CounterTool, ...] = ("simpleperf", "perf")
#: perf's and simpleperf's spelling of a count they could not take.
_NOT_COUNTED = ("<not supported>", "<not counted>", "not supported", "not counted")


def counted_command(tool: CounterTool, command: str, names: tuple[str, ...], readings: str) -> str:
    """The command the ``sh`` agent runs in place of ``command`` (with ``sh -c``), its counts going to ``readings``."""
    events = ",".join(names)
    if tool == "launcher":
        import edgebench

        src = str(Path(edgebench.__file__).resolve().parents[1])  # the edgebench this process runs, installed or not
        boot = f"import sys; sys.path.insert(0, {src!r}); from edgebench.host.perf_exec import main; sys.exit(main())"
        return "exec " + shlex.join([sys.executable, "-S", "-c", boot, events, readings, command])
    if tool == "simpleperf":
        return "exec " + shlex.join(["simpleperf", "stat", "--csv", "-e", events, "-o", readings, "sh", "-c", command])
    return "exec " + shlex.join(["perf", "stat", "-x", ",", "-e", events, "-o", readings, "--", "sh", "-c", command])


@dataclass
class Readings:
    """What the counting tool recorded: per output line (the launcher only), and over the whole run."""

    names: tuple[str, ...]
    #: Cumulative counts at each output line, by line number from 1 (the launcher only; empty otherwise).
    at_line: dict[int, tuple[int, ...]] = field(default_factory=dict)
    #: Counts over the whole run, from the command's exec to the exit of its whole tree.
    total: tuple[int, ...] | None = None

    def window(self) -> dict[str, int] | None:
        return dict(zip(self.names, self.total, strict=True)) if self.total is not None else None

    def between(self, first_line: int | None, last_line: int, last: bool) -> dict[str, int] | None:
        """Counts from the reading at ``first_line`` (None: the exec) to that at ``last_line`` (``last``: the line
        has no newline, so its reading is the one at the end)."""
        end = self.total if last and last_line not in self.at_line else self.at_line.get(last_line)
        start = (0,) * len(self.names) if first_line is None else self.at_line.get(first_line)
        if end is None or start is None:
            return None
        return {n: b - a for n, a, b in zip(self.names, start, end, strict=True)}


def parse_launcher(text: str) -> Readings | None:
    """The launcher's readings file (see :mod:`edgebench.host.perf_exec`); None without its ``names`` line."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("names "):
        return None
    readings = Readings(names=tuple(lines[0].split()[1:]))
    for line in lines[1:]:
        head, *values = line.split()
        if len(values) != len(readings.names):
            continue  # a line torn by a kill
        counts = tuple(int(v) for v in values)
        if head == "end":
            readings.total = counts
        elif head.isdigit():
            readings.at_line[int(head)] = counts
    return readings


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_stat(tool: CounterTool, text: str, names: tuple[str, ...]) -> tuple[Readings, list[str]]:
    """``perf stat -x ,`` or ``simpleperf stat --csv`` output: the counts over the whole run, and the events it
    could not count (``<not supported>``).

    perf: ``value,unit,event,run time,percent running,...`` with ``task-clock`` in ``msec``; simpleperf: the count
    then the event name (``task-clock`` in nanoseconds, its raw count).  Each is converted to perf's own raw units
    (nanoseconds for the clocks) so that a count reads the same whichever tool took it.
    """
    found: dict[str, int] = {}
    missing: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split(",")]
        name = next((f for f in fields if f in names), None)
        if name is None or name in found:
            continue
        at = fields.index(name)
        if tool == "perf":
            raw, unit = fields[0], fields[1] if len(fields) > 1 else ""
        else:
            raw, unit = (fields[at - 1] if at else ""), ""
        if raw in _NOT_COUNTED or any(raw.startswith(n) for n in _NOT_COUNTED):
            missing.append(name)
            continue
        value = _number(raw)
        if value is None:
            missing.append(name)
            continue
        if name in NANOSECOND_EVENTS and unit == "msec":
            value *= 1e6
        found[name] = round(value)
    missing += [n for n in names if n not in found and n not in missing]
    total = tuple(found[n] for n in names) if not missing else None
    return Readings(names=names, total=total), missing


def probe_script(names: tuple[str, ...], scratch: str) -> str:
    """A device-side ``sh`` script that names the first counting tool on the PATH (``tool=``) and counts ``true``
    with it (``rc=``, its stderr, then ``@stat`` and what it wrote), so that an event the device cannot count is
    refused before the trial, as on this machine."""
    out = shlex.quote(scratch)
    tools = " ".join(DEVICE_TOOLS)
    return (
        f"tool=\nfor t in {tools}; do if command -v $t >/dev/null 2>&1; then tool=$t; break; fi; done\n"
        'echo "tool=$tool"\n'
        "case $tool in\n"
        f"simpleperf) ( {counted_command('simpleperf', 'true', names, scratch)} ) 2>&1 ;;\n"
        f"perf) ( {counted_command('perf', 'true', names, scratch)} ) 2>&1 ;;\n"
        "*) exit 0 ;;\n"
        "esac\n"
        f'echo "rc=$?"; echo @stat; cat {out} 2>/dev/null; rm -f {out}\n'
    )


def read_probe(text: str) -> tuple[CounterTool | None, int | None, str, str]:
    """The probe's tool (None: none on the PATH), the tool's exit status, its own messages, and its stat output."""
    head, _, stat = text.partition("@stat\n")
    lines = head.splitlines()
    tool = next((ln[5:] for ln in lines if ln.startswith("tool=")), "")
    rc = next((int(ln[3:]) for ln in lines if ln.startswith("rc=") and ln[3:].isdigit()), None)
    said = "\n".join(ln for ln in lines if not ln.startswith(("tool=", "rc="))).strip()
    return (tool if tool in DEVICE_TOOLS else None), rc, said, stat  # type: ignore[return-value]

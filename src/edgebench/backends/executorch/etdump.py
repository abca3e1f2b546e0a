"""ETDump files (``.etdp``) read without ExecuTorch: the profile events of each run of a program's method.

ExecuTorch's event tracer writes one size-prefixed FlatBuffer (schema ``devtools/etdump/etdump_schema_flatcc.fbs``,
file identifier ``ED00``): an ``ETDump`` table holding ``run_data``, one ``RunData`` per block of events (``Default``
for the method's load, ``Execute`` per execution), each with its ``events``.  A profile event carries the name of a
runtime step (``Method::execute``, ``OPERATOR_CALL``, ``native_call_convolution.out``, ``DELEGATE_CALL``) or, for an
op inside a delegate, the delegate's own name for it (``delegate_debug_id_str``: XNNPACK's ``Convolution (NHWC, F32)
IGEMM #1``), the instruction of the method's chain it belongs to, and its start and end in the runtime's ticks
(nanoseconds on Linux and Android: the default platform layer's ``steady_clock`` since the runtime started).

The pip wheel's pybindings (``enable_etdump=True``) and a device's ``executor_runner`` built with the event tracer
(``--etdump_path``) write the same format, so this one reader serves the Python backend and the files a ``--command``
trial pulls back, on a workstation that has no ExecuTorch.  ``executorch.devtools``' own reader decompiles the file
with the ``flatc`` binary and imports the exporter; the tests check that both read the same events.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from edgebench.backends.executorch.flatbuffer import root

FILE_IDENTIFIER = b"ED00"


@dataclass(frozen=True)
class ProfileEvent:
    """One profiled span of a run, in the runtime's ticks."""

    name: str | None
    chain_index: int
    instruction_id: int
    delegate_debug_id_int: int
    delegate_debug_id_str: str | None
    start_time: int
    end_time: int

    @property
    def label(self) -> str:
        """The event's name, or the delegate's name for its op."""
        return self.name or self.delegate_debug_id_str or "?"


@dataclass(frozen=True)
class Run:
    """One ``RunData`` block: ``Default`` (the method's load) or ``Execute`` (one execution)."""

    name: str
    events: tuple[ProfileEvent, ...]


class NotETDump(ValueError):
    """The bytes are not an ETDump file."""


def parse(data: bytes) -> list[Run]:
    """The runs of an ETDump file's bytes (size-prefixed, as the runtime writes it; an unprefixed buffer too)."""
    try:
        top = root(data, FILE_IDENTIFIER, size_prefixed=True)
    except ValueError:
        raise NotETDump("not an ETDump file (no ED00 identifier)") from None
    try:
        runs = []
        for run in top.tables(1):  # ETDump.run_data
            events = []
            for event in run.tables(3):  # RunData.events
                profile = event.table(0)  # Event.profile_event (allocation and debug events are not timed)
                if profile is None:
                    continue
                events.append(
                    ProfileEvent(
                        name=profile.string(0),
                        chain_index=profile.scalar(1, "i", 0),
                        instruction_id=profile.scalar(2, "i", -1),
                        delegate_debug_id_int=profile.scalar(3, "i", -1),
                        delegate_debug_id_str=profile.string(4),
                        start_time=profile.scalar(6, "Q", 0),
                        end_time=profile.scalar(7, "Q", 0),
                    )
                )
            runs.append(Run(run.string(0) or "", tuple(events)))
    except (struct.error, IndexError) as exc:
        raise NotETDump(f"a damaged ETDump file ({exc})") from None
    return runs


def read(path: str | Path) -> list[Run]:
    return parse(Path(path).read_bytes())


def executions(runs: list[Run]) -> list[Run]:
    """The ``Execute`` runs, one per execution of the method, in order."""
    return [r for r in runs if r.name == "Execute"]

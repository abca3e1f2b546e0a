"""Checking a trace-event JSON document: structurally here, and with Perfetto's trace processor where it exists.

The structural check is what Perfetto's JSON importer needs and what breaks it silently when missing: known
phases, numeric microsecond timestamps, properly nested (balanced) slices per thread, counter events with
exactly one finite numeric value, and ``process_name`` / ``thread_name`` metadata for every process and thread
that carries events.  Perfetto's own ``trace_processor_shell`` loads the file for real; it is a separate binary
(its ``trace_processor`` wrapper downloads one at first use), so it runs only where the user has it.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PHASES = set("BEXICbenstfPOMNDRcv")
#: A trace of a day in microseconds stays below this; nanoseconds from CLOCK_MONOTONIC exceed it within minutes.
MAX_TS_US = 86_400 * 10**6


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_trace(doc: Any) -> list[str]:
    """Problems found in a trace-event document (``{"traceEvents": [...]}`` or a bare list); empty when valid."""
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        return ["no traceEvents list"]
    problems: list[str] = []
    named_pids: set[int] = set()
    named_threads: set[tuple[int, int]] = set()
    used_pids: set[int] = set()
    used_threads: set[tuple[int, int]] = set()
    slices: dict[tuple[int, int], list[tuple[float, float, str]]] = defaultdict(list)
    open_b: dict[tuple[int, int], list[str]] = defaultdict(list)
    for i, e in enumerate(events):
        where = f"event {i}"
        if not isinstance(e, dict) or e.get("ph") not in PHASES:
            problems.append(f"{where}: unknown phase {e.get('ph') if isinstance(e, dict) else e!r}")
            continue
        ph = e["ph"]
        if not isinstance(e.get("name"), str):
            problems.append(f"{where}: name is not a string")
        pid, tid = e.get("pid"), e.get("tid")
        if not isinstance(pid, int) or not isinstance(tid, int):
            problems.append(f"{where}: pid and tid must be integers")
            continue
        if ph == "M":
            name = (e.get("args") or {}).get("name")
            if e.get("name") == "process_name" and isinstance(name, str):
                named_pids.add(pid)
            if e.get("name") == "thread_name" and isinstance(name, str):
                named_threads.add((pid, tid))
            continue
        ts = e.get("ts")
        if not _number(ts) or ts < 0:
            problems.append(f"{where}: ts {ts!r} is not a non-negative number")
            continue
        if ts > MAX_TS_US:
            problems.append(f"{where}: ts {ts} is too large for microseconds (nanoseconds?)")
        used_pids.add(pid)
        if ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or len(args) != 1:
                problems.append(f"{where}: counter {e.get('name')!r} must carry exactly one value, has {args!r}")
            elif not _number(next(iter(args.values()))):
                problems.append(f"{where}: counter {e.get('name')!r} value is not a finite number")
            continue
        used_threads.add((pid, tid))
        if ph == "X":
            dur = e.get("dur")
            if not _number(dur) or dur < 0:
                problems.append(f"{where}: dur {dur!r} is not a non-negative number")
                continue
            slices[(pid, tid)].append((ts, ts + dur, e["name"]))
        elif ph == "B":
            open_b[(pid, tid)].append(e["name"])
        elif ph == "E" and not open_b[(pid, tid)]:
            problems.append(f"{where}: end event without a begin on thread {pid}/{tid}")
        elif ph == "E":
            open_b[(pid, tid)].pop()
    for thread, names in open_b.items():
        if names:
            problems.append(f"thread {thread[0]}/{thread[1]}: {len(names)} begin events never end ({names[-1]!r})")
    for thread, items in slices.items():
        problems += _nesting(thread, items)
    problems += [f"process {p} has events but no process_name metadata" for p in sorted(used_pids - named_pids)]
    problems += [
        f"thread {p}/{t} has slices but no thread_name metadata" for p, t in sorted(used_threads - named_threads)
    ]
    return problems


def _nesting(thread: tuple[int, int], items: list[tuple[float, float, str]]) -> list[str]:
    """Complete events of one thread must nest: each one inside the one open around its start, or after it."""
    problems: list[str] = []
    stack: list[tuple[float, str]] = []
    for start, end, name in sorted(items, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1][0] <= start:
            stack.pop()
        if stack and end > stack[-1][0]:
            problems.append(
                f"thread {thread[0]}/{thread[1]}: slice {name!r} [{start}, {end}] overlaps the end of "
                f"{stack[-1][1]!r} ({stack[-1][0]}) without nesting in it"
            )
            if len(problems) >= 10:
                break
            continue
        stack.append((end, name))
    return problems


def dumps(doc: dict[str, Any]) -> str:
    """JSON text of a trace; NaN or infinity anywhere is an error (JSON has neither)."""
    return json.dumps(doc, allow_nan=False, separators=(",", ":"))


@dataclass(frozen=True)
class PerfettoCheck:
    ok: bool
    message: str


def find_trace_processor(explicit: str | None = None) -> str | None:
    """``explicit``, else ``$EDGEBENCH_TRACE_PROCESSOR``, else ``trace_processor_shell`` or ``trace_processor``."""
    for candidate in (explicit, os.environ.get("EDGEBENCH_TRACE_PROCESSOR")):
        if candidate:
            return candidate
    return shutil.which("trace_processor_shell") or shutil.which("trace_processor")


_QUERY = (
    "select (select count(*) from slice) as slices, (select count(*) from counter) as counters, "
    "(select count(*) from stats where severity in ('error', 'data_loss') and value > 0) as errors"
)


def perfetto_check(trace_path: Path, binary: str, expected_slices: int, timeout_s: float = 300.0) -> PerfettoCheck:
    """Load the trace in Perfetto's trace processor and compare what it imported with what was written."""
    try:
        proc = subprocess.run(
            [binary, "-Q", _QUERY, str(trace_path)], capture_output=True, text=True, timeout=timeout_s
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return PerfettoCheck(False, f"could not run {binary}: {exc}")
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return PerfettoCheck(False, f"{binary} failed: {tail}")
    numbers = [
        [int(n) for n in re.findall(r"\d+", line)]
        for line in proc.stdout.splitlines()
        if re.fullmatch(r"[\s\"|,]*\d+[\s\"|,]+\d+[\s\"|,]+\d+[\s\"|,]*", line)
    ]
    if not numbers:
        return PerfettoCheck(False, f"could not read {binary}'s answer: {proc.stdout.strip()[-200:]!r}")
    slices, counters, errors = numbers[-1]
    ok = slices == expected_slices and errors == 0
    detail = f"Perfetto imported {slices} slices (wrote {expected_slices}), {counters} counter values, {errors} errors"
    return PerfettoCheck(ok, detail)

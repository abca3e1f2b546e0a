"""Run a command under perf event counters of its whole process tree, read at every line it prints.

A ``--command`` trial's workload is the user's own program, started by the device-side ``sh`` agent.  Counters
opened on a process count it and the children and threads it starts *after* the counters were opened
(``inherit``), so they must exist before the command starts anything: this launcher forks, opens the counters on
the child while the child waits on a pipe, and lets it exec ``sh -c COMMAND`` (counting is enabled by that exec,
as ``perf stat`` does it; the launcher's own few instructions between fork and exec are not counted).

The command's stdout and stderr pass through this launcher, byte for byte, to whoever reads its output (the
``sh`` agent, which stamps each line): at each chunk it reads the counters once, then forwards the chunk, and
writes one reading per newline to the readings file.  A step line of the user's tool is therefore bracketed by
the readings at the previous step line and at itself: the per-step counts need no clock shared with anything.

Readings file, one line each: ``names <n1> <n2> ...`` first, then ``<line number> <c1> <c2> ...`` (line numbers
from 1, in the command's output order) and last ``end <c1> <c2> ...`` after the command's tree exited.
Run as ``python -m edgebench.host.perf_exec EVENTS READINGS COMMAND``; exits with the command's status
(128 + N for a signal), 125 when a counter could not be opened (one line on the output says why).
"""

from __future__ import annotations

import os
import signal
import sys

from edgebench.host.perf_events import CounterError, open_counters, parse_counters

#: The launcher's own failure (a counter refused): distinct from any status ``sh -c`` gives.
REFUSED = 125


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _status(wait_status: int) -> int:
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


def run(names: tuple[str, ...], readings: str, command: str) -> int:
    """Fork, count, exec ``sh -c command`` and forward its output; returns its exit status."""
    go_r, go_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: wait until the counters are open, then become the user's command
        os.close(go_w)
        os.close(out_r)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        os.close(out_w)
        released = os.read(go_r, 1)
        os.close(go_r)
        if not released:
            os._exit(REFUSED)
        try:
            os.execvp("sh", ["sh", "-c", command])
        finally:
            os._exit(127)
    os.close(go_r)
    os.close(out_w)
    try:
        counters = open_counters(names, pid, on_exec=True)
    except CounterError as exc:
        os.close(go_w)  # the child reads end of file and exits without running anything
        os.waitpid(pid, 0)
        _write_all(1, f"edgebench: --counters: {exc}\n".encode())
        return REFUSED
    with open(readings, "w") as log:
        log.write(f"names {' '.join(names)}\n")
        log.flush()
        os.write(go_w, b"g")
        os.close(go_w)
        line = 0
        while chunk := os.read(out_r, 65536):
            counts = " ".join(map(str, counters.read()))  # before forwarding: the line exists at this moment
            _write_all(1, chunk)
            for _ in range(chunk.count(b"\n")):
                line += 1
                log.write(f"{line} {counts}\n")
        _, wait_status = os.waitpid(pid, 0)
        log.write(f"end {' '.join(map(str, counters.read()))}\n")
    counters.close()
    return _status(wait_status)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 3:
        print("usage: python -m edgebench.host.perf_exec EVENTS READINGS COMMAND", file=sys.stderr)
        return 2
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # the reader gone: end as a shell pipeline would
    return run(parse_counters(args[0]), args[1], args[2])


if __name__ == "__main__":
    sys.exit(main())

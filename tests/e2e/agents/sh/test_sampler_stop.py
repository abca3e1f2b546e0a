"""The sh sampler's last record reads every source, even when the stop comes while a record is being read.

Recorded: a fresh-clone run's sh sampler ended with a record lacking ``/proc/meminfo``.  The TERM trap runs between
two commands, so a stop that arrived mid-record left that record with the sources not due on its tick skipped, and
the loop exited with it.  Here the record is held mid-read deterministically: one source is a FIFO that the test
stops feeding, the stop is sent while the loop waits on it, and only then is the FIFO fed again."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from edgebench.agents.sh.run import parse_device_output, script_for
from edgebench.targets.shell import LocalShell
from tests.native import device_shell


class Feeder(threading.Thread):
    """Feeds the FIFO a line per open for reading while ``feeding`` is set (each record opens it once); once cleared,
    it feeds at most the read it was already waiting for."""

    def __init__(self, fifo: Path) -> None:
        super().__init__(daemon=True)
        self.fifo, self.feeding, self.done, self.fed = fifo, threading.Event(), threading.Event(), 0

    def run(self) -> None:
        while not self.done.is_set():
            if not self.feeding.wait(0.05):
                continue
            try:
                with open(self.fifo, "w") as f:  # blocks until the sampler opens the FIFO to read it
                    f.write("fed\n")
            except OSError:
                continue  # the reader went away first
            self.fed += 1

    def stop(self) -> None:
        self.done.set()
        with contextlib.suppress(OSError):  # a writer waiting for a reader gets one, and ends
            os.close(os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK))


@pytest.mark.parametrize("shell", [("mksh",), ("busybox", "sh")])
def test_a_stop_during_a_record_gets_one_more_record_reading_every_source(shell, tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "rare").write_text("rare line\n")
    os.mkfifo(tree / "fifo")
    release = tmp_path / "release"
    # "rare" is due at the first record and the last only; the FIFO at every record, after it
    sources = [("/rare", 64, 100000), ("/fifo", 64, 1)]
    script = script_for(command=f"while [ ! -e {release} ]; do sleep 0.01; done", sources=sources, period_ms=10,
                        workdir=str(tmp_path / "run"), root=str(tree))  # fmt: skip
    feeder = Feeder(tree / "fifo")
    feeder.feeding.set()
    feeder.start()
    proc = LocalShell(device_shell(*shell)).start(script)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        deadline = time.monotonic() + 30
        while feeder.fed < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert feeder.fed >= 3, "the sampler never read its sources"
        feeder.feeding.clear()  # the next record waits on the FIFO, with "rare" already skipped (not due)
        time.sleep(0.3)
        release.touch()  # the workload ends: the script stops the sampler while its record waits on the FIFO
        time.sleep(0.5)
        feeder.feeding.set()  # the record goes on, and any record after it
        out = proc.stdout.read()
        assert proc.wait(60) == 0
    finally:
        feeder.stop()
        proc.stdin.close()
    records = parse_device_output(out.decode()).records
    assert len(records) >= 2
    assert 0 in records[0][1] and all(0 not in r for _, r in records[1:-1])
    assert records[-1][1].get(0) == ["rare line"], records[-1]  # the last record read every source

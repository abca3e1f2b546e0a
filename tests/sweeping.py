"""Watching a sweep that runs in another process: which trials its store holds so far, and waiting for more.

Shared by the tests that interrupt, kill, resume or race sweeps (``tests/e2e/cli/test_sweep.py``,
``test_signals.py``, ``test_sweep_concurrent.py`` and the fake backend's), which start them with ``cli.start``.
"""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path

#: Sweeps print a table per trial; at 160 columns no line of it wraps.
WIDE = {"COLUMNS": "160"}


def start_sweep(cli, *args: str) -> subprocess.Popen[str]:
    """``edgebench sweep ARGS`` started with the test's store, without waiting for it."""
    return cli.start("sweep", *args, env=WIDE)


def stored_keys(path: Path) -> list[str]:
    """The trial keys the sweep tables of the store at ``path`` hold, in the order they were stored."""
    if not path.exists():
        return []
    try:
        db = sqlite3.connect(path, timeout=30)
        return [r[0] for r in db.execute("SELECT trial_key FROM sweep_trials ORDER BY rowid")]
    except sqlite3.OperationalError:  # schema not created yet
        return []


def wait_for(path: Path, n: int, proc: subprocess.Popen[str], timeout_s: float = 240) -> None:
    """Wait until the store holds ``n`` sweep trials, failing if the sweep ends first or takes too long."""
    deadline = time.monotonic() + timeout_s
    while len(stored_keys(path)) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the sweep stored too few trials in time"
        time.sleep(0.2)

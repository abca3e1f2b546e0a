"""Trial work folders on this machine: one per trial, named after the process that made it, so that one left by a
killed process (SIGKILL, power cut, a fleet host's node dying) is removed by the next trial here.

Both device-side agents use them on a local device: the Python agent for its trial's files, the ``sh`` agent of a
``--command`` trial for its pushed files, script and output (marked with :data:`COMMAND_MARKER`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from edgebench.host.lifetime import process_running

#: The trial's spec in an agent's folder: a folder of plain files holding it is recognisably a trial's.
SPEC_NAME = "trial.json"
_WORK_DIR = re.compile(r"^edgebench-(\d+)-[^/]+$")
#: Put in a command trial's folder (pushed files, the script, its output: subfolders too) to mark it as one.
COMMAND_MARKER = ".edgebench-command"


def work_dir(kind: str = "") -> tempfile.TemporaryDirectory[str]:
    """A trial's temporary folder, named after this process (``edgebench-<pid>-...``) so that the next trial on
    the machine removes it if this process is killed before it can (see :func:`remove_stale_work_dirs`)."""
    return tempfile.TemporaryDirectory(prefix=f"edgebench-{os.getpid()}-{kind}")


def remove_stale_work_dirs(folder: Path | None = None) -> list[Path]:
    """Remove the trial folders of agents that were killed (SIGKILL, power cut, a fleet host's node dying) before
    they could; returns them.

    A folder is named ``edgebench-<pid>-...`` after the process that made it; it is stale when that process no
    longer runs and it is recognisably a trial's: only files, the trial's spec among them (or nothing), or a
    command trial's folder, which holds :data:`COMMAND_MARKER`.  Ctrl-C and SIGTERM remove their own folder on the
    way out; this covers the kills that run no cleanup, at the next trial on the same machine.
    """
    removed = []
    for path in (folder or Path(tempfile.gettempdir())).glob("edgebench-*-*"):
        match = _WORK_DIR.match(path.name)
        if match is None or not path.is_dir() or process_running(int(match.group(1))):
            continue
        try:
            if not (path / COMMAND_MARKER).is_file():
                entries = list(path.iterdir())
                if any(not p.is_file() for p in entries) or (entries and not (path / SPEC_NAME).is_file()):
                    continue  # not a trial's folder after all: leave it
            shutil.rmtree(path)
        except OSError:
            continue  # another launcher removed it first, or it is not ours to remove
        removed.append(path)
    return removed

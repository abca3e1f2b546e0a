"""``--push LOCAL[:REMOTE]``: what a command trial copies to its target before it runs.

REMOTE is a path inside the trial's work folder on the device, never outside it: a folder push *replaces* what is
at REMOTE (no stale files left to run), so an absolute REMOTE or one climbing out with ``..`` would remove a folder
edgebench never made (``DIR:/`` would aim at ``/``).  :func:`parse_push` refuses those where the flag is read.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from edgebench.host.files import below


def parse_push(spec: str) -> tuple[Path, str]:
    """``(local path, remote path)``; REMOTE defaults to LOCAL's name, relative to the target's work directory.

    A ``ValueError`` names what is wrong (a missing local file is found now, not after connecting; a REMOTE outside
    the work folder is refused before anything is copied or removed).
    """
    local_text, sep, remote = spec.partition(":")
    local = Path(local_text).expanduser()
    if not local_text or not local.exists():
        raise ValueError(f"{local_text or spec!r} does not exist here; --push takes LOCAL[:REMOTE]")
    if sep and not remote:
        raise ValueError(f"{spec!r} names no remote path after ':'; give LOCAL or LOCAL:REMOTE")
    return local, inside_work_folder(remote or local.resolve().name, spec)


def inside_work_folder(remote: str, spec: str = "") -> str:
    """``remote`` normalised, if it names a path strictly inside the work folder; else a ``ValueError`` saying so.

    Refused: an absolute path, one whose ``..`` climbs out, and the work folder itself (``.``, or LOCAL ``/``,
    which has no name to land under)."""
    try:
        return below(remote)
    except ValueError:
        where = f"{spec!r}: " if spec else ""
        raise ValueError(
            f"{where}REMOTE {remote!r} is outside the trial's work folder; give a relative path inside it "
            "(LOCAL:name or LOCAL:dir/name)"
        ) from None


def remote_path(workdir: str, remote: str) -> str:
    """Where a pushed file lands: under the target's work directory (``remote`` is checked again here, so that no
    caller can aim a push, and the removal a folder push starts with, outside it)."""
    return str(PurePosixPath(workdir) / inside_work_folder(remote))

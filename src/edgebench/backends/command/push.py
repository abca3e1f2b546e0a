"""``--push LOCAL[:REMOTE]``: what a command trial copies to its target before it runs."""

from __future__ import annotations

from pathlib import Path, PurePosixPath


def parse_push(spec: str) -> tuple[Path, str]:
    """``(local path, remote path)``; REMOTE defaults to LOCAL's name, relative to the target's work directory.

    A ``ValueError`` names what is wrong (a missing local file is found now, not after connecting).
    """
    local_text, sep, remote = spec.partition(":")
    local = Path(local_text).expanduser()
    if not local_text or not local.exists():
        raise ValueError(f"{local_text or spec!r} does not exist here; --push takes LOCAL[:REMOTE]")
    if sep and not remote:
        raise ValueError(f"{spec!r} names no remote path after ':'; give LOCAL or LOCAL:REMOTE")
    return local, remote or local.name


def remote_path(workdir: str, remote: str) -> str:
    """Where a pushed file lands: absolute REMOTE as given, else under the target's work directory."""
    return remote if remote.startswith("/") else str(PurePosixPath(workdir) / remote)

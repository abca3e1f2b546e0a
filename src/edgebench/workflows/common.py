"""What the workflows share: the note callback, the placement settings read on a device, a store opened to read.

A workflow never prints: what it has to tell as it goes (a note, a warning, a line of progress) it hands to a
``notify`` callback as the line a user would read, and what it found it returns as records.  The CLI writes the
lines to stderr; a notebook may collect or drop them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.store import Store
    from edgebench.targets import Target

#: ``notify(line)``: a note, warning or progress line of a workflow, as the user reads it (``note: ...``).
Notify = Callable[[str], None]


def quiet(line: str) -> None:
    """The default ``notify``: the lines are dropped."""


def role_cores(role: str, target: Target) -> tuple[int, ...] | None:
    """``--cores big``: the cores of the device's fast clusters, resolved as a sweep resolves them."""
    from edgebench.sweep.plan import resolve_cores

    try:
        return resolve_cores(role, 0, target.sysfs(), target.allowed_cores())
    except UsageError as exc:
        raise UsageError("--cores", exc.message) from None


def placed(values: dict[str, Any], target: Target) -> dict[str, Any]:
    """Trial values as the settings' parsers read them, with what depends on the device resolved there: a core role
    (big, little, all) becomes the device's cores, a hex mask also names the MNN suite's folders, and ``all``
    frequencies (a sweep's axis) is refused for one trial."""
    given = dict(values)
    if isinstance(given.get("cores"), str):  # big, little, all: this device's cpufreq clusters say which
        given["cores"] = role_cores(given["cores"], target)
    if getattr(given.get("cores"), "text", None):  # a hex mask: its typed text names the MNN suite's folders
        given["cores_mask"] = given["cores"].text
    if given.get("freq_khz") == "all":
        raise UsageError("--frequency", "all is for a sweep's frequencies axis; give one frequency, e.g. 1.7GHz")
    return given


def read_store(path: Path | None, hint: str = "run `edgebench run` first, or give the store to read") -> Store:
    """The store, read-only; a missing one is a usage error naming ``--store`` (reading never creates a store)."""
    from edgebench.store import Store, default_store_path

    path = path or default_store_path()
    if not Path(path).exists():
        raise UsageError("--store", f"{path} does not exist; {hint}")
    return Store(path, read_only=True)

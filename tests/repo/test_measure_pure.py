"""``measure/`` is pure functions over records (docs/architecture.md): it turns a bundle's events and samples into a
result and never reads the device itself.  What reads the device lives below it -- cpufreq and ``/proc`` in
``host/``, sensors and thermal trip points in ``sensors/`` -- and the agent or the monitor reads it and hands
``measure`` the records (a :class:`~edgebench.records.throttle.ThrottleReference`, samples).  These checks hold
``measure/`` to that: no module of it imports ``host/``, a file or process module, or opens a file, and nothing
it takes from below is a function (or a module of functions) that is handed a ``SysFS`` to read.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from types import ModuleType

from tests.paths import SRC

MEASURE = SRC / "edgebench" / "measure"
#: Modules whose import means reading or writing files or processes.
READING_MODULES = ("edgebench.host", "os", "pathlib", "glob", "io", "shutil", "subprocess", "tempfile", "socket")
#: Names whose use means a file read: the builtin ``open``, the device's files.
READING_NAMES = ("open", "SysFS")


def reads_in(source: str) -> list[str]:
    """What in ``source`` (a module of ``measure/``) reads files: imports of the modules above, the names above."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in READING_NAMES]
        found += [
            f"line {node.lineno}: imports {n}"
            for n in names
            if any(n == m or n.startswith(m + ".") for m in READING_MODULES)
        ]
        if isinstance(node, ast.Name) and node.id in READING_NAMES:
            found.append(f"line {node.lineno}: uses {node.id}")
    return found


def takes_sysfs(value: object) -> bool:
    """A function or class handed the device's files (a ``SysFS`` parameter), or a module holding one."""
    if isinstance(value, ModuleType):
        own = [v for v in vars(value).values() if getattr(v, "__module__", None) == value.__name__]
        return any(takes_sysfs(v) for v in own if not isinstance(v, ModuleType))
    if not callable(value):
        return False
    try:
        parameters = inspect.signature(value).parameters.values()
    except (TypeError, ValueError):
        return False
    return any("SysFS" in str(p.annotation) for p in parameters)


def test_no_module_of_measure_reads_files():
    found = {
        str(path.relative_to(SRC)): reads
        for path in sorted(MEASURE.rglob("*.py"))
        if (reads := reads_in(path.read_text()))
    }
    assert found == {}, "measure/ reads files: move the read down to host/ or sensors/ and hand measure the record"


def test_nothing_measure_takes_from_below_reads_the_device():
    found = []
    for path in sorted(MEASURE.rglob("*.py")):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            origin = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", "") or ""
            if origin.startswith("edgebench.") and not origin.startswith("edgebench.measure") and takes_sysfs(value):
                found.append(f"{name}: {attr} (from {origin})")
    assert found == [], "measure/ imports what reads the device"


def test_the_checks_refuse_what_they_should():
    assert reads_in("from edgebench.host.sysfs import SysFS\n")
    assert reads_in("from edgebench.host.cpu import freq_policies\n")
    assert reads_in("import os\n") and reads_in("from pathlib import Path\n")
    assert reads_in("def f(p):\n    return open(p).read()\n")
    assert reads_in("def f(sysfs: SysFS):\n    pass\n")
    assert reads_in("from edgebench.records.trial import Trial\nimport numpy as np\n") == []
    from edgebench.sensors import android_thermal, thermal_trips

    assert takes_sysfs(thermal_trips.zone_trips) and takes_sysfs(thermal_trips)
    assert not takes_sysfs(thermal_trips.nearest_trip) and not takes_sysfs(android_thermal)

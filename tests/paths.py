"""Where the suite's files are, and what this machine has, named once: test modules live at different depths
(``tests/unit/<package>/``, ``tests/e2e/<package>/``), so none of them reaches the fixtures or the repository by
counting parents."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
EXAMPLES = ROOT / "examples" / "sweeps"
SRC = ROOT / "src"

#: A hardware PMU registered with the kernel (x86's ``cpu``, arm64's ``armv8_pmuv3*``): whether hardware perf events
#: can count here (this project's VM has none).
HAS_PMU = any(
    p.name == "cpu" or p.name.startswith("armv")
    for p in Path("/sys/bus/event_source/devices").glob("*")
    if Path("/sys/bus/event_source/devices").is_dir()
)

"""Where the suite's files are, what this machine has, and a free port, named once: test modules live at
different depths (``tests/unit/<package>/``, ``tests/e2e/<package>/``), so none of them reaches the fixtures or the
repository by counting parents."""

from __future__ import annotations

import socket
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
EXAMPLES = ROOT / "examples" / "sweeps"
SRC = ROOT / "src"
#: The schema-3 store kept as it was written (open a copy: opening may upgrade a store in place), its pasted outputs
#: beside it, and the id of its one layer-traced trial.
GOLDEN_STORE_DIR = FIXTURES / "golden" / "store_v3"
GOLDEN_STORE = GOLDEN_STORE_DIR / "store_v3.db"
GOLDEN_TRACED = "20261123-174053-438acf01"
#: The MNN suite's files as ``export --format mnn-suite`` must write them for the hand-built phone store.
MNN_SUITE_GOLDEN = FIXTURES / "golden" / "mnn_suite"
#: A copy of the MNN suite's published result folders, as its repository holds them.
SUITE_REPO = FIXTURES / "mnn_suite" / "suite_repo"
#: A user's own models module (``--model byo_models:tiny``), copied into a test's folder under the name it needs.
BYO_MODELS = FIXTURES / "models" / "byo_models.py"

#: A hardware PMU registered with the kernel (x86's ``cpu``, arm64's ``armv8_pmuv3*``): whether hardware perf events
#: can count here (this project's VM has none).
HAS_PMU = any(
    p.name == "cpu" or p.name.startswith("armv")
    for p in Path("/sys/bus/event_source/devices").glob("*")
    if Path("/sys/bus/event_source/devices").is_dir()
)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now: for the servers the suite starts (sshd, the emulated
    adbd and its adb server, Ray's head), each on a port of its own."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])

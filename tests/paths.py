"""Where the suite's files are, named once: test modules live at different depths (``tests/unit/<package>/``,
``tests/e2e/<package>/``), so none of them reaches the fixtures or the repository by counting parents."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
EXAMPLES = ROOT / "examples" / "sweeps"
SRC = ROOT / "src"

"""The tests mirror the package: a unit test of ``src/edgebench/<package>/`` lives in ``tests/unit/<package>/``, an
end-to-end test in ``tests/e2e/<package>/``, and the repository's own checks (layers, docs, README) in
``tests/repo/``.  A test file anywhere else, or a folder named after no package, fails here, so the layout cannot
drift as files are added; and no test in ``tests/unit/`` starts a subprocess, a server, a cluster or a browser, so
``pytest tests/unit`` is the quick subset.
"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import END_TO_END
from tests.paths import ROOT, SRC, TESTS

PACKAGE = SRC / "edgebench"


def is_package(relative) -> bool:
    """``relative`` (a folder path under the package) is one of edgebench's packages: a folder of Python modules."""
    folder = PACKAGE / relative
    return folder.is_dir() and any(folder.glob("*.py"))


def misplaced(path) -> str | None:
    """Why the test file ``path`` is in the wrong place, or None."""
    parts = path.relative_to(TESTS).parts
    tree, folders, name = parts[0], parts[1:-1], parts[-1]
    if tree == "repo" and not folders:
        return None
    if tree not in ("unit", "e2e"):
        return "test files live in tests/unit/<package>/, tests/e2e/<package>/ or tests/repo/"
    if not folders:
        module = name.removeprefix("test_")
        if (PACKAGE / module).is_file() or name == "test_layout.py":
            return None  # a top-level module's tests (test_units.py for edgebench/units.py)
        return f"no module src/edgebench/{module}: put it in the folder of the package it tests"
    if not is_package("/".join(folders)):
        return f"src/edgebench/{'/'.join(folders)} is not a package: name the folder after the package it tests"
    return None


def test_every_test_file_lives_in_the_folder_of_its_package():
    wrong = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if "fixtures" in path.relative_to(TESTS).parts:
            continue
        why = misplaced(path)
        if why:
            wrong[str(path.relative_to(ROOT))] = why
    assert not wrong, wrong


def test_the_layout_rule_refuses_what_it_should():
    assert misplaced(TESTS / "test_store.py")
    assert misplaced(TESTS / "unit" / "nopackage" / "test_x.py")
    assert misplaced(TESTS / "unit" / "test_store.py")  # a package's tests go in its folder
    assert misplaced(TESTS / "e2e" / "cli" / "test_run.py") is None
    assert misplaced(TESTS / "unit" / "backends" / "mnn" / "test_worker.py") is None
    assert misplaced(TESTS / "unit" / "test_units.py") is None


def test_every_test_folder_is_a_package():
    """Test modules are imported as ``tests.unit.store.test_store``: without ``__init__.py`` two files of one name in
    two folders would collide, and the helpers (``tests.sshd``, ``tests.factories``) would not import."""
    folders = {p.parent for tree in ("unit", "e2e", "repo") for p in (TESTS / tree).rglob("test_*.py")}
    missing = sorted(str(f.relative_to(ROOT)) for f in folders | {TESTS} if not (f / "__init__.py").is_file())
    assert not missing, f"add __init__.py to {missing}"


def test_no_unit_test_starts_a_process_server_cluster_or_browser():
    """The marks conftest reads off each test (see docs/developer/testing.md): a test of ``tests/unit/`` that runs
    the CLI in a subprocess, or needs sshd, adb, Ray or Chromium, belongs in ``tests/e2e/``."""
    selection = " or ".join(END_TO_END)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         "-m", selection, str(TESTS / "unit")],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode in (0, 5), proc.stdout[-3000:] + proc.stderr[-3000:]  # 5: nothing selected
    found = [line for line in proc.stdout.splitlines() if "::" in line]
    assert not found, f"move these to tests/e2e/ (marked {selection}): {found}"

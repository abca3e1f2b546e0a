"""The tests mirror the package: a unit test of ``src/edgebench/<package>/`` lives in ``tests/unit/<package>/``, an
end-to-end test in ``tests/e2e/<package>/``, and the repository's own checks (layers, docs, README) in
``tests/repo/``; the docs site's examples, run by the command, in ``tests/e2e/docs/``.  A test file anywhere
else, or a folder named after no package, fails here, so the layout cannot drift as files are added; and no test
in ``tests/unit/`` starts the command, a server, a cluster or a browser (conftest fails one that does), so
``pytest tests/unit`` is the quick subset.
"""

from __future__ import annotations

from tests.conftest import misplaced_marks
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
    if tree == "e2e" and folders == ("docs",):
        return None  # the docs site's examples, run by the command: they span every package
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
    assert misplaced(TESTS / "e2e" / "docs" / "test_docs_examples.py") is None
    assert misplaced(TESTS / "unit" / "docs" / "test_x.py")  # only end-to-end: the examples run the command
    assert misplaced(TESTS / "unit" / "backends" / "torch" / "test_flops.py") is None
    assert misplaced(TESTS / "unit" / "test_units.py") is None


def test_every_test_folder_is_a_package():
    """Test modules are imported as ``tests.unit.store.test_store``: without ``__init__.py`` two files of one name in
    two folders would collide, and the helpers (``tests.sshd``, ``tests.factories``) would not import."""
    folders = {p.parent for tree in ("unit", "e2e", "repo") for p in (TESTS / tree).rglob("test_*.py")}
    missing = sorted(str(f.relative_to(ROOT)) for f in folders | {TESTS} if not (f / "__init__.py").is_file())
    assert not missing, f"add __init__.py to {missing}"


def test_a_unit_test_that_starts_a_process_fails_naming_where_it_belongs():
    """conftest fails such a test before it runs (``pytest_runtest_setup``), whatever subset is collected; the marks
    are the ones it reads off what the test uses (see docs/developer/testing.md)."""
    unit, e2e = TESTS / "unit" / "store" / "test_x.py", TESTS / "e2e" / "cli" / "test_x.py"
    assert misplaced_marks(unit, {"e2e", "onnxruntime"}) == {"e2e"}
    assert misplaced_marks(unit, {"ssh", "adb", "ray", "browser"}) == {"ssh", "adb", "ray", "browser"}
    assert misplaced_marks(unit, {"onnxruntime"}) == set()
    assert misplaced_marks(e2e, {"e2e", "ssh"}) == set()

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session", autouse=True)
def private_temp_folder(tmp_path_factory):
    """Every process the suite starts makes its temporary files here, and the suite must leave none behind.

    A folder of its own, because other runs may share ``/tmp``: what is left here is this suite's doing (a launcher
    killed by a test and never cleaned up after, a trial folder not removed).
    """
    folder = tmp_path_factory.mktemp("tmp")
    previous = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # read TMPDIR again
    yield folder
    if previous is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = previous
    tempfile.tempdir = None
    left = sorted(p.name for p in folder.glob("edgebench-*"))
    assert not left, f"the test suite left temporary folders behind: {left}"


@pytest.fixture
def sysfs_tree():
    """Path of a fixture device tree by name (``rpi4``...)."""
    return lambda name: FIXTURES / "sysfs" / name


@pytest.fixture
def cli(tmp_path):
    """Run the real ``edgebench`` entry point in a subprocess with a store in ``tmp_path``."""

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        env = dict(
            os.environ,
            EDGEBENCH_STORE=str(tmp_path / "store.sqlite"),
            EDGEBENCH_CACHE=str(tmp_path / "model-counts.json"),
            COLUMNS="120",
        )
        return subprocess.run(
            [sys.executable, "-m", "edgebench", *args], capture_output=True, text=True, env=env, timeout=timeout
        )

    run.store_path = tmp_path / "store.sqlite"
    return run


def json_out(proc: subprocess.CompletedProcess[str]) -> dict:
    return json.loads(proc.stdout)

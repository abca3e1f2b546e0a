from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def sysfs_tree():
    """Path of a fixture device tree by name (``rpi4``...)."""
    return lambda name: FIXTURES / "sysfs" / name


@pytest.fixture
def cli(tmp_path):
    """Run the real ``edgebench`` entry point in a subprocess with a store in ``tmp_path``."""

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, EDGEBENCH_STORE=str(tmp_path / "store.sqlite"), COLUMNS="120")
        return subprocess.run(
            [sys.executable, "-m", "edgebench", *args], capture_output=True, text=True, env=env, timeout=timeout
        )

    run.store_path = tmp_path / "store.sqlite"
    return run


def json_out(proc: subprocess.CompletedProcess[str]) -> dict:
    return json.loads(proc.stdout)

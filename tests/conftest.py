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


@pytest.fixture(scope="session")
def model_counts_cache(tmp_path_factory) -> Path:
    """One cache of the models' parameter and FLOP counts for the whole run: counting every model takes ~30 s, and
    the cache is keyed by the model code's fingerprint, so sharing it cannot serve a stale count."""
    return tmp_path_factory.mktemp("counts") / "model-counts.json"


@pytest.fixture
def cli(tmp_path, model_counts_cache):
    """Run the real ``edgebench`` entry point in a subprocess with a store in ``tmp_path``.

    ``cli.cache_path`` is the model-count cache it uses (the run's shared one; a test of the cache sets its own).
    """

    def run(*args: str, timeout: float = 300, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(
            os.environ,
            EDGEBENCH_STORE=str(tmp_path / "store.sqlite"),
            EDGEBENCH_CACHE=str(run.cache_path),
            COLUMNS="120",
        )
        return subprocess.run(
            [sys.executable, "-m", "edgebench", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            cwd=cwd,
        )

    run.store_path = tmp_path / "store.sqlite"
    run.cache_path = model_counts_cache
    return run


def json_out(proc: subprocess.CompletedProcess[str]) -> dict:
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory):
    """One folder of exported ONNX models for the run (``$EDGEBENCH_CACHE_DIR``), shared by the tests and the
    workers they start: an export is keyed by everything that decides its bytes, so sharing cannot serve a stale
    model, and each model is exported once."""
    folder = tmp_path_factory.mktemp("edgebench-cache")
    previous = os.environ.get("EDGEBENCH_CACHE_DIR")
    os.environ["EDGEBENCH_CACHE_DIR"] = str(folder)
    yield folder / "onnx"
    if previous is None:
        os.environ.pop("EDGEBENCH_CACHE_DIR", None)
    else:
        os.environ["EDGEBENCH_CACHE_DIR"] = previous


def require_onnxruntime():
    """Fail (never skip) where the ONNX extra is missing, naming the install line."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"{exc.name} is missing: pip install 'edgebench[onnx]'", pytrace=False)

"""Bring your own model: ``--model mypkg.mymodule:factory``.  The end-to-end half: what runs the real command, a real
worker or another process; the rest is in tests/unit/workloads/test_custom_model.py.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import pythonpath_first
from tests.paths import BYO_MODELS


def test_cli_runs_a_users_model_and_rejects_a_bad_one(cli, tmp_path):
    (tmp_path / "byo_models.py").write_text(BYO_MODELS.read_text())
    env = pythonpath_first(tmp_path)
    run = ["run", "--steps", "2", "--warmup", "1", "--no-store", "--json"]
    proc = cli(*run, "--model", "byo_models:tiny", env=env)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert (r["status"], r["trial"]["model"], r["workload"]["input_shape"], r["workload"]["num_classes"]) == (
        "ok",
        "byo_models:tiny",
        [3, 8, 8],
        4,
    )
    assert r["workload"]["params"] == 3 * 8 * 8 * 4 + 4 and r["loss"]["finite"]
    proc = cli(*run, "--model", "byo_models:nope", env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--model: cannot import 'byo_models:nope'" in proc.stderr


def test_the_edgebench_script_finds_a_model_in_the_current_directory(tmp_path):
    """As the README says: `cd` to your project and name its module; no PYTHONPATH needed.

    Run through the installed ``edgebench`` script, not ``python -m`` (which puts the current directory on
    ``sys.path`` by itself and would hide a script that does not).
    """
    import shutil
    from pathlib import Path

    script = shutil.which("edgebench", path=str(Path(sys.executable).parent)) or shutil.which("edgebench")
    if script is None:
        pytest.skip("the edgebench script is not installed in this environment")
    (tmp_path / "mine.py").write_text(BYO_MODELS.read_text())
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    args = [
        "run",
        "--model",
        "mine:tiny",
        "--steps",
        "2",
        "--warmup",
        "0",
        "--infer-steps",
        "0",
        "--no-store",
        "--json",
    ]
    proc = subprocess.run([script, *args], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "ok"

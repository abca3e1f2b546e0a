"""``--device cuda`` on a machine without it is refused before anything runs, without importing torch.  The end-to-end
half: what runs the real command, a real worker or another process; the rest is in
tests/unit/backends/test_device_check.py.
"""

from __future__ import annotations

from edgebench.store import Store


def test_run_on_a_missing_gpu_is_one_line_and_runs_nothing(cli):
    proc = cli("run", "--device", "cuda:99", "--steps", "1")
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert line.startswith("edgebench: error: --device: cuda:99: ") and "\n" not in line
    assert proc.stdout == ""
    assert not cli.store_path.exists() or Store(cli.store_path, read_only=True).trials() == []


def test_a_sweep_with_a_missing_gpu_names_its_key(cli):
    proc = cli("sweep", "--set", "device=cuda:99", "--set", "batch_sizes=[1]")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().startswith("edgebench: error: --set device: cuda:99: ")

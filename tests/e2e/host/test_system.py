"""``edgebench system``: what makes a device noisy, and tune/reset through SysFS on writable copies of fixture trees.
The end-to-end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/host/test_system.py.
"""

from __future__ import annotations

from tests.factories import laptop_tree


def test_system_show_cli_on_a_fixture_tree(cli, tmp_path):
    laptop = laptop_tree(tmp_path)
    proc = cli("system", "show", "--sysfs-root", str(laptop), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "turbo/boost: on" in proc.stdout and "thing(s) make benchmarks noisy here" in proc.stdout
    proc = cli("system", "reset", "--sysfs-root", str(laptop), "--state", str(laptop / "none.json"), timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "--state" in proc.stderr

"""A study's flags refused in one line, exit 2, nothing stored (the plans: tests/unit/study/test_plan.py)."""

import pytest


@pytest.mark.parametrize(
    ("args", "flag"),
    [(["--budget", "soon"], "--budget"), (["--budget", "0s"], "--budget"),
     (["--html", "/no/such/dir/s.html"], "--html"), (["--backend", "tensorflow"], "--backend")],
)  # fmt: skip
def test_bad_study_flags_are_one_line_exit_2(cli, args, flag):
    proc = cli("study", "tx2", "--quick", *args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgebench: error:") and flag in lines[0]
    assert not cli.store_path.exists()

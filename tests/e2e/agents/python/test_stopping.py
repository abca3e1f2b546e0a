"""The target-CI stop rule: stops as soon as the mean is known to the target, or at a cap, and says which.  The end-to-
end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/agents/python/test_stopping.py.
"""

from tests.conftest import json_out


def test_run_with_target_ci_records_the_rule(cli):
    proc = cli("run", "--batch-size", "4", "--target-ci", "50%", "--max-steps", "6", "--warmup", "1",
               "--infer-steps", "0", "--json", "--no-store")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    r = json_out(proc)
    assert r["trial"]["target_ci_pct"] == 50.0 and r["latency"]["step_ms"]["n"] >= 5  # 5 is the minimum in this mode
    assert r["stopped_by"].startswith(("target-ci: ±", "step cap: 6 steps"))
    proc = cli("run", "--target-ci", "2%", "--steps", "30", "--max-steps", "10")
    assert proc.returncode == 2 and "--max-steps" in proc.stderr

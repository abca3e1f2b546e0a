"""compare: side by side, ratios, and Welch's t-test on the stored step times of trials, sweeps and devices.  The end-
to-end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/report/test_compare.py.
"""

from edgebench.report.compare import (
    compare_trials,
)
from edgebench.store import Store
from tests.conftest import json_out
from tests.factories import add, result, save, steps


def test_cli_table_and_json(tmp_path, cli):
    with Store(cli.store_path) as db:
        add(db, "20260101-000001-aaaa", steps(10.0, 1))
        add(db, "20260101-000002-bbbb", steps(12.0, 2))
    proc = cli("compare", "20260101-000001", "20260101-000002")
    assert proc.returncode == 0, proc.stderr
    assert "train step mean (ms)" in proc.stdout and "slower" in proc.stdout
    r = json_out(cli("compare", "20260101-000001", "20260101-000002", "--json"))
    assert r["rows"][0]["significant"] is True and r["rows"][0]["ratio"] > 1.1
    proc = cli("compare", "board-a", "board-a", "--match", "model,colour")
    assert proc.returncode == 2 and "--match" in proc.stderr


def test_trials_that_ran_different_work_are_marked(tmp_path, cli):
    """Seen: an ORT inference trial against a torch training trial printed a ratio with no warning."""
    with Store(cli.store_path) as db:
        add(db, "20260103-000001-aaaa", steps(10.0, 1))
        ort = result("20260103-000002-bbbb", steps(2.0, 2), backend="onnxruntime", mode="infer", infer_ms=steps(2.0, 2))
        save(db, ort, steps(2.0, 2), steps(2.0, 2))
        a, b = db.get("20260103-000001"), db.get("20260103-000002")
        assert b.trial.mode == "infer" and b.trial.backend == "onnxruntime"
        step = {r.label: r for r in compare_trials(db, a, b)}["train step mean (ms)"]
        assert step.verdict.p_value is not None  # B's measured steps are its inference passes
    proc = cli("compare", "20260103-000001", "20260103-000002")
    assert proc.returncode == 0, proc.stderr
    assert "warning: A and B ran different work (mode: train vs infer; backend: torch vs onnxruntime)" in proc.stdout
    r = json_out(cli("compare", "20260103-000001", "20260103-000002", "--json"))
    assert r["unlike"] == ["mode: train vs infer", "backend: torch vs onnxruntime"]
    like = json_out(cli("compare", "20260103-000001", "20260103-000001", "--json"))
    assert like["unlike"] == []

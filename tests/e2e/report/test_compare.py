"""compare: side by side, ratios, and decisions across repeats.  The end-to-end half: what runs the real command;
the rest is in tests/unit/report/test_compare.py.
"""

from edgebench.records.result import Hygiene
from edgebench.report.compare import compare_trials
from edgebench.store import Store
from tests.conftest import json_out
from tests.factories import add, result, save, steps


def test_cli_table_and_json_of_two_trials(tmp_path, cli):
    """One process each: the ratio and why no decision is taken, each side's warning, the settings that differ
    (seen: `1.30x faster (p=6.4e-51)` between two busy trials pinned to different cores, neither said)."""
    with Store(cli.store_path) as db:
        add(db, "20260101-000001-aaaa", steps(10.0, 1), cores=[0], threads=1)
        busy = result("20260101-000002-bbbb", steps(12.0, 2), cores=[1], threads=1)
        save(db, busy.model_copy(update={"hygiene": Hygiene(other_cpu_pct=46.0, warning="device busy: other "
                                                                                         "processes used 46%")}),
             steps(12.0, 2))  # fmt: skip
    proc = cli("compare", "20260101-000001", "20260101-000002")
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "step median (ms)" in out and "p=" not in out
    assert "step time: inconclusive: 1 of 2 trials disturbed (device busy" in out
    assert "A and B differ in: cores: 0 (mask 1) vs 1 (mask 2)" in out
    assert "warning: B: trial 20260101-000002-bbbb: disturbed: device busy" in out
    r = json_out(cli("compare", "20260101-000001", "20260101-000002", "--json"))
    assert r["rows"][0]["p_value"] is None and r["rows"][0]["significant"] is None and r["rows"][0]["ratio"] > 1.1
    assert r["differences"] == ["cores: 0 (mask 1) vs 1 (mask 2)"] and r["warnings_b"] and not r["warnings_a"]
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
        step = {r.label: r for r in compare_trials(a, b)}["step median (ms)"]
        assert step.ratio is not None  # B's measured steps are its inference passes
    proc = cli("compare", "20260103-000001", "20260103-000002")
    assert proc.returncode == 0, proc.stderr
    assert "warning: A and B ran different work (mode: train vs infer; backend: torch vs onnxruntime)" in proc.stdout
    r = json_out(cli("compare", "20260103-000001", "20260103-000002", "--json"))
    assert r["unlike"] == ["mode: train vs infer", "backend: torch vs onnxruntime"]
    like = json_out(cli("compare", "20260103-000001", "20260103-000001", "--json"))
    assert like["unlike"] == []

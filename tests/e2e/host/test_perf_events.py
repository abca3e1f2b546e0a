"""Linux perf event counters for real: software events count on this machine, hardware ones are refused in one line
where the kernel exposes no PMU (this project's VM), and ``--counters`` reaches steps, layers and the trace.  The
end-to-end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/host/test_perf_events.py.
"""

from __future__ import annotations

import json

from edgebench.store import Store
from edgebench.store.trials import finished_of
from tests.conftest import TRACED_COUNTERS, store_with_traced_lenet
from tests.paths import HAS_PMU


def test_run_refuses_unavailable_or_unknown_events_in_one_line(cli):
    proc = cli("run", "-m", "lenet", "--steps", "1", "--counters", "bogus")
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --counters: unknown perf event")
    if not HAS_PMU:
        proc = cli("run", "-m", "lenet", "--steps", "1", "--counters", "task-clock,cycles")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("edgebench: error: --counters: cycles is a hardware event")
        assert len(proc.stderr.strip().splitlines()) == 1


def test_counters_per_step_and_per_layer_span(cli, traced_lenet, tmp_path):
    """On the session's traced LeNet trial: ``run -b 8 --steps 3 --trace layers --counters TRACED_COUNTERS``."""
    events = TRACED_COUNTERS
    out = store_with_traced_lenet(traced_lenet, cli.store_path)
    assert out["trial"]["counters"] == events.split(",")
    assert set(out["cpu"]["perf_counters_per_step"]) == set(events.split(","))
    assert out["cpu"]["perf_counters_per_step"]["task-clock"] > 0
    with Store(cli.store_path) as store:
        finished = finished_of(store, store.get(out["trial_id"]))
    steps = [e for e in finished.events if e.event == "step" and e.phase == "train"]
    assert len(steps) == 3 and all(e.counters and e.counters["task-clock"] > 0 for e in steps)
    spans = finished.spans
    assert spans is not None and spans.counters is not None and set(spans.counters) == set(events.split(","))
    conv = spans.names.index("features.0")
    assert spans.counters["task-clock"][spans.label == conv].sum() > 0  # the conv's own spans took CPU time
    layers = cli("layers", out["trial_id"], "--json")
    assert layers.returncode == 0, layers.stderr
    rows = {r["name"]: r for r in json.loads(layers.stdout)["rows"]}
    assert rows["features.0"]["counters"]["task-clock"] > 0
    wide = cli("layers", out["trial_id"])
    assert "task-clock ms" in wide.stdout and "context-switches" in wide.stdout
    trace_path = tmp_path / "t.json"
    traced = cli("trace", out["trial_id"], "-o", str(trace_path))
    assert traced.returncode == 0, traced.stderr
    doc = json.loads(trace_path.read_text())["traceEvents"]
    tracks = {e["name"] for e in doc if e["ph"] == "C"}
    assert {"perf task-clock per step", "perf page-faults per step"} <= tracks
    conv_slices = [e for e in doc if e.get("name") == "features.0"]
    assert conv_slices and set(conv_slices[0]["args"]["perf"]) == set(events.split(","))

"""Linux perf event counters for real: software events count on this machine, hardware ones are refused in one
line where the kernel exposes no PMU (this project's VM), and ``--counters`` reaches steps, layers and the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.host.perf_events import HARDWARE, SOFTWARE, open_counters, parse_counters, refusal
from edgebench.store import Store
from edgebench.store.trials import finished_of
from tests.conftest import json_out

#: A hardware PMU registered with the kernel (x86's ``cpu``, arm64's ``armv8_pmuv3*``).
HAS_PMU = any(
    p.name == "cpu" or p.name.startswith("armv")
    for p in Path("/sys/bus/event_source/devices").glob("*")
    if Path("/sys/bus/event_source/devices").is_dir()
)


def test_software_counters_count_this_process_and_its_threads():
    import threading

    counters = open_counters(("task-clock", "page-faults", "context-switches"))
    try:
        before = counters.read()
        pages = bytearray(64 * 2**20)  # touched page by page: minor faults
        for i in range(0, len(pages), 4096):
            pages[i] = 1
        worker = threading.Thread(target=lambda: sum(range(2_000_000)))  # a thread started after opening
        worker.start()
        worker.join()
        after = counters.read()
    finally:
        counters.close()
    task_ns, faults, _switches = (b - a for a, b in zip(before, after, strict=True))
    # at least half as many faults as 2 MiB pages: transparent huge pages may back the whole buffer (a full run
    # here saw that), and 4 KiB pages give far more
    assert faults >= 64 * 2**20 // (2 * 2**20) // 2
    assert task_ns > 0 and after[0] > before[0]


def test_hardware_events_answer_as_this_kernel_exposes_them():
    why = refusal(("cycles", "cache-misses"))
    if HAS_PMU:
        assert why is None
    else:
        assert why is not None and why.startswith("cycles is a hardware event")
        assert "ENOENT" in why and "no hardware PMU" in why and "task-clock" in why and "\n" not in why


def test_event_names_are_perfs_own():
    assert parse_counters("cache-references, cache-misses,task-clock,task-clock") == (
        "cache-references",
        "cache-misses",
        "task-clock",
    )
    assert set(HARDWARE) >= {"cycles", "instructions", "cache-references", "cache-misses"}
    assert set(SOFTWARE) >= {"page-faults", "context-switches", "task-clock"}
    with pytest.raises(ValueError, match="unknown perf event 'LLC'; known: cycles"):
        parse_counters("LLC")


def test_run_refuses_unavailable_or_unknown_events_in_one_line(cli):
    proc = cli("run", "-m", "lenet", "--steps", "1", "--counters", "bogus")
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --counters: unknown perf event")
    if not HAS_PMU:
        proc = cli("run", "-m", "lenet", "--steps", "1", "--counters", "task-clock,cycles")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("edgebench: error: --counters: cycles is a hardware event")
        assert len(proc.stderr.strip().splitlines()) == 1


def test_counters_per_step_and_per_layer_span(cli, tmp_path):
    events = "page-faults,context-switches,task-clock"
    proc = cli("run", "-m", "lenet", "-b", "8", "--steps", "3", "--warmup", "1", "--infer-steps", "0",
               "--trace", "layers", "--counters", events, "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json_out(proc)
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


def test_a_command_trial_cannot_count():
    from edgebench.records.trial import Trial

    with pytest.raises(ValueError, match="counters: a --command trial runs through the device's sh agent"):
        Trial(command="true", step_pattern="x", counters=("task-clock",))

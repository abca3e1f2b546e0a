"""DNNTune's table 5 drawn from results built by hand: the best of each column marked per model.  The table
measured by the command is in tests/e2e/cli/test_frameworks.py.
"""

from __future__ import annotations

from edgebench.records.quantization import Quantization
from edgebench.records.result import Hygiene, Latency, Memory, Stats, TrialResult, stored_trial
from edgebench.report.frameworks import Cell, mark_best


def _result(trial_id, latency, memory, agreement=None, mean=None, busy=None):
    q = None
    if agreement is not None:
        q = Quantization(method="m", kind="full", calibration="c", real_data=False, compared_samples=4,
                         top1_agreement=agreement)  # fmt: skip
    stats = Stats(mean=mean or latency, median=latency, p5=latency, p95=latency, std=0, ci95=0, n=2, cv=0)
    trial = stored_trial({"model": "lenet", "batch_size": 1, "threads": 1, "cores": [0], "steps": 2, "warmup": 1,
                          "precision": "int8" if q else "fp32"})  # fmt: skip
    hygiene = Hygiene(other_cpu_pct=busy) if busy else None
    return TrialResult(trial_id=trial_id, status="ok", trial=trial, latency=Latency(step_ms=stats),
                       memory=Memory(peak_bytes=memory), quantization=q, hygiene=hygiene)  # fmt: skip


def repeats(name, latencies, memory, **kw):
    """A cell's repeats: one latency (median) each, a memory a little apart in each process."""
    return [_result(f"{name}{k}", lat, memory + k, **kw) for k, lat in enumerate(latencies)]


def test_the_clear_best_of_each_column_is_marked_per_model_across_repeats():
    cells = [
        Cell("lenet", "torch", "fp32", results=repeats("a", [5.0, 5.1, 5.2], 300)),
        Cell("lenet", "onnxruntime", "fp32", results=repeats("b", [2.0, 2.1, 2.05], 80)),
        Cell("lenet", "onnxruntime", "int8", results=repeats("c", [1.0, 1.1, 1.05], 90, agreement=0.9)),
        Cell("lenet", "torch", "int8", results=repeats("d", [4.0, 4.1, 4.05], 350, agreement=0.95)),
        Cell("lenet", "mnn", "fp32", reason="not registered"),
    ]
    assert mark_best(cells) == []
    assert [sorted(c.best) for c in cells] == [[], ["peak_memory_bytes"], ["latency_ms"], ["top1_agreement"], []]


def test_no_star_from_one_repeat_each_nor_from_overlapping_repeats_nor_from_the_mean():
    """Seen: the lowest mean starred where the medians ranked the other way."""
    one = [Cell("lenet", "torch", "fp32", results=[_result("a", 5.0, 300, mean=2.0)]),
           Cell("lenet", "onnxruntime", "fp32", results=[_result("b", 3.0, 80, mean=4.0)])]  # fmt: skip
    notes = mark_best(one)
    assert [c.best for c in one] == [set(), set()]
    assert "lenet latency: lowest latency: onnxruntime fp32, but 1 repeat each cannot tell it clearly best" in notes[0]
    close = [Cell("lenet", "torch", "fp32", results=repeats("a", [2.0, 2.3, 2.1], 80)),
             Cell("lenet", "onnxruntime", "fp32", results=repeats("b", [2.2, 2.0, 2.4], 80))]  # fmt: skip
    assert "lenet latency: no clear best: torch fp32, onnxruntime fp32 overlap" in mark_best(close)
    assert not close[0].best & {"latency_ms"}


def test_a_disturbed_repeat_does_not_count():
    cells = [Cell("lenet", "torch", "fp32", results=repeats("a", [5.0, 5.1, 5.2], 300)),
             Cell("lenet", "onnxruntime", "fp32", results=[*repeats("b", [2.0, 2.1], 80),
                                                           _result("b9", 0.5, 80, busy=70.0)])]  # fmt: skip
    notes = mark_best(cells)
    assert "latency_ms" in cells[1].best and cells[1].values("latency_ms") == [2.0, 2.1]
    assert any(n.startswith("lenet onnxruntime fp32: left out 1 of 3 trials as disturbed") for n in notes)

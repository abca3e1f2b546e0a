"""DNNTune's table 5 drawn from results built by hand: the best of each column marked per model.  The table
measured by the command is in tests/e2e/cli/test_frameworks.py.
"""

from __future__ import annotations

from edgebench.records.quantization import Quantization
from edgebench.records.result import Latency, Memory, Stats, TrialResult, stored_trial
from edgebench.report.frameworks import Cell, mark_best


def _result(trial_id, latency, memory, agreement=None):
    q = None
    if agreement is not None:
        q = Quantization(method="m", kind="full", calibration="c", real_data=False, compared_samples=4,
                         top1_agreement=agreement)  # fmt: skip
    stats = Stats(mean=latency, median=latency, p5=latency, p95=latency, std=0, ci95=0, n=2, cv=0)
    trial = stored_trial({"model": "lenet", "batch_size": 1, "threads": 1, "cores": [0], "steps": 2, "warmup": 1,
                          "precision": "int8" if q else "fp32"})  # fmt: skip
    return TrialResult(trial_id=trial_id, status="ok", trial=trial, latency=Latency(step_ms=stats),
                       memory=Memory(peak_bytes=memory), quantization=q)  # fmt: skip


def test_the_best_of_each_column_is_marked_per_model():
    cells = [
        Cell("lenet", "torch", "fp32", result=_result("a", 5.0, 300)),
        Cell("lenet", "onnxruntime", "fp32", result=_result("b", 2.0, 80)),
        Cell("lenet", "onnxruntime", "int8", result=_result("c", 1.0, 90, agreement=0.9)),
        Cell("lenet", "torch", "int8", result=_result("d", 4.0, 350, agreement=0.95)),
        Cell("lenet", "mnn", "fp32", reason="not registered"),
    ]
    mark_best(cells)
    assert [sorted(c.best) for c in cells] == [[], ["peak_memory_bytes"], ["latency_ms"], ["top1_agreement"], []]

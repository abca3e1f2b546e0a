"""Sweep summaries at 80 columns from results built by hand: a backend or mode axis says which row is which.  The
tables the command prints are in tests/e2e/cli/test_tables_80.py.
"""

from __future__ import annotations

import io

from tests.factories import readable


def test_a_sweep_over_backends_says_which_row_is_which_at_80_columns():
    """A backend or mode axis is a column where trials differ in it; what every trial shares is said once in the
    title, the defaults (torch, training) not at all; the status survives a table too wide for 80 columns."""
    from rich.console import Console

    from edgebench.records.trial import Trial
    from edgebench.report.sweep_summary import sweep_table
    from edgebench.sweep.plan import trial_label
    from tests.factories import result

    def rendered(results) -> str:
        console = Console(width=80, record=True, file=io.StringIO())
        console.print(sweep_table(results, "sweep s"))
        return console.export_text()

    backends = [result(f"t{i}", [1.0, 1.1], model="mobilenet_v2", backend=b, mode="infer")
                for i, b in enumerate(("torch", "onnxruntime", "mnn"))]  # fmt: skip
    out = rendered(backends)
    readable(out, "sweep s: every trial mobilenet_v2 infer", "backend", "onnxruntime", "mnn", "status")
    assert "model " not in out and "mode " not in out
    out = rendered(backends[2:])
    readable(out, "sweep s: every trial mobilenet_v2 mnn infer", "status")
    assert "backend" not in out
    plain = rendered([result("a", [1.0, 1.1]), result("b", [1.0, 1.2], model="squeezenet")])
    readable(plain, "lenet", "squeezenet", "status")
    assert "every trial" not in plain and "backend" not in plain and "torch" not in plain
    mixed = rendered([*backends, result("c", [2.0, 2.1]), result("d", [2.0], model="squeezenet_1_1", backend="mnn")])
    readable(mixed, "squeezenet_1_1", "onnxruntime", "infer", "train", "status")
    assert all(" ok " in line for line in mixed.splitlines() if line.startswith((" lenet", " mobilenet", " squeeze")))
    label = trial_label(Trial(model="mobilenet_v2", backend="onnxruntime", mode="infer", precision="int8"))
    assert label.endswith("onnxruntime infer int8") and trial_label(Trial(model="lenet")) == "lenet b32 t=cores cpu=all"
    # a stored trial is labelled as it is (the sweep's "best for" line): a command trial, whose Trial needs a command
    assert trial_label(result("e", [1.0], backend="command").trial) == "lenet b8 t2 cpu0-1 command"

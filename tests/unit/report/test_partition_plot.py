"""The partition plots say what the printed tables say of their figures: the device figures' basis and every
warning.  Recorded: Table 4's plot drew a disturbed device's row as if it decided, with no mark."""

from edgebench.partition.analysis import analyze
from edgebench.partition.table4 import table4
from edgebench.report.partition_plot import device_label, plot_warnings, save_plot, save_table4_plot, table4_annotation
from tests.unit.partition.test_solver import LINK, chain


def _analysis(device_ms=10.0, **update):
    a = analyze(chain([(device_ms, 1.0, 0.01)] * 4, [100_000, 50_000, 1_000, 20_000]), LINK, "latency")
    return a.model_copy(update=update)


def test_a_disturbed_row_is_marked_on_the_plot_as_deciding_nothing(tmp_path):
    t = table4([("board", "t1", _analysis()), ("phone", "t2", _analysis(2.0))])
    quiet, busy = t.rows[0], t.rows[1].model_copy(update={"disturbed": "device busy: other processes used 46%"})
    assert "decides nothing" not in table4_annotation(quiet)
    text = table4_annotation(busy)
    assert "disturbed: decides nothing" in text and busy.partition_point in text and f"({busy.basis})" in text
    repeated = quiet.model_copy(update={"saving_pct": 20.0, "saving_low_pct": 15.0, "saving_high_pct": 25.0})
    assert table4_annotation(repeated).startswith("20.0% [15.0, 25.0] (measured)")
    assert table4_annotation(quiet.model_copy(update={"saving_pct": None})).startswith("no saving stated")
    out = tmp_path / "table4.png"
    save_table4_plot(t.model_copy(update={"rows": [quiet, busy]}), out)
    assert out.stat().st_size > 0


def test_the_device_axis_names_its_basis_and_the_plot_carries_the_warnings(tmp_path):
    measured = _analysis()
    assert device_label(measured) == "time per pass (ms)"
    assert device_label(measured.model_copy(update={"device_basis": "predicted"})) == "time per pass (ms), predicted"
    estimated = measured.model_copy(update={"objective": "energy", "energy_source": "estimated: utilization model"})
    assert device_label(estimated) == "device energy (mJ), estimated"
    sensed = estimated.model_copy(update={"energy_source": "measured: the device's power sensor"})
    assert device_label(sensed) == "device energy (mJ)"
    warned = measured.model_copy(update={"notes": ["a note", "warning: trial t1 is disturbed (busy): decides nothing"]})
    assert plot_warnings(warned.notes) == ["trial t1 is disturbed (busy): decides nothing"]
    assert plot_warnings(measured.notes) == []
    out = tmp_path / "partition.png"
    save_plot(warned, out)
    assert out.stat().st_size > 0

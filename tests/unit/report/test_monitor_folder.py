"""``report --monitor`` / ``plot freq-temp --monitor`` on a folder other people left (issue 39): a junk
``meta.json`` or ``samples.csv`` raised; each is drawn from what it holds or refused in one line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.cli import main

SAMPLES = "t_ns,cpu0_freq_khz,temp_cpu_mc\n" + "".join(f"10{i}0000000,1500000,4500{i}\n" for i in range(3))
META = '{"interval_ms": 10, "columns": ["cpu0_freq_khz", "temp_cpu_mc"], "sensors": ["cpu_freq"], "unavailable": {}}'


def draw(folder, capsys):
    pytest.importorskip("matplotlib", reason="the report extra: pip install 'edgebench[report]'")
    capsys.readouterr()
    code = main(["plot", "freq-temp", "--monitor", str(folder), "--out", str(folder / "p.png")])
    err = capsys.readouterr().err.strip()
    one_line = len(err.splitlines()) == 1 and err.startswith("edgebench: error: ")
    assert code in (0, 2) and (code == 0 or one_line), (code, err)
    return code


@pytest.mark.parametrize(
    ("meta", "samples"),
    [(META, SAMPLES), ("[1]", SAMPLES), ("{", SAMPLES), ('{"columns": 5}', SAMPLES), ("[" * 100_000, SAMPLES),
     ('{"interval_ms": "x", "columns": ["a"]}', SAMPLES), (META, "t_ns,cpu0_freq_khz\nabc,def\n" + "9" * 400 + ",1\n"),
     (META, b"\xff\xfe\x00junk"), (META, "")],
)  # fmt: skip
def test_a_junk_monitor_folder_is_drawn_or_one_line(tmp_path, capsys, meta, samples):
    (tmp_path / "meta.json").write_text(meta)
    (tmp_path / "samples.csv").write_bytes(samples if isinstance(samples, bytes) else samples.encode())
    draw(tmp_path, capsys)


@settings(max_examples=40)
@given(st.text(max_size=200), st.text(max_size=80))
def test_any_monitor_folder_reads_or_is_one_line(tmp_path_factory, samples, meta):
    """Read and laid out as the figure (the drawing itself is the tests' above)."""
    from edgebench.errors import UsageError
    from edgebench.report.content import read_monitor
    from edgebench.report.figures import monitor_freq_temp

    folder = tmp_path_factory.mktemp("monitor")
    (folder / "samples.csv").write_text(SAMPLES.splitlines()[0] + "\n" + samples, encoding="utf-8", errors="replace")
    (folder / "meta.json").write_text(meta, encoding="utf-8", errors="replace")
    try:
        monitor_freq_temp(read_monitor(folder), "monitor")
    except UsageError as exc:
        assert "\n" not in str(exc)

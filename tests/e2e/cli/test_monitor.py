"""``edgebench monitor``: files in the MNN-based suite's format, every sample on disk after Ctrl-C, throttling."""

import json
import signal
import time

import pytest


def test_ctrl_c_leaves_every_sample_on_disk(cli, sysfs_tree, tmp_path):
    out = tmp_path / "m"
    proc = cli.start(
        "monitor", "--out", str(out), "--interval", "5ms", "--sysfs-root", str(sysfs_tree("rpi4")), "--json"
    )
    assert proc.stderr.readline().startswith("monitoring ")  # the loop is running
    time.sleep(0.6)
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    summary = json.loads(stdout)
    assert summary["stopped_by"] == "Ctrl-C" and summary["samples"] >= 20
    for name in ("samples.csv", "freq_temperature.csv"):
        text = (out / name).read_text()
        assert text.endswith("\n") and len(text.splitlines()) == summary["samples"] + 1
    assert json.loads((out / "summary.json").read_text())["samples"] == summary["samples"]


@pytest.mark.parametrize("stop", [None, signal.SIGTERM, signal.SIGHUP], ids=["duration", "SIGTERM", "SIGHUP"])
def test_a_long_period_ends_on_time_with_every_sample_on_disk(cli, sysfs_tree, tmp_path, stop):
    """``--interval 1h --duration 2s`` ended after an hour, and SIGTERM/SIGHUP were not heard meanwhile."""
    out = tmp_path / "m"
    args = ["--out", str(out), "--interval", "1h", "--sysfs-root", str(sysfs_tree("rpi4")), "--json"]
    proc = cli.start("monitor", *args, *(["--duration", "1s"] if stop is None else []))
    assert proc.stderr.readline().startswith("monitoring ")
    if stop is not None:
        time.sleep(0.5)
        proc.send_signal(stop)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    summary = json.loads(stdout)
    assert (
        summary["stopped_by"] == {None: "end of --duration", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}[stop]
    )
    assert summary["samples"] == 2 and len((out / "samples.csv").read_text().splitlines()) == 3


def test_throttling_is_unknown_not_absent_without_a_clock_or_temperature(cli, sysfs_tree, tmp_path):
    proc = cli.start(
        "monitor", "--out", str(tmp_path / "m"), "--duration", "300ms", "--sysfs-root", str(sysfs_tree("container"))
    )
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "no thermal throttling" not in stdout
    assert "thermal throttling: cannot be told (this device exposes no CPU clock and no temperature" in stdout
    summary = json.loads((tmp_path / "m" / "summary.json").read_text())
    assert summary["throttling"] is None and summary["throttling_unknown"].startswith("this device exposes no")


def test_duration_ends_the_run_with_a_summary(cli, sysfs_tree, tmp_path):
    proc = cli.start(
        "monitor", "--out", str(tmp_path / "m"), "--duration", "300ms", "--sysfs-root", str(sysfs_tree("jetson_tx2"))
    )
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "stopped by end of --duration" in stdout
    assert "VDD_IN (total)" in stdout and "no thermal throttling" in stdout
    assert "not on this device: rapl" in stderr


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--interval", "0ms"], "--interval"),
        (["--interval", "soon"], "--interval"),
        (["--duration", "forever"], "--duration"),
        (["--sensors", "rapl,bogus"], "--sensors"),
        (["--sysfs-root", "/no/such/tree"], "--sysfs-root"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(cli, tmp_path, args, flag):
    out = tmp_path / "m"
    proc = cli.start("monitor", "--out", str(out), *args)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgebench: error:") and flag in lines[0]
    assert not out.exists()


def test_an_earlier_run_is_not_overwritten(cli, tmp_path):
    out = tmp_path / "m"
    out.mkdir()
    (out / "samples.csv").write_text("t_ns\n1\n")
    proc = cli.start("monitor", "--out", str(out), "--duration", "50ms")
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "--out" in stderr and "already holds" in stderr
    assert (out / "samples.csv").read_text() == "t_ns\n1\n"

"""``edgebench sensors`` and the energy side of ``edgebench run``, through the real command line."""

import pytest

from tests.conftest import json_out


def by_name(report):
    return {s["name"]: s for s in report["sensors"]}


def test_sensors_json_on_a_tx2_capture(cli, sysfs_tree):
    proc = cli("sensors", "--json", "--sysfs-root", str(sysfs_tree("jetson_tx2")))
    assert proc.returncode == 0, proc.stderr
    sensors = by_name(json_out(proc))
    assert {n for n, s in sensors.items() if s["available"]} == {
        "cpu_time", "memory", "cpu_freq", "thermal", "jetson_power", "jetson_gpu",
    }  # fmt: skip
    power = {p["name"]: p for p in sensors["jetson_power"]["power"]}
    assert power["VDD_IN"]["power_w"] == pytest.approx(2.981) and power["VDD_IN"]["scope"] == "total"
    assert sensors["jetson_gpu"]["values"] == {"gpu0_load_permille": 312, "gpu0_freq_khz": 1300500}
    assert "not a tree copied" in sensors["nvml"]["reason"]
    assert sensors["rapl"]["reason"].startswith("no /sys/class/powercap")


def test_sensors_json_on_a_laptop_capture_explains_counters(cli, sysfs_tree):
    sensors = by_name(json_out(cli("sensors", "--json", "--sysfs-root", str(sysfs_tree("intel_laptop")))))
    psys = next(p for p in sensors["rapl"]["power"] if p["name"] == "psys")
    assert psys["power_w"] is None and "needs a live device" in psys["method"]  # one reading of a counter
    assert sensors["power_supply"]["values"]["device_power_mw"] == 7850


def test_sensors_table_on_this_machine(cli):
    proc = cli("sensors")
    assert proc.returncode == 0, proc.stderr
    for text in ("cpu_time", "ok", "missing", "nvml", "rapl"):
        assert text in proc.stdout


def test_sensors_with_a_missing_tree_is_a_usage_error(cli, tmp_path):
    proc = cli("sensors", "--sysfs-root", str(tmp_path / "nothing"))
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("edgebench: error: --sysfs-root:")


def test_run_on_a_jetson_capture_measures_energy_with_an_idle_baseline(cli, sysfs_tree):
    proc = cli(
        "run", "--steps", "2", "--warmup", "1", "--infer-steps", "0", "--json", "--no-store",
        "--sysfs-root", str(sysfs_tree("jetson_tx2")), "--idle", "300ms",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    r = json_out(proc)
    assert r["energy"]["source"] == "jetson_power: VDD_IN (power samples)"
    assert r["energy"]["idle_window_s"] == pytest.approx(0.3, abs=0.05)
    # a capture's power does not change: the idle baseline equals the trial's power and the active energy is 0
    energy = r["energy"]
    assert energy["idle_power_w"] == pytest.approx(2.981) and energy["avg_power_w"] == pytest.approx(2.981)
    assert r["energy"]["gross_j"] == pytest.approx(r["energy"]["avg_power_w"] * r["energy"]["window_s"])
    assert r["energy"]["energy_j"] == pytest.approx(0.0, abs=1e-6)
    assert r["energy"]["per_step_j"] == pytest.approx(r["energy"]["energy_j"] / 2, abs=1e-9)
    assert len(energy["by_rail"]) == 9 and energy["by_rail"]["VDD_SYS_CPU"]["avg_power_w"] == pytest.approx(0.306)
    assert r["gpu_util_pct"] == {"per_gpu": [pytest.approx(31.2)], "mean": pytest.approx(31.2)}
    # clocks and temperatures exist, so throttling is judged (against the TX2's trip point less 5 °C): none
    assert r["throttling"] == {"hot_c": pytest.approx(96.5 - 5), "episodes": [], "throttled_s": 0.0}
    assert r["schema_version"] == 4


def test_run_here_estimates_only_when_asked_and_labels_it(cli):
    proc = cli(
        "run", "--steps", "3", "--warmup", "1", "--infer-steps", "0", "--json", "--no-store",
        "--estimate-energy", "idle=2W,max=8W", "--min-time", "auto",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    r = json_out(proc)  # past 3 steps until the worker's CPU share resolves: the estimate charges that share
    energy = r["energy"]
    assert energy["energy_j"] is None and energy["per_step_j"] is None  # no power sensor here: nothing measured
    assert r["energy"]["idle_window_s"] is None  # and no idle window taken for nothing
    assert r["throttling"] is None  # no clock or temperature here: no verdict either way
    assert r["energy"]["source"] is None  # the estimate is never named as the measurement's source
    assert r["estimated_energy"]["kind"] == "estimated"
    assert r["estimated_energy"]["power_model"] == "linear-utilization: P = 2 W + (8 W - 2 W) * U_cpu"
    # U_cpu: the worker's own CPU time over the device's cores, not the cores' total (other processes' load)
    share = r["cpu"]["process_pct"] / r["device"]["cpu_count"]
    assert r["estimated_energy"]["cpu_util_pct"] == pytest.approx(share)
    assert r["estimated_energy"]["avg_power_w"] == pytest.approx(2 + 6 * share / 100)
    assert r["estimated_energy"]["energy_j"] > 0


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--estimate-energy", "lots"], "--estimate-energy"),
        (["--estimate-energy", "idle=2W"], "--estimate-energy"),
        (["--idle", "soon"], "--idle"),
        (["--sysfs-root", "/no/such/tree"], "--sysfs-root"),
    ],
)
def test_bad_energy_flags_are_one_line_exit_2(cli, args, flag):
    proc = cli("run", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgebench: error:") and flag in lines[0]
    assert not cli.store_path.exists()

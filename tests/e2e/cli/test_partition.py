"""``edgebench partition`` and ``edgebench import`` end to end on lenet: real trials, the real store."""

import json

import pytest

from edgebench.store import Store
from tests.conftest import pythonpath_first

TINY = ("--model", "lenet", "--steps", "2", "--warmup", "1")


@pytest.fixture(scope="module")
def cli(cli_factory):
    return cli_factory("partition", columns=200)


@pytest.fixture(scope="module")
def first(cli):
    """The first analysis: no trial is stored, so it runs (and stores) a traced one."""
    proc = cli("partition", *TINY, "--json")
    assert proc.returncode == 0, proc.stderr
    return proc, json.loads(proc.stdout)


def test_first_run_traces_a_trial_and_ranks_every_point(cli, first):
    proc, a = first
    assert "no stored layer-traced trial of lenet on this device: running one" in proc.stderr
    rows = a["rows"]
    assert len(rows) == 12 and [r["point"] for r in rows] == list(range(12))
    assert rows[0]["kind"] == "cloud-only" and rows[-1]["kind"] == "mobile-only"
    assert rows[0]["up_bytes"] == 1 * 28 * 28 * 4 and rows[-1]["up_bytes"] == 0
    for r in rows:
        assert r["total_ms"] == pytest.approx(r["mobile_ms"] + r["transfer_ms"] + r["cloud_ms"])
        assert r["tensors"] <= 1  # LeNet is a chain
    assert a["best"]["total_ms"] == min(r["total_ms"] for r in rows)
    assert a["mobile_only"] == rows[-1] and a["cloud_only"] == rows[0]
    assert a["cloud_source"].startswith("--cloud-speedup 10: ") and "the default" in a["cloud_source"]
    assert a["energy_source"] is None and rows[1]["total_energy_j"] is None  # no power sensor, no estimate
    assert a["dag_cut"]["frontier_misses"] is False and a["branch_points"] == 0
    with Store(cli.store) as store:
        (trial,) = store.trials()
        assert trial.trace_summary.granularity == "layers" and trial.trial.batch_size == 1
    assert trial.trial_id in a["mobile_source"]


def test_a_second_run_reuses_the_stored_trial_and_the_speedup_divides_device_times(cli, first):
    proc = cli("partition", *TINY, "--cloud-speedup", "5", "--network", "3g", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "running one" not in proc.stderr
    a = json.loads(proc.stdout)
    assert a["mobile_source"] == first[1]["mobile_source"]
    assert a["cloud_only"]["cloud_ms"] == pytest.approx(a["mobile_only"]["mobile_ms"] / 5)
    assert a["network"]["name"] == "3g" and a["network"]["up_mbps"] == 1.1


def test_depth_cuts_only_between_blocks(cli, first):
    proc = cli("partition", *TINY, "--depth", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["rows"]
    assert [(r["point"], r["layer"]) for r in rows] == [(0, "(input)"), (6, "features.5"), (11, "classifier.4")]
    assert rows == [first[1]["rows"][0], first[1]["rows"][6], first[1]["rows"][11]]


def test_table_marks_the_best_and_compares_with_both_baselines(cli, first):
    proc = cli("partition", *TINY, "--sweep-bandwidth", "0.5-100Mbps", "--transfer-dtype", "fp16")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for column in ("T_mobile ms", "sent", "T_transfer ms", "T_cloud ms", "T_total ms", "E_mobile mJ", "E_total mJ"):
        assert column in out
    assert "best (latency): point" in out and "mobile only:" in out and "cloud only:" in out
    assert "sweep 0.5-" in out and "-100 Mbps: best point" in out
    assert "floating-point tensors sent as fp16" in out
    assert "energy cannot be ranked" in out


def test_energy_objective_without_energy_is_a_usage_error(cli, first):
    proc = cli("partition", *TINY, "--objective", "energy")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert proc.stderr.startswith("edgebench: error: --objective: energy cannot be ranked")


#: Enough steps for the CPU's utilization over the window, which the power model applies to (2 steps of LeNet are
#: a few milliseconds: the estimate is then withheld, and energy cannot be ranked)
ESTIMATED = ("--model", "lenet", "--steps", "300", "--warmup", "1")


def test_energy_objective_with_a_labelled_estimate(cli, first):
    proc = cli("partition", *ESTIMATED, "--objective", "energy", "--estimate-energy", "idle=2W,max=6W", "--json")
    assert proc.returncode == 0, proc.stderr
    a = json.loads(proc.stdout)
    assert a["energy_source"].startswith("estimated: linear-utilization: P = 2 W + (6 W - 2 W) * U_cpu (")
    assert "running one" in proc.stderr  # the stored trial has no estimate
    again = cli("partition", *ESTIMATED, "--objective", "energy", "--estimate-energy", "idle=2W,max=6W", "--json")
    assert "running one" not in again.stderr and json.loads(again.stdout)["mobile_source"] == a["mobile_source"]
    other = cli("partition", *ESTIMATED, "--objective", "energy", "--estimate-energy", "idle=1W,max=9W", "--json")
    assert "running one" in other.stderr  # other coefficients: another trial
    energies = [r["total_energy_j"] for r in a["rows"]]
    assert a["best"]["total_energy_j"] == min(energies)
    assert a["cloud_only"]["mobile_energy_j"] == 0 and a["mobile_only"]["transfer_energy_j"] == 0


def test_training_mode_returns_gradients(cli, first):
    proc = cli("partition", *TINY, "--mode", "train", "--batch-size", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    a = json.loads(proc.stdout)
    split = a["rows"][3]
    assert split["kind"] == "split" and split["down_bytes"] == split["up_bytes"] - 8  # gradient back, labels up
    assert "forward + backward" in a["mobile_source"]


def test_plot_is_a_png_and_needs_matplotlib(cli, first, tmp_path):
    png = tmp_path / "p.png"
    proc = cli("partition", *TINY, "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    blocker = tmp_path / "block" / "matplotlib"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('matplotlib is not installed')\n")
    proc = cli("partition", *TINY, "--plot", str(tmp_path / "q.png"), env=pythonpath_first(blocker.parent))
    assert proc.returncode == 2
    assert proc.stderr.strip() == "edgebench: error: --plot: the plot needs matplotlib: pip install 'edgebench[report]'"


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("--network", "pigeon"), "--network"),
        (("--objective", "speed"), "--objective"),
        (("--mode", "serve"), "--mode"),
        (("--sweep-bandwidth", "fast"), "--sweep-bandwidth"),
        (("--transfer-dtype", "fp8"), "--transfer-dtype"),
        (("--cloud-speedup", "0"), "--cloud-speedup"),
        (("--cloud-trial", "nope"), "--cloud-trial"),
        (("--plot", "out.jpg"), "--plot"),
        (("--depth", "0"), "--depth"),
        (("--estimate-energy", "lots"), "--estimate-energy"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(cli, first, args, flag):
    proc = cli("partition", *TINY, *args)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert proc.stderr.startswith(f"edgebench: error: {flag}: ")


def test_import_brings_trials_with_series_and_refuses_duplicates(cli, first, tmp_path):
    other = tmp_path / "server.sqlite"
    proc = cli("import", str(cli.store), store=other)
    assert proc.returncode == 0, proc.stderr
    with Store(cli.store) as here:
        ids = [t.trial_id for t in here.trials()]
    assert proc.stdout.startswith(f"imported {len(ids)} trials from ")
    with Store(other) as there:
        assert [t.trial_id for t in there.trials()] == ids
        assert there.series(ids[0], "spans") is not None
    again = cli("import", str(cli.store), store=other)
    assert again.returncode == 0
    assert again.stderr.strip() == f"refused {len(ids)} trials already in {other}: " + ", ".join(ids[:5]) + (
        " ..." if len(ids) > 5 else ""
    )
    # A trial from the imported store serves as the server's costs.
    cloud = cli("partition", *TINY, "--cloud-trial", ids[0], "--json", store=other)
    assert cloud.returncode == 0, cloud.stderr
    a = json.loads(cloud.stdout)
    assert a["cloud_source"].startswith(f"trial {ids[0]}")


def _refusing_writes(path):
    """A store that opens and verifies but whose inserts fail, as a disk that fills up during the trial."""
    import sqlite3

    with Store(path):
        pass
    db = sqlite3.connect(path)
    db.execute("CREATE TRIGGER full BEFORE INSERT ON trials BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    db.commit()
    db.close()
    return path


def test_the_traced_trial_goes_through_the_launch_path_and_is_rescued_when_the_store_fails(cli, tmp_path):
    full = _refusing_writes(tmp_path / "full.sqlite")
    proc = cli("partition", *TINY, "--json", store=full)
    assert proc.returncode == 1, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("edgebench: error: --store: ") and "database or disk is full" in line
    (kept,) = tmp_path.glob("edgebench-unsaved-*.json")
    assert f"`edgebench import {kept}`" in line
    elsewhere = tmp_path / "fixed.sqlite"
    assert cli("import", str(kept), store=elsewhere).returncode == 0
    with Store(elsewhere) as store:
        (trial,) = store.trials()
        assert trial.trace_summary.granularity == "layers" and store.series(trial.trial_id, "spans") is not None
    again = cli("partition", *TINY, "--json", store=elsewhere)  # the rescued trial serves the analysis
    assert again.returncode == 0 and "running one" not in again.stderr


def test_a_damaged_store_is_refused_before_the_traced_trial_runs(cli, tmp_path):
    bad = tmp_path / "bad.sqlite"
    with Store(bad):
        pass
    bad.write_bytes(bad.read_bytes()[:100] + b"\xab" * 4000)
    proc = cli("partition", *TINY, "--json", store=bad)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("edgebench: error: --store: ")
    assert not list(tmp_path.glob("edgebench-unsaved-*"))

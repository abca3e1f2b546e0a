"""``edgebench study`` through the real command line: the TX2 paper's quick study on this machine (every observation
gets a verdict or a reason; the CPU-only ones from measured trials), and on the Jetson TX2 fixture tree (the GPU and
power observations decided from its sensors, never from an estimate)."""

import json

from tests.conftest import json_out

TX2_IDS = [f"O{i}" for i in range(1, 13)]
DECIDED = {"holds", "does not hold", "inconclusive"}


def by_id(report):
    return {v["observation"]["id"]: v for v in report["verdicts"]}


def test_study_tx2_quick_on_this_machine(cli, tmp_path):
    html = tmp_path / "study.html"
    proc = cli("study", "tx2", "--quick", "--json", "--html", str(html), timeout=400)
    assert proc.returncode == 0, proc.stderr
    report = json_out(proc)  # --json: nothing but the object on stdout
    verdicts = by_id(report)
    # three batch sizes of two models, each configuration twice (each repeat a fresh worker process)
    assert list(verdicts) == TX2_IDS and report["trials_ok"] == report["trials"] == 12
    for v in verdicts.values():
        assert v["outcome"] in DECIDED | {"cannot be checked here"} and v["reason"]
        for e in v["evidence"]:
            assert e["kind"] == "measured" and e["ci_low"] <= e["estimate"] <= e["ci_high"] and e["trial_ids"]
    # what a CPU-only machine can check is decided from its trials, unless other processes disturbed them (a shared
    # machine): then the verdict is inconclusive and says how many trials were disturbed, never decided from them
    for oid in ("O9", "O10", "O11"):
        v = verdicts[oid]
        assert v["outcome"] in DECIDED, v
        assert v["outcome"] != "inconclusive" or "trials disturbed" in v["reason"] or v["evidence"], v
    # saved activations grow with the batch, parameters do not (or the trials were disturbed, and it says so)
    assert verdicts["O9"]["outcome"] == "holds" or "trials disturbed" in verdicts["O9"]["reason"]
    # periodicity and per-core differences, unless other processes kept every core busy throughout (then said so)
    for oid in ("O2", "O4"):
        v = verdicts[oid]
        # or, on a loaded machine (the suite's other worker), no undisturbed trial whose ticks resolved its cores
        assert v["outcome"] in DECIDED or any(
            why in v["reason"]
            for why in (
                "busy throughout every trial",
                "no trial measured two or more cores",
                "no trial's utilization could be correlated at its step period: ",  # then why, from the trials
            )
        ), (v["outcome"], v["reason"])
    # no GPU and no power sensor here: those are "cannot be checked", never decided from the utilization estimate
    for oid, word in (("O1", "GPU"), ("O3", "GPU"), ("O5", "GPU"), ("O6", "rails"), ("O7", "power"), ("O8", "power")):
        assert verdicts[oid]["outcome"] == "cannot be checked here" and word in verdicts[oid]["reason"]
    page = html.read_text()
    assert "study-verdicts" in page and "Figure 9" in page and "http://" not in page.split("<script>")[0]
    figures = json.loads(page.split('id="figures">')[1].split("</script>")[0])
    assert figures  # the counterparts drawn (memory by category, throughput, per-core utilization...)
    # the same study again resumes its stored trials (none rerun) and prints the table
    again = cli("study", "tx2", "--quick", "--resume")
    assert again.returncode == 0, again.stderr
    assert "O12" in again.stdout and "O10" in again.stdout and "trials already stored" in again.stderr


def test_study_tx2_on_the_jetson_fixture_decides_no_gpu_rail_or_power_observation(cli, sysfs_tree, monkeypatch):
    """Recorded: a trial read through --sysfs-root (a copied tree whose sensors never change) produced "O1 holds",
    "O6 holds", "O3 does not hold", "O5 does not hold" from the tree's constant 31.2% GPU load and constant rails.
    Replay is not a device: every observation on what the tree's files say gets no verdict, and says why."""
    monkeypatch.setenv("EDGEBENCH_FAKE_STEP_MS", "60")  # 10 steps: the 0.4 s CPU accounting needs
    proc = cli("study", "tx2", "--quick", "--json", "--backend", "fake", "--no-store",
               "--sysfs-root", str(sysfs_tree("jetson_tx2")), timeout=400)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    verdicts = by_id(json_out(proc))
    # GPU load (O1, O3, O5), rails (O6), power (O7, O8) and the cores' counters (O2, O4) are the tree's files
    for oid in ("O1", "O2", "O3", "O4", "O5", "O6", "O7", "O8"):
        v = verdicts[oid]
        assert v["outcome"] == "cannot be checked here", v
        assert v["reason"].startswith("replayed tree: sensors constant") and "jetson_tx2" in v["reason"], v
        assert not v["evidence"]  # the intervals of constants are not shown as if they were evidence

"""Time to accuracy on real data that ships offline (MNIST digits, Shakespeare)."""

import pytest

from tests.conftest import json_out


def test_lenet_reaches_accuracy_on_held_out_digits_end_to_end(cli):
    proc = cli(
        "run", "--model", "lenet", "--data", "mnist", "--until-accuracy", "0.9", "--eval-every", "25",
        "--max-steps", "400", "--infer-steps", "1", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    r = json_out(proc)
    assert r["status"] == "ok" and r["accuracy"]["reached"] is True and r["trial"]["data"] == "mnist"
    assert r["stopped_by"].startswith("accuracy: ") and r["accuracy"]["final"] >= 0.9
    assert r["accuracy"]["steps"] == r["trial"]["warmup"] + r["latency"]["measured_steps"]
    assert r["latency"]["measured_steps"] % 25 == 0
    assert r["accuracy"]["samples"] == 32 * r["accuracy"]["steps"]
    assert 0 < r["accuracy"]["eval_time_s"] < r["accuracy"]["time_s"]
    assert r["accuracy"]["energy_j"] is None  # no power sensor on this machine
    assert r["accuracy"]["curve"][-1]["accuracy"] == r["accuracy"]["final"]


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--until-accuracy", "0.9"], "--until-accuracy"),
        (["--data", "mnist", "--until-accuracy", "1.5"], "--until-accuracy"),
        (["--model", "dqn", "--data", "mnist"], "--data"),
        (["--data", "imagenet"], "--data"),
        (["--model", "resnet50", "--preset", "nope"], "--preset"),
        (["--memory-budget", "lots"], "--memory-budget"),
        (["--max-steps", "0"], "--max-steps"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, args, flag):
    proc = cli("run", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"edgebench: error: {flag}:"), proc.stderr
    assert not cli.store_path.exists()

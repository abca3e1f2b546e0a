"""Cold start through the command line: run, show and the trials CSV carry the model's load and the first step;
a trial that fails after its first step keeps it; torch's own load section.  The worker-level half is in
tests/unit/agents/python/test_cold_start.py."""

from __future__ import annotations

import csv
import io
import json

import pytest

from edgebench.backends.fake import session as fake_session

FAKE = ("--backend", "fake", "--model", "mnist_mlp", "--infer-steps", "0", "--idle", "0")


def test_run_show_and_the_trials_csv_carry_it(cli):
    ran = cli("run", *FAKE, "--steps", "3", "--warmup", "1", "--json")
    assert ran.returncode == 0, ran.stderr
    record = json.loads(ran.stdout)
    cold = record["cold_start"]
    assert cold["first_step_mode"] == "train" and cold["first_step_counted_as"] == "warmup"
    assert cold["first_step_ms"] > 0 and cold["model_load_s"] > 0
    shown = cli("show", record["trial_id"])
    assert shown.returncode == 0, shown.stderr
    assert "cold start: model load" in shown.stdout and "cold start: first step" in shown.stdout
    assert "the first training step (warm-up step 0)" in shown.stdout
    exported = cli("export", "--format", "csv")
    assert exported.returncode == 0, exported.stderr
    row = next(csv.DictReader(io.StringIO(exported.stdout)))
    assert float(row["cold_start.first_step_ms"]) == pytest.approx(cold["first_step_ms"])
    assert row["cold_start.model_load_what"].startswith("fake:")


def test_a_trial_that_fails_after_its_first_step_keeps_it(cli, monkeypatch):
    monkeypatch.setenv(fake_session.FAIL_AT_ENV, "2")
    ran = cli("run", *FAKE, "--steps", "5", "--warmup", "1", "--json")
    record = json.loads(ran.stdout)
    assert record["status"] == "crashed"
    assert record["cold_start"]["first_step_ms"] > 0 and record["cold_start"]["model_load_s"] > 0


def test_torch_times_building_the_task_and_an_extra_first_step_without_warmup(cli):
    ran = cli("run", "--model", "lenet", "-b", "4", "--steps", "2", "--warmup", "0", "--infer-steps", "0",
              "--idle", "0", "--json")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    record = json.loads(ran.stdout)
    cold = record["cold_start"]
    assert cold["model_load_what"].startswith("torch: the task built")
    assert cold["model_load_peak_memory_bytes"] > 0 and cold["model_load_added_memory_bytes"] > 0
    # no warm-up, and torch categorizes memory on a step: an extra plain step before it is the first step
    assert cold["first_step_counted_as"] == "extra" and cold["first_step_mode"] == "train"
    assert record["latency"]["measured_steps"] == 2 and record["memory"]["by_category"] is not None

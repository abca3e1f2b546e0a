"""Limits that protect users from themselves: refused when they cannot be honoured, noted when they distort."""

from __future__ import annotations

import os
import time

from tests.conftest import json_out

SAMPLER_FLOOR = "shorter than the sampler can keep (each sample reads /proc and /sys; at least 1ms, 10ms by default)"


def one_line(proc, expected: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"edgebench: error: {expected}"


def test_a_sampler_period_it_cannot_keep_is_refused_by_run_sweep_and_monitor(cli, tmp_path):
    one_line(cli("run", "--interval", "1us", "--no-store"), f"--interval: 0.001 ms is {SAMPLER_FLOOR}")
    one_line(cli("sweep", "--set", "sample_interval=0.5ms", "--dry-run"),
             f"--set sample_interval: 0.5 ms is {SAMPLER_FLOOR}")  # fmt: skip
    one_line(
        cli("monitor", "--out", str(tmp_path / "m"), "--interval", "100us"), f"--interval: 0.1 ms is {SAMPLER_FLOOR}"
    )
    assert not cli.store_path.exists()


def test_threads_far_beyond_the_cores_are_refused_by_run_and_sweep(cli):
    cores = len(os.sched_getaffinity(0))
    refusal = f"more than 4 per core ({4 * cores}); give at most that, or more cores"
    proc = cli("run", "--threads", "10000", "--no-store")
    one_line(proc, f"--threads: 10000 threads on {cores} core{'s' if cores > 1 else ''} is {refusal}")
    proc = cli("sweep", "--set", "threads=[1, 10000]", "--dry-run")
    one_line(proc, f"--set threads[1]: 10000 threads on {cores} core{'s' if cores > 1 else ''} is {refusal}")


def test_threads_beyond_one_core_are_run_warned_and_recorded_with_their_number(cli):
    # the launcher's warning and the record's note are the point: the fake backend's steps
    fake = ("--backend", "fake", "--cores", "0x1", "--threads", "3", "--steps", "2", "--warmup", "0",
            "--infer-steps", "0")  # fmt: skip
    proc = cli("run", *fake, "--json")
    assert proc.returncode == 0, proc.stderr
    note = "3 threads on 1 core: 2 wait for a core at any moment, so step times include their queueing"
    assert proc.stderr.strip().splitlines()[0] == f"edgebench: warning: --threads: {note}"
    notes = json_out(proc)["measurement_notes"]  # and, on a 2-step window, that the worker CPU is withheld
    assert notes[0] == note and all("worker CPU of the measured steps withheld" in n for n in notes[1:])
    proc = cli("run", *fake)
    assert "distorted by" in proc.stdout and "3 threads on 1 core" in " ".join(proc.stdout.split())


def test_a_huge_grid_is_refused_with_its_size_before_it_is_planned(cli):
    sizes, seeds = ",".join(map(str, range(1, 1001))), ",".join(map(str, range(1000)))
    started = time.monotonic()
    proc = cli("sweep", "--set", f"batch_sizes=[{sizes}]", "--set", f"seed=[{seeds}]", "--dry-run")
    assert time.monotonic() - started < 60  # expanding it took minutes and gigabytes
    one_line(proc, "--max-trials: this sweep is 1,000,000 trials (1000 seed x 1000 batch_sizes), more than 10,000: "
                   "narrow an axis, or give --max-trials 1000000 to plan it anyway")  # fmt: skip
    grid = ("sweep", "--set", "batch_sizes=[1, 2, 3]", "--set", "seed=[0, 1, 2, 3]", "--dry-run")
    refusal = "this sweep is 12 trials (4 seed x 3 batch_sizes), more than 10: narrow an axis, or give --max-trials 12"
    one_line(cli(*grid, "--max-trials", "10"), f"--max-trials: {refusal} to plan it anyway")
    proc = cli(*grid, "--max-trials", "12")
    assert proc.returncode == 0 and ": 12 trials" in proc.stdout

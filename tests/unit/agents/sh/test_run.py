"""The sh agent's reading of a tool's output: what a summary pattern gives, and nothing it does not."""

from __future__ import annotations

from edgebench.agents.sh.run import DeviceRun, steps_from_output
from edgebench.backends.command.patterns import step_pattern
from edgebench.measure.trial import build_result
from edgebench.records.events import Done, Ready
from edgebench.records.trial import Trial
from tests.paths import FIXTURES


def test_the_mnn_demos_mean_invents_no_step_count_and_no_batch_size():
    """Recorded: `--step-pattern mnn-train-demo` stored batch 32 and n 20 (edgebench's defaults), which the binary
    never printed; it prints its mean and its batch size (8), and no count."""
    lines = (FIXTURES / "command" / "mnn_train_demo.out").read_text().splitlines()
    run = DeviceRun(clock="uptime", go_ns=1_000_000_000, exit_ns=30_000_000_000, status=0,
                    lines=[(2_000_000_000 + i, line) for i, line in enumerate(lines)],
                    stamp_text=(FIXTURES / "command" / "train_stamp.result").read_text())  # fmt: skip
    trial = Trial(command="./runTrainDemo.out MnistBenchmark data 8 MobileNetV2", step_pattern="mnn-train-demo",
                  model="MobileNetV2")  # fmt: skip
    steps, told, why = steps_from_output(trial, step_pattern("mnn-train-demo"), run)
    assert why is None and len(steps) == 1 and told["step_count"] == "not printed" and told["batch_size"] == 8
    r = build_result(trial, "t1", [Ready(env=told), *steps, Done()], None, {})
    assert r.trial.batch_size == 8  # the batch the demo printed it ran, not edgebench's default 32
    assert r.latency.step_ms.mean == 1843.25 and r.latency.step_ms.n == 1  # one figure: the tool's mean
    assert r.latency.measured_steps is None  # how many steps it averages was never printed
    assert any("not how many steps" in n for n in r.measurement_notes)
    assert r.latency.throughput_sps == 8 * 1e3 / 1843.25


def test_a_program_not_found_in_the_work_folder_says_to_push_it(tmp_path):
    """Tried: `run --command ./bench.sh` beside bench.sh said only `sh: 1: ./bench.sh: not found`; the command runs
    in the trial's work folder, which holds only what --push copied."""
    from edgebench.agents.sh.run import NOT_FOUND_STATUS, not_found_hint
    from edgebench.backends.command.push import parse_push

    def hint(command: str, pushed: tuple[str, ...] = (), status: int = NOT_FOUND_STATUS) -> str:
        return not_found_hint(command, status, pushed)

    assert hint("./bench.sh --steps 3").endswith("--push bench.sh copies it there)")
    assert "--push bin/train" in hint("'bin/train' -n 2")
    assert hint("./bench.sh", pushed=("bench.sh",)) == ""  # pushed: something else is missing (its interpreter)
    assert hint("./tools/../bench.sh", pushed=("bench.sh",)) == ""  # the same path, as a push's REMOTE reads it
    (tmp_path / "b.sh").write_text("")
    assert hint("./bench.sh", pushed=(parse_push(f"{tmp_path / 'b.sh'}:bench.sh")[1],)) == ""  # LOCAL:REMOTE
    assert hint("python3 train.py") == hint("/opt/x/bench") == ""  # on PATH, or an absolute path
    assert hint("./bench.sh", status=1) == ""  # it ran, and failed

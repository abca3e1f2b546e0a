"""ExecuTorch's device tools through ``--command``: ``executor_runner`` and the CIFAR training example, replayed from
their recorded output (``tests/fixtures/command``, formats cited in its README) by a stand-in binary under a real
device shell, with the ETDump the runner wrote read back into layer spans."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from edgebench.agents.sh.run import run_command_trial
from edgebench.host.sysfs import SysFS
from edgebench.records.spans import SpanTable
from edgebench.records.trial import Trial
from edgebench.targets.shell import LocalShell
from tests.paths import FIXTURES

RECORDED = FIXTURES / "command"

#: A stand-in for a device's binary that replays a recorded run (and writes its ETDump).
REPLAY = RECORDED / "replay_tool.sh"


def _shell(tmp_path: Path) -> LocalShell:
    """mksh, Android's shell, with the device's work folder apart from the files pushed into it."""
    if shutil.which("mksh") is None:
        pytest.fail("mksh (Android's shell) is missing: apt-get install -y mksh")
    (tmp_path / "device").mkdir(exist_ok=True)
    return LocalShell(("mksh",), workdir=tmp_path / "device")


def _trial(tmp_path: Path, recorded: str, pattern: str, **extra: object) -> Trial:
    push = (f"{REPLAY}:replay.sh", str(RECORDED / recorded), str(FIXTURES / "executorch" / "lenet_xnnpack.etdp")
            + ":recorded.etdp")  # fmt: skip
    values = dict(model="lenet_xnnpack", command=f"sh replay.sh {recorded}", push=push, step_pattern=pattern, warmup=1,
                  steps=4, idle_s=0, sample_interval_ms=20.0)  # fmt: skip
    return Trial(**{**values, **extra})


def test_executor_runner_iterations_are_inference_steps_of_its_own_times_with_etdump_spans(tmp_path):
    trial = _trial(tmp_path, "executorch_runner.out", "executorch-runner", mode="infer", trace="layers")
    bundle = run_command_trial(trial, _shell(tmp_path), sysfs=SysFS("/"))
    assert bundle.failure is None, bundle.failure
    steps = [e for e in bundle.events if e.event == "step"]
    assert [s.phase for s in steps] == ["infer_warmup"] + ["infer"] * 4
    own_ms = [0.114481, 0.044095, 0.035162, 0.033460, 0.033981]  # the runner's Iteration lines
    assert [round((s.end_ns - s.start_ns) / 1e6, 6) for s in steps] == own_ms
    env = bundle.events[0].env
    assert "the tool's own" in env["step_times"] and env["step_groups"]["iterations"] == [5.0] * 5
    assert bundle.spans_json is not None and "command_spans" not in env
    spans = SpanTable.from_json(bundle.spans_json)
    assert spans.names[0] == "lenet_xnnpack" and "Convolution (NHWC, F32) IGEMM #1" in spans.names
    for step in steps:  # each run placed inside its step
        inside = (spans.start_ns >= step.start_ns) & (spans.end_ns <= step.end_ns)
        assert (spans.label[inside] == 0).sum() == 1
    assert not (tmp_path / "device" / "lenet.etdp").exists()  # read back and removed from the device


def test_a_runner_built_without_the_event_tracer_keeps_its_steps_and_says_why_no_spans(tmp_path):
    recorded = tmp_path / "no_tracer.out"
    lines = (RECORDED / "executorch_runner.out").read_text().splitlines()
    recorded.write_text("\n".join(line for line in lines if "ETDump written" not in line) + "\n")
    trial = _trial(tmp_path, "no_tracer.out", "executorch-runner", mode="infer", trace="layers",
                   push=(f"{REPLAY}:replay.sh", str(recorded)))  # fmt: skip
    bundle = run_command_trial(trial, _shell(tmp_path), sysfs=SysFS("/"))
    assert bundle.failure is None and bundle.spans_json is None
    assert "EXECUTORCH_ENABLE_EVENT_TRACER" in bundle.events[0].env["command_spans"]


def test_the_cifar_training_example_gives_sampled_training_steps_with_their_loss(tmp_path):
    trial = _trial(tmp_path, "executorch_train_cifar.out", "executorch-train-cifar", steps=5)
    bundle = run_command_trial(trial, _shell(tmp_path), sysfs=SysFS("/"))
    assert bundle.failure is None, bundle.failure
    steps = [e for e in bundle.events if e.event == "step"]
    assert [s.phase for s in steps] == ["warmup"] + ["train"] * 5
    assert [s.loss for s in steps] == [2.3021, 2.2874, 2.2516, 2.1432, 2.0189, 1.9987]
    assert [round((s.end_ns - s.start_ns) / 1e6, 2) for s in steps] == [41.27, 40.93, 42.08, 41.55, 41.12, 41.79]
    assert bundle.events[0].env["step_groups"]["batch"][:2] == [100.0, 200.0]

"""ExecuTorch on a phone, through Debian's real ``adb`` client and an emulated adbd (``tests/adbd.py``): the Python
backend where the phone's Python has the runtime, and ``executor_runner`` through ``--command`` where it has none
(a stand-in replaying the recorded run of ``tests/fixtures/command/executorch_runner.out`` and its ETDump)."""

from __future__ import annotations

from edgebench.launch.trial import run_trial
from edgebench.records.spans import SpanTable
from edgebench.records.trial import Trial
from edgebench.targets import open_target
from edgebench.targets.named import TargetConfig
from tests.adbd import adbd_sim  # noqa: F401  (the session fixture)
from tests.conftest import require_executorch
from tests.paths import FIXTURES


def _phone_target(adbd_sim, name: str, *options: str):  # noqa: F811
    phone = adbd_sim.phone(name, *options)
    return phone, open_target(name, named={name: TargetConfig(name=name, **phone.target_config())})


def test_the_python_backend_runs_on_a_phone_whose_python_has_the_runtime(adbd_sim):  # noqa: F811
    require_executorch()
    # A rooted phone's shell may enter /root, where this machine's Python (pyenv) lives: the phone's Python here.
    _, target = _phone_target(adbd_sim, "rooted", "--rooted")
    try:
        trial = Trial(model="lenet", backend="executorch", mode="infer", batch_size=1, steps=5, warmup=1, threads=1,
                      idle_s=0, sample_interval_ms=50.0)  # fmt: skip
        run = run_trial(trial, target=target)
    finally:
        target.close()
    assert run.result.ok, run.result.reason
    assert run.result.device.executorch and run.result.latency.step_ms.n == 5


def test_executor_runner_on_a_phone_without_python_gives_steps_and_etdump_spans(adbd_sim, tmp_path):  # noqa: F811
    phone, target = _phone_target(adbd_sim, "plain")
    recorded, executorch = FIXTURES / "command", FIXTURES / "executorch"
    push = (f"{recorded / 'replay_tool.sh'}:executor_runner", str(recorded / "executorch_runner.out"),
            f"{executorch / 'lenet_xnnpack.etdp'}:recorded.etdp", str(executorch / "tiny_xnnpack.pte"))  # fmt: skip
    trial = Trial(model="lenet_xnnpack", command="sh executor_runner executorch_runner.out", push=push,
                  step_pattern="executorch-runner", mode="infer", trace="layers", steps=4, warmup=1, idle_s=0,
                  sample_interval_ms=50.0)  # fmt: skip
    try:
        run = run_trial(trial, target=target)
    finally:
        target.close()
    assert run.result.ok, run.result.reason
    assert run.result.latency.step_ms.n == 4 and run.spans_json is not None
    spans = SpanTable.from_json(run.spans_json)
    assert "Convolution (NHWC, F32) IGEMM #1" in spans.names
    assert not (phone.workdir / "lenet.etdp").exists()

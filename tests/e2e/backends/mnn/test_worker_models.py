"""The MNN worker measures MNN alone: torch builds and exports the model in a child process, and the worker, which
never imports torch, trains on the same batch at every step as the torch trial does.  Also: where the trial's cores
reach MNN (its ``CPU_CORE_IDS`` hint) and where only the process affinity applies.  Whole models through the real
MNN (conversion, sessions, the worker or the probe in a child process: seconds to tens of seconds each), so apart
from the quick unit tests in tests/unit/backends/mnn/test_worker.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.conftest import require_mnn

_WORKER_LIFE = textwrap.dedent(
    """
    import json, sys
    from edgebench.backends.mnn.session import MnnSession
    from edgebench.backends.mnn.trace import recorder_for
    from edgebench.records.trial import Trial

    seen = {}
    train = MnnSession(Trial(model="lenet", backend="mnn", batch_size=4, threads=1, data="mnist", steps=3))
    seen["train_env"] = train.env["mnn_worker_imported_torch"]
    recorder = recorder_for(train)
    recorder.start()
    losses = [train.train_step() for _ in range(4)]
    recorder.stop()
    recorder.remove()
    recorder.table()
    accuracy = train.evaluate()
    train.to_inference()
    train.infer_step()
    infer = MnnSession(Trial(model="lenet", backend="mnn", mode="infer", batch_size=2, threads=1, precision="int8",
                             trace="layers"))
    recorder = infer.trace_recorder()
    recorder.ensure_costs(infer.infer_step)
    recorder.start()
    infer.infer_step()
    recorder.stop()
    recorder.table()
    seen.update(losses=losses, accuracy=accuracy, int8=infer.quantization["kind"], torch="torch" in sys.modules)
    print(json.dumps(seen))
    """
)


def test_the_measuring_worker_never_imports_torch(tmp_path):
    """A whole MNN life in one fresh interpreter, as the worker lives it (real data, its evaluation, a training
    trace, an int8 inference with the layer trace): torch is never imported there, the child imported it."""
    require_mnn()
    script = tmp_path / "worker_life.py"
    script.write_text(_WORKER_LIFE)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["torch"] is False and seen["train_env"] is False
    assert all(np.isfinite(seen["losses"])) and 0.0 <= seen["accuracy"] <= 1.0 and seen["int8"] == "full"


def test_each_step_draws_the_torch_trials_batch():
    """The replayed sampler gives the torch task's indices step by step, across an epoch boundary (the MNIST
    training digits (4,000) at batch 256 are 15 steps an epoch), and the arrays are the torch task's."""
    require_mnn()
    from edgebench.backends.mnn.prepare import torch_task
    from edgebench.backends.mnn.session import MnnSession
    from edgebench.records.trial import Trial

    trial = Trial(model="lenet", backend="mnn", batch_size=256, threads=1, data="mnist", steps=20, warmup=2)
    session = MnnSession(trial)
    _, _, task = torch_task(trial)
    assert np.array_equal(session.inputs, task.inputs.numpy()) and np.array_equal(session.targets, task.targets)
    assert all(np.array_equal(ours, theirs.numpy()) for ours, theirs in zip(session.data, task.data, strict=True))
    for _ in range(trial.warmup + trial.steps):
        assert np.array_equal(session.sampler.next(), task.sampler.next().numpy())
    assert session.sampler.epochs == task.sampler.epochs == 1
    with pytest.raises(RuntimeError, match="--max-steps"):  # the orders cover the trial's steps, no more
        for _ in range(20):
            session.sampler.next()


def test_a_trials_cores_reach_mnn_and_the_env_says_whether_they_apply():
    """The hint is given to the Interpreter; on a machine without cpufreq core groups (this CI's VM) MNN drops it,
    and the env says the process affinity is what applies."""
    require_mnn()
    import os

    from edgebench.backends.mnn import runtime
    from edgebench.backends.mnn.session import MnnSession
    from edgebench.records.trial import Trial

    core = sorted(os.sched_getaffinity(0))[0]
    session = MnnSession(Trial(model="lenet", backend="mnn", mode="infer", batch_size=2, threads=1, cores=(core,)))
    env = session.env
    assert env["mnn_cpu_core_ids_hint"] == [core] and env["mnn_cpu_groups"] == runtime.cpu_groups()
    expected = runtime.core_hint((core,), runtime.cpu_groups(), "infer")[1]
    assert env["mnn_cores"] == expected
    if not runtime.cpu_groups():
        assert env["mnn_cores"].startswith("process affinity")
    session.infer_step()
    train = MnnSession(Trial(model="lenet", backend="mnn", batch_size=2, threads=1, cores=(core,)))
    assert train.env["mnn_cpu_core_ids_hint"] is None and "training executor" in train.env["mnn_cores"]

"""Probe which zoo models ExecuTorch lowers and runs, for inference and for training, and record why not.

Each model is probed in its own process with a timeout (lowering a large training graph takes minutes, and a kernel
may abort): inference lowers the model with XNNPACK at batch 1, runs it once and compares its logits with torch's
(agreeing within 1e-3 of the largest logit); training lowers the joint graph at batch 2 and takes two steps with the
runtime's SGD, which must give finite losses and change the weights.  Models are probed at their smallest preset
(CIFAR-10's 32x32 where they have one): whether an op lowers does not depend on the input's size, and the portable
kernels take minutes per step at 224x224.  The record (``support.json`` beside this module, read by
:mod:`.support` without importing anything) names the ExecuTorch and torch versions and the input of each model.

Run: ``python -m edgebench.backends.executorch.probe [--write] [MODEL...]``; ``--probe MODEL`` prints one JSON line.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from edgebench.backends.executorch.support import RECORD, unsupported

PROBE_TIMEOUT_S = float(os.environ.get("EDGEBENCH_EXECUTORCH_PROBE_TIMEOUT_S", "1800"))
AGREE_REL = 1e-3
_MARK = "edgebench-executorch-probe:"


def probe_input(model: str) -> tuple[int, ...]:
    from edgebench.workloads import get_workload

    workload = get_workload(model)
    presets = sorted(workload.presets, key=lambda p: math.prod(p.input_shape))
    return tuple(presets[0].input_shape) if presets else tuple(workload.input_shape)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}".strip(": ")[:300]


def probe(model: str) -> dict[str, Any]:
    """Probe ``model`` in this process (see the module's docstring)."""
    import numpy as np
    import torch

    from edgebench.backends.executorch.prepare import prepare, torch_task
    from edgebench.backends.executorch.runtime import load
    from edgebench.backends.executorch.session import Program, TrainingProgram
    from edgebench.records.trial import Trial
    from edgebench.workloads import get_workload

    workload = get_workload(model)
    shape = probe_input(model)
    entry: dict[str, Any] = {"input": list(shape), "infer": None, "train": None}
    runtime = load(1)
    for mode in ("infer", "train"):
        reason = unsupported(workload, mode)
        if reason:
            entry[mode] = reason
            continue
        batch = 1 if mode == "infer" else 2
        trial = Trial(model=model, backend="executorch", mode=mode, batch_size=batch, threads=1, input_shape=shape,
                      infer_steps=0)  # fmt: skip
        try:
            with tempfile.TemporaryDirectory(prefix="edgebench-probe-") as tmp:
                prepared = prepare(trial, Path(tmp))
                inputs = torch.from_numpy(np.load(prepared.inputs_path))
                targets = torch.from_numpy(np.load(prepared.targets_path))
            lowered = prepared.lowered
            program = Program(runtime, lowered.path, etdump=False)
            if mode == "infer":
                ours = program.call((inputs,))[0].numpy()
                with torch.no_grad():
                    theirs = torch_task(trial)[2].model.eval()(inputs).numpy()
                scale = float(np.abs(theirs).max()) or 1.0
                diff = float(np.abs(ours - theirs).max())
                entry["infer_max_abs_diff"] = diff
                if not diff <= AGREE_REL * scale:
                    entry["infer"] = f"its logits differ from torch's by {diff:.3g} (largest logit {scale:.3g})"
                continue
            training = TrainingProgram(runtime, program, lowered, workload.optimizer)
            losses = [training.step(inputs, targets)]
            before = [p.clone() for p in training.parameters]
            losses.append(training.step(inputs, targets))
            changed = sum(not torch.equal(a, b) for a, b in zip(before, training.parameters, strict=True))
            entry["train_losses"] = losses
            if not all(math.isfinite(v) for v in losses):
                entry["train"] = f"the loss is not finite ({losses})"
            elif changed == 0:
                entry["train"] = "the runtime's SGD step changed no weight"
        except Exception as exc:
            entry[mode] = _one_line(exc)
    return entry


def probe_in_child(model: str) -> dict[str, Any]:
    try:
        command = [sys.executable, "-m", "edgebench.backends.executorch.probe", "--probe", model]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"infer": None, "train": None, "not_probed": f"the probe took over {PROBE_TIMEOUT_S:g} s"}
    line = next((x for x in reversed(proc.stdout.splitlines()) if x.startswith(_MARK)), None)
    if line is None:
        last = [x for x in proc.stderr.strip().splitlines() if x.strip()]
        return {"infer": None, "train": None, "not_probed": f"exit {proc.returncode}: {last[-1] if last else ''}"}
    return json.loads(line.removeprefix(_MARK))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--probe"]:
        entry = probe(argv[1])
        print(_MARK + json.dumps(entry), flush=True)
        return 0
    import importlib.metadata

    from edgebench.registry import MODELS
    from edgebench.workloads import get_workload

    write = "--write" in argv
    names = [a for a in argv if not a.startswith("--")] or [
        n for n in MODELS.names() if get_workload(n).task == "classification"
    ]
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    version = importlib.metadata.version("executorch")
    if record.get("executorch") != version:
        record = {}
    record.update(executorch=version, torch=importlib.metadata.version("torch"))
    models = record.setdefault("models", {})
    for name in names:
        entry = probe_in_child(name)
        models[name] = entry
        print(f"{name}: infer {entry.get('infer') or 'ok'}; train {entry.get('train') or 'ok'}"
              + (f" ({entry['not_probed']})" if entry.get("not_probed") else ""), flush=True)  # fmt: skip
        if write:
            RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

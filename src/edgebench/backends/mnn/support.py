"""Which zoo models MNN accepts, for inference and for training, and MNN's reason where it refuses.

Each model is probed in its own process (MNN aborts or segfaults on some graphs): convert for inference and run
it, comparing the logits with torch's; convert ``--forTraining``, load it as a training module (its trainable
tensors must be the PyTorch parameters, :mod:`.model`) and take one SGD step, which must change the weights and
give a finite loss.  The result is recorded in ``support.json`` beside this file, with the MNN and torch versions
it was probed with, by ``python -m edgebench.backends.mnn.support --write`` (minutes: every model at its default
input); ``edgebench models`` reads the record without importing MNN, and
``tests/e2e/backends/mnn/test_probe.py`` probes a few models again and compares.

Run: ``python -m edgebench.backends.mnn.support [--write] [MODEL...]``; ``--probe MODEL`` prints one JSON line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from edgebench.workloads.spec import Workload

#: The recorded table (``{"mnn": version, "torch": version, "input": ..., "models": {name: entry}}``).
RECORD = Path(__file__).with_name("support.json")
#: Probe batch sizes: one sample for inference, two for training (batch norm needs more than one).
INFER_BATCH, TRAIN_BATCH = 1, 2
#: Inference logits of MNN and torch agree within this (absolute, relative to the logits' largest magnitude).
AGREE_REL = 1e-3
PROBE_TIMEOUT_S = float(os.environ.get("EDGEBENCH_MNN_PROBE_TIMEOUT_S", "900"))
_MARK = "edgebench-mnn-probe:"
#: Set in a probe's process (and so in its sessions' preparing children): the recorded table is what the probe
#: writes, so it must not refuse the trials the probe runs (a re-probe would record its own earlier refusal).
PROBING_ENV = "EDGEBENCH_MNN_PROBING"


def unsupported(workload: Workload, mode: str = "train") -> str | None:
    """Why the MNN backend cannot run ``workload`` in ``mode``, or None; framework-free."""
    if workload.task != "classification":
        return (
            f"{workload.name} is a {workload.task} task; the mnn backend builds classification (one input tensor, "
            "cross-entropy on logits) only"
        )
    if mode == "train" and workload.optimizer.kind != "sgd":
        return f"{workload.name} trains with {workload.optimizer.kind}; the mnn backend runs the suite's SGD only"
    return None


def refusal(model: str, mode: str) -> str | None:
    """Why an MNN trial of ``model`` in ``mode`` cannot run, or None; framework-free (trial validation asks).

    The task and optimiser decide first; then the recorded probe, where it was taken with the installed MNN.
    """
    import importlib.metadata

    from edgebench.workloads import get_workload

    workload = get_workload(model)
    reason = unsupported(workload, mode)
    if reason or not (isinstance(workload.model, str) and workload.model.startswith("edgebench.")):
        return reason
    if os.environ.get(PROBING_ENV):
        return None
    record = recorded()
    try:
        installed = importlib.metadata.version("MNN")
    except importlib.metadata.PackageNotFoundError:
        return None  # the missing package is reported on its own
    entry = (record.get("models") or {}).get(workload.name) or {}
    if record.get("mnn") == installed and entry.get("by") and entry.get(mode):  # a timed-out probe decides nothing
        return f"MNN {installed} refuses {workload.name} ({mode}): {entry[mode]}"
    return None


def probe(model: str) -> dict[str, Any]:
    """Probe ``model`` in this process (each session prepares in its own child); MNN's own prints go to stderr.  The
    torch model it is compared with is the one the session was built from (same seed, same weights, same batch)."""
    import numpy as np

    from edgebench.backends.mnn.prepare import torch_task
    from edgebench.backends.mnn.session import MnnSession
    from edgebench.records.trial import Trial
    from edgebench.workloads import get_workload

    workload = get_workload(model)
    entry: dict[str, Any] = {"infer": None, "train": None}
    if unsupported(workload, "infer"):
        reason = unsupported(workload, "infer")
        return {"infer": reason, "train": reason, "by": "edgebench"}
    entry["by"] = "mnn"
    try:
        trial = Trial(model=model, backend="mnn", mode="infer", batch_size=INFER_BATCH, threads=1)
        session = MnnSession(trial)
        mnn_out = session.outputs()
        torch_out = _torch_logits(torch_task(trial)[2].model, session.inputs)
        scale = float(np.abs(torch_out).max()) or 1.0
        diff = float(np.abs(mnn_out - torch_out).max())
        entry["infer_max_abs_diff"] = diff
        if not diff <= AGREE_REL * scale:
            entry["infer"] = f"MNN's logits differ from torch's by {diff:.3g} (largest logit {scale:.3g})"
    except Exception as exc:
        entry["infer"] = _one_line(exc)
    if unsupported(workload, "train"):
        entry["train"], entry["train_by"] = unsupported(workload, "train"), "edgebench"
        return entry
    try:
        trial = Trial(model=model, backend="mnn", batch_size=TRAIN_BATCH, threads=1, infer_steps=0)
        session = MnnSession(trial)
        torch_model = torch_task(trial)[2].model
        entry["params"] = session.params
        # Gradient flow is the question, not the recipe: at mobilenet_v2's lr of 1e-5 some updates round away in
        # float32, and weight decay or momentum would move a tensor that gets no gradient, so the probe's step is
        # plain SGD at lr 0.01: a tensor changes when MNN computed a gradient for it, unless the update is below
        # float32's resolution, which the same step in PyTorch tells (_torch_unchanged).
        import dataclasses

        settings = dataclasses.replace(
            session.workload.optimizer, lr=0.01, schedule="constant", momentum=0.0, weight_decay=0.0
        )
        session.workload = dataclasses.replace(session.workload, optimizer=settings)
        session.optimizer.momentum, session.optimizer.weight_decay = 0.0, 0.0
        before = [np.array(p.read(), copy=True) for p in session.module.parameters]
        loss = session.train_step()
        after = [np.array(p.read(), copy=True) for p in session.module.parameters]
        trainable = [i for i, p in enumerate(session.module.parameters) if p.op_type == "Trainable"]
        unchanged = [before[i] for i in trainable if np.array_equal(before[i], after[i])]
        torch_unchanged = _torch_unchanged(torch_model, session, settings.lr)
        if loss is None or not np.isfinite(loss):
            entry["train"] = f"the first training step's loss is {loss}"
        elif len(unchanged) > len(torch_unchanged):
            named = _names_of(unchanged, torch_model, torch_unchanged)
            entry["train"] = (
                f"MNN's optimizer step left {len(unchanged)} of {len(trainable)} parameter tensors unchanged where "
                f"PyTorch's same float32 step leaves {len(torch_unchanged)}"
                + (f" (no MNN gradient for {', '.join(named[:6])}{', ...' if len(named) > 6 else ''})" if named else "")
                + ": its autograd has no gradient through an op of this graph"
            )
    except Exception as exc:
        entry["train"] = _one_line(exc)
    return entry


def _torch_unchanged(torch_model: Any, session: Any, lr: float) -> set[str]:
    """The PyTorch parameters that the probe's step (plain SGD at ``lr``, float32, on the same batch) leaves
    bit-identical: a zero gradient (a channel dead at these weights), or an update below float32's resolution at
    the weight's magnitude (mobilenet_v1's deepest batch-norm scales at 224x224: gradients near 1e-6 on weights of
    1.0).  MNN may leave those unchanged too; only more unchanged tensors than these means a missing gradient."""
    import torch
    import torch.nn.functional as F

    model = torch_model.train()
    model.zero_grad(set_to_none=True)
    F.cross_entropy(model(torch.from_numpy(session.inputs)), torch.from_numpy(session.targets).long()).backward()
    out = set()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.grad is None or torch.equal(p - lr * p.grad, p):
                out.add(name)
    return out


def _names_of(values: list[Any], torch_model: Any, skip: set[str]) -> list[str]:
    """The PyTorch parameters the MNN tensors ``values`` are, where their values name one parameter alone (a
    convolution's weights; not the many batch-norm scales that all start at 1), minus ``skip``."""
    from edgebench.backends.mnn.model import _key

    owners: dict[Any, list[str]] = {}
    for name, p in torch_model.named_parameters():
        owners.setdefault(_key(p.detach().cpu().numpy()), []).append(name)
    names = [owners.get(_key(v), []) for v in values]
    return [n[0] for n in names if len(n) == 1 and n[0] not in skip]


def _torch_logits(model: Any, inputs: Any) -> Any:
    import torch

    model.eval()
    with torch.no_grad():
        return model(torch.from_numpy(inputs)).numpy()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def probe_in_subprocess(model: str, timeout_s: float = PROBE_TIMEOUT_S) -> dict[str, Any]:
    """:func:`probe` in a child process, so a crash inside MNN is a refusal with its signal, not our crash."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), PROBING_ENV: "1"}
    try:
        run = subprocess.run(
            [sys.executable, "-m", "edgebench.backends.mnn.support", "--probe", model],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=env,
        )
    except subprocess.TimeoutExpired:  # no "by": nobody refused, the probe did not finish
        return {"infer": f"probe timed out after {timeout_s:g} s", "train": f"probe timed out after {timeout_s:g} s"}
    for line in reversed(run.stdout.splitlines()):
        if line.startswith(_MARK):
            return json.loads(line[len(_MARK) :])
    tail = [line for line in run.stderr.splitlines() if line.strip()][-3:]
    why = f"the probe process died (exit {run.returncode}{', a signal' if run.returncode < 0 else ''})"
    reason = f"{why}: {' / '.join(tail)}" if tail else why
    return {"infer": reason, "train": reason, "by": "mnn"}


def recorded() -> dict[str, Any]:
    """The recorded table; empty when none was written."""
    try:
        return json.loads(RECORD.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def mnn_support(models: list[str]) -> dict[str, dict[str, str | None]]:
    """Per model, why MNN refuses it to infer and to train (None: accepted), for ``edgebench models``.

    From the task and optimiser, then the recorded probe; a model the record does not hold says so.  Never
    imports MNN or torch.
    """
    from edgebench.workloads import get_workload

    entries = recorded().get("models") or {}
    out: dict[str, dict[str, str | None]] = {}
    for name in models:
        workload = get_workload(name)
        entry = entries.get(name)
        reasons: dict[str, str | None] = {}
        for mode in ("infer", "train"):
            if entry is not None and not entry.get("by"):  # the probe itself did not finish: not MNN's refusal
                unknown = f"unknown: {entry.get(mode)} on the machine that recorded it"
            else:
                unknown = "not probed (python -m edgebench.backends.mnn.support)"
            reasons[mode] = unsupported(workload, mode) or (entry.get(mode) if entry and entry.get("by") else None)
            if reasons[mode] is None and (entry is None or not entry.get("by")):
                reasons[mode] = unknown
        out[name] = reasons
    return out


def record_source() -> str:
    """Which MNN the record was probed with, and how to probe again."""
    record = recorded()
    if not record:
        return "no probe recorded: python -m edgebench.backends.mnn.support --write"
    return f"MNN {record.get('mnn')}, probed at {record.get('input')}; python -m edgebench.backends.mnn.support --write"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--probe"]:
        from edgebench.backends.mnn.quiet import stdout_to_stderr

        with stdout_to_stderr():
            entry = probe(argv[1])
        print(_MARK + json.dumps(entry), flush=True)
        return 0
    write = "--write" in argv
    from edgebench.registry import MODELS

    names = [a for a in argv if not a.startswith("--")] or MODELS.names()
    import importlib.metadata

    record = recorded() if write else {}
    record.update({"mnn": importlib.metadata.version("MNN"), "torch": importlib.metadata.version("torch")})
    record.setdefault("models", {})
    record["input"] = f"each model's default input; batch {INFER_BATCH} (inference), {TRAIN_BATCH} (training)"
    for name in names:
        entry = probe_in_subprocess(name)
        record["models"][name] = entry
        print(f"{name}: infer {entry.get('infer') or 'ok'}; train {entry.get('train') or 'ok'}", file=sys.stderr)
        if write:
            RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if not write:
        print(json.dumps(record, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

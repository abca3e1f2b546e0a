"""Run a backend's preparation (export, convert, quantize, write the batches) in a fresh interpreter.

Why a child process: preparing needs torch (the PyTorch model, ``torch.onnx``, the MNIST loader), and a worker
that imported torch carries its resident libraries and allocator into every memory figure the trial reports.  A
backend whose runtime needs no torch (ONNX Runtime, MNN) has its worker run ``python -m MODULE TRIAL_JSON OUT_JSON``
through :func:`run_in_child`; the module's ``main`` is :func:`child_main` with its own ``prepare(trial, work_dir)``,
which writes its files into ``work_dir`` and returns a dataclass of JSON values (paths, shapes, records).  The
worker reads that document back and loads the files with numpy and its own runtime only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from edgebench.records.trial import Trial


def run_in_child(module: str, trial: Trial, work_dir: Path, what: str) -> dict[str, Any]:
    """``python -m module`` on ``trial`` with ``work_dir`` for its files; the document it wrote.

    A failure is raised here as one line: ``preparing {what} failed: `` and the child's last stderr line.
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    spec, out = work_dir / "trial.json", work_dir / "prepared.json"
    spec.write_text(trial.model_dump_json())
    proc = subprocess.run(
        [sys.executable, "-m", module, str(spec), str(out)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        raise RuntimeError(f"preparing {what} failed: {lines[-1] if lines else f'exit {proc.returncode}'}")
    return json.loads(out.read_text())


def child_main(prepare: Callable[[Trial, Path], Any], argv: list[str]) -> int:
    """The child's entry point: ``prepare`` the trial in ``TRIAL_JSON`` and write its result to ``OUT_JSON`` (files
    beside it)."""
    spec_path, out_path = argv
    trial = Trial.model_validate_json(Path(spec_path).read_text())
    prepared = prepare(trial, Path(out_path).parent)
    Path(out_path).write_text(json.dumps(asdict(prepared)))
    return 0

"""Run a backend's preparation (export, convert, quantize, write the batches) in a fresh interpreter.

Why a child process: preparing needs torch (the PyTorch model, ``torch.onnx``, the MNIST loader), and a worker
that imported torch carries its resident libraries and allocator into every memory figure the trial reports.  A
backend whose runtime needs no torch (ONNX Runtime, MNN) has its worker run ``python -m MODULE TRIAL_JSON OUT_JSON``
through :func:`run_in_child`; the module's ``main`` is :func:`child_main` with its own ``prepare(trial, work_dir)``,
which writes its files into ``work_dir`` and returns a dataclass of JSON values (paths, shapes, records).  The
worker reads that document back and loads the files with numpy and its own runtime only.

What a preparation made is kept in the derived-files cache (:func:`cached_preparation`), keyed by everything that
decides it: a sweep over cores, threads or frequencies (the MNN suite's), a trial's repeats and a second trial of
the same model prepare once, and skip the child (its torch import, the export, the conversion) after that.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from edgebench.records.trial import DEFAULT_MAX_STEPS, Trial


def run_in_child(module: str, trial: Trial, work_dir: Path, what: str) -> dict[str, Any]:
    """``python -m module`` on ``trial`` with ``work_dir`` for its files; the document it wrote.

    A failure is raised here as one line: ``preparing {what} failed: `` and the child's last stderr line.
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    key = preparation_key(module, trial)
    if key is not None:
        return cached_preparation(key, work_dir, lambda: _in_child(module, trial, work_dir, what))
    return _in_child(module, trial, work_dir, what)


#: Trial fields that place, time or watch a trial (its layer trace too: the runtime records it, from the same files)
#: but do not change what its preparation makes.
PLACEMENT_FIELDS = frozenset({"threads", "cores", "cores_mask", "freq_khz", "sample_interval_ms", "timeout_s",
                              "idle_s", "estimate_energy", "counters", "sampler", "repeats", "trace",
                              "memory_budget_bytes"})  # fmt: skip
#: How long a trial runs: the preparation reads it only through :func:`preparation_duration` (a training trial's
#: draws from a dataset, and whether it has inference passes to prepare a program for).
DURATION_FIELDS = frozenset({"steps", "warmup", "min_time_s", "max_time_s", "target_ci_pct", "max_steps",
                             "until_accuracy", "eval_every", "infer_steps"})  # fmt: skip
#: The package's folders a preparation's files depend on: the models, their export and graph code, every backend's
#: preparation, the workloads' presets and the datasets that make the batches.
PREPARING_SOURCES = ("zoo", "graph", "backends", "workloads", "data")
#: The packages a preparation's files depend on (a version not installed is left out of the key).
PREPARING_PACKAGES = ("torch", "onnx", "onnxruntime", "MNN", "executorch", "ai-edge-litert", "litert-torch")
#: The preparations that make something for a training trial's inference passes (ExecuTorch lowers an inference
#: program for them); the others prepare the same files with or without them.
INFER_PASS_PREPARATIONS = frozenset({"edgebench.backends.executorch.prepare"})


def preparation_key(module: str, trial: Trial) -> str | None:
    """The cache key of ``module``'s preparation of ``trial``; None where it cannot be cached: a model or data of the
    user's (their code or file may change under the same name)."""
    from edgebench.registry import DATASETS

    if trial.model_file is not None or ":" in trial.model or "/" in trial.model:
        return None
    if trial.data is not None and trial.data not in DATASETS:
        return None
    from edgebench.graph import cache

    digest = hashlib.sha256(module.encode())
    fields = {k: v for k, v in trial.model_dump(mode="json").items() if k not in PLACEMENT_FIELDS | DURATION_FIELDS}
    fields.update(preparation_duration(module, trial))
    digest.update(json.dumps(fields, sort_keys=True).encode())
    digest.update(cache.fingerprint(PREPARING_SOURCES).encode())
    for package in PREPARING_PACKAGES:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            digest.update(f"{package}=={importlib.metadata.version(package)}".encode())
    return f"{module.rsplit('.', 2)[-2]}-{trial.model}-{digest.hexdigest()[:20]}"


def preparation_duration(module: str, trial: Trial) -> dict[str, Any]:
    """What of ``trial``'s duration ``module``'s preparation depends on: nothing for an inference trial (a model file
    and one batch); for a training trial, the batches it may draw from a dataset (the data sampler's epoch orders
    cover them; without a dataset, the classification batch every preparing backend trains on is the same for any
    length) and, for the :data:`INFER_PASS_PREPARATIONS`, whether it has inference passes.  A preparation that comes
    to read more of the duration must add it here."""
    if trial.mode != "train":
        return {}
    duration: dict[str, Any] = {"draws": steps_drawn(trial) if trial.data is not None else None}
    if module in INFER_PASS_PREPARATIONS:
        duration["infer_passes"] = bool(trial.infer_steps)
    return duration


def steps_drawn(trial: Trial) -> int | None:
    """How many training batches the trial may draw at most (warm-up and measured steps); None: unbounded."""
    if trial.until_accuracy is not None:
        cap = trial.max_steps
    elif trial.target_ci_pct is not None:
        cap = trial.max_steps or DEFAULT_MAX_STEPS
    else:
        cap = trial.steps
    return None if cap is None else trial.warmup + cap


def cached_preparation(key: str, work_dir: Path, prepare: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The document and files of the preparation ``key``: copied from the cache into ``work_dir``, else made there by
    ``prepare()`` and copied into the cache (paths inside ``work_dir`` kept relative to it).

    The entry's document is sealed (:func:`edgebench.host.files.write_sealed`) with the key and each file's SHA-256,
    so a torn, stale or edited entry is prepared again, never used."""
    from edgebench.graph import cache
    from edgebench.host.files import file_sha256, read_sealed, write_sealed

    entry = cache.cache_dir("prepared") / key
    seal = entry / "prepared.json"
    stored = read_sealed(seal, key)
    if stored is not None:
        try:
            files = {name: entry / name for name in stored["files"] if Path(name).name == name}
            intact = all(file_sha256(path) == stored["files"][name] for name, path in files.items())
            if intact and len(files) == len(stored["files"]):
                for name, path in files.items():
                    shutil.copy2(path, work_dir / name)
                return _located(stored["doc"], str(work_dir))
        except (OSError, KeyError, TypeError, AttributeError):
            pass  # a damaged entry: prepare again
    doc = prepare()
    made = [p for p in work_dir.iterdir() if p.is_file() and p.name not in ("trial.json", "prepared.json")]
    # the entry is made beside its name and renamed into place whole: a reader copying an entry never sees another
    # preparation of the same key (a parallel trial's) write over it
    entry.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=entry.parent))
    try:
        for path in made:
            shutil.copy2(path, building / path.name)
        files = {path.name: file_sha256(building / path.name) for path in made}
        write_sealed(building / seal.name, {"doc": _located(doc, str(work_dir), relative=True), "files": files}, key)
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)  # a damaged entry (a valid one was read above)
        building.rename(entry)
    except OSError:
        pass  # another preparation of the key put its entry in place first (or the cache is not writable)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return doc


def _located(value: Any, folder: str, relative: bool = False) -> Any:
    """``value`` with every path inside ``folder`` made relative to it (``relative``) or put back under it."""
    if isinstance(value, dict):
        return {k: _located(v, folder, relative) for k, v in value.items()}
    if isinstance(value, list):
        return [_located(v, folder, relative) for v in value]
    if isinstance(value, str):
        if relative and value.startswith(folder + "/"):
            return "@/" + value[len(folder) + 1 :]
        if not relative and value.startswith("@/"):
            return f"{folder}/{value[2:]}"
    return value


def _in_child(module: str, trial: Trial, work_dir: Path, what: str) -> dict[str, Any]:
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

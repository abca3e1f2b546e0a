"""Stored trials built by hand, with known step times, for export and compare tests (no worker involved)."""

from __future__ import annotations

import json
from typing import Any

from edgebench.measure.stats import summarize
from edgebench.records.result import SweepInfo, TrialResult
from edgebench.records.result_schema import load_result

MS = 1_000_000


def events(step_ms: list[float], infer_ms: list[float] = (), t0_ns: int = 10**12) -> list[dict[str, Any]]:
    """Step events laid end to end from ``t0_ns``: a warm-up step, the training steps, the inference passes."""
    out, t = [], t0_ns
    for phase, durations in (("warmup", [step_ms[0]]), ("train", step_ms), ("infer", list(infer_ms))):
        for i, ms in enumerate(durations):
            out.append({"event": "step", "phase": phase, "index": i, "start_ns": t, "end_ns": t + int(ms * MS),
                        "loss": 1.0 if phase != "infer" else None})  # fmt: skip
            t += int(ms * MS)
    return out


def result(
    trial_id: str,
    step_ms: list[float],
    *,
    model: str = "lenet",
    batch_size: int = 8,
    cores: list[int] = (0, 1),
    threads: int = 2,
    infer_ms: list[float] = (),
    sweep: tuple[str, str, int] | None = None,
    **fields: Any,
) -> TrialResult:
    """A result written as a schema-3 record (flat names: ``peak_memory_bytes=``, ``env=``) and loaded through the
    migration, as a stored record of that schema is: the tests that build one exercise the migration too."""
    record: dict[str, Any] = dict(
        trial_id=trial_id, status="ok", model=model, batch_size=batch_size, threads=threads, cores=list(cores),
        steps=len(step_ms), warmup=1, step_time_ms=summarize(step_ms),
        throughput_sps=batch_size * len(step_ms) / (sum(step_ms) / 1e3),
        infer_time_ms=summarize(infer_ms) if infer_ms else None, env={"hostname": "board-a"},
    )  # fmt: skip
    if sweep is not None:
        record["sweep"] = SweepInfo(sweep_id=sweep[0], trial_key=sweep[1], position=sweep[2])
    record.update(fields)
    flat = {k: v.model_dump() if hasattr(v, "model_dump") else v for k, v in record.items()}
    return load_result({"schema_version": 3, **flat})


def save(store: Any, r: TrialResult, step_ms: list[float], infer_ms: list[float] = (), **series: str) -> None:
    lines = "\n".join(json.dumps(e) for e in events(step_ms, infer_ms))
    store.save(r, {"events": lines, **series})

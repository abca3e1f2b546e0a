"""Every stored trial as one flat row (CSV, Parquet), and every step as one row, for pandas, R or a spreadsheet.

The columns keep the result's schema-3 names, which the MNN suite's users know (:func:`flat_record` derives them
from the grouped record through the one mapping the store's migration uses).  Nested fields become dotted columns
(``step_time_ms.mean``, ``env.hostname``); per-core lists become one column per core (``cpu_util_pct.per_core.0``);
other lists are joined with commas (``cores`` = ``0,1``).  Empty cells mean "not measured".  A configuration's
repeats (``--repeats``) are rows one after another, with their ``repeat.config_key``, ``repeat.index`` and
``repeat.planned``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from edgebench.host.cpuset import format_mask
from edgebench.host.files import write_with
from edgebench.records.events import Step, parse_events
from edgebench.records.result import TrialResult
from edgebench.records.result_schema import COMPOUND, flat_record

#: Lists indexed by core: one column per core.
PER_CORE = ("cpu_util_pct.per_core", "idle_ratio", "cpu_freq_khz")
#: Columns first, in this order; the rest follow in the order they first appear.
LEADING = (
    "trial_id", "sweep.sweep_id", "sweep.trial_key", "status", "reason", "model", "batch_size", "threads", "cores",
    "mask", "freq_khz", "precision", "backend", "device", "steps", "warmup", "stopped_by",
)  # fmt: skip
STEP_COLUMNS = ("trial_id", "phase", "index", "start_ns", "end_ns", "duration_ms", "loss")

SeriesLoader = Callable[[str, str], str | None]


def flatten(value: Any, prefix: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {} if out is None else out
    if isinstance(value, dict):
        for key, item in value.items():
            flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list | tuple):
        if prefix in PER_CORE or any(isinstance(v, dict | list) for v in value):
            for i, item in enumerate(value):
                flatten(item, f"{prefix}.{i}", out)
        else:
            out[prefix] = ",".join("" if v is None else str(v) for v in value)
    else:
        out[prefix] = value
    return out


def trial_row(result: TrialResult) -> dict[str, Any]:
    # a record or a list that is absent adds no column (its parts do, when present)
    row = flatten({k: v for k, v in flat_record(result).items() if v is not None or k not in COMPOUND})
    row["mask"] = format_mask(result.trial.cores) if result.trial.cores else None
    return row


def columns_of(rows: Iterable[dict[str, Any]], leading: Iterable[str] = LEADING) -> list[str]:
    seen = dict.fromkeys(leading)
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def step_rows(results: Iterable[TrialResult], series: SeriesLoader) -> list[dict[str, Any]]:
    """One row per timed step (warm-up, training, inference) from each trial's stored events."""
    rows = []
    for result in results:
        for event in parse_events(series(result.trial_id, "events")):
            if not isinstance(event, Step):
                continue
            rows.append(
                {
                    "trial_id": result.trial_id,
                    "phase": event.phase,
                    "index": event.index,
                    "start_ns": event.start_ns,
                    "end_ns": event.end_ns,
                    "duration_ms": (event.end_ns - event.start_ns) / 1e6,
                    "loss": event.loss,
                }
            )
    return rows


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def to_csv(rows: list[dict[str, Any]], columns: list[str]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buffer.getvalue()


def write_parquet(rows: list[dict[str, Any]], columns: list[str], path: Path) -> None:
    """Columns typed from their values: bool, int64, float64 (ints and floats mixed), else string."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = []
    for column in columns:
        values = [row.get(column) for row in rows]
        kind = _arrow_type(values)
        if kind == pa.string():
            values = [None if v is None else _cell(v) for v in values]
        elif kind == pa.float64():
            values = [None if v is None else float(v) for v in values]
        arrays.append(pa.array(values, type=kind))
    table = pa.Table.from_arrays(arrays, names=columns)
    write_with(path, lambda tmp: pq.write_table(table, tmp))


def _arrow_type(values: list[Any]) -> Any:
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.bool_()
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.int64()
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pa.float64()
    return pa.string()

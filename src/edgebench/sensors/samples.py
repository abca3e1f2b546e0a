"""Reading a sampler's CSV back as arrays: one int64 time axis and one float column per sensor field."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgebench.records.sampling import SamplerMeta


@dataclass(frozen=True)
class Samples:
    t_ns: np.ndarray
    columns: dict[str, np.ndarray]
    meta: SamplerMeta | None = None
    labels: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.t_ns)

    def take(self, rows: np.ndarray) -> Samples:
        """The samples at ``rows`` (indices or a mask), columns and meta alike."""
        return Samples(self.t_ns[rows], {k: v[rows] for k, v in self.columns.items()}, self.meta, self.labels)

    def matching(self, prefix: str, suffix: str) -> dict[str, np.ndarray]:
        """Columns named ``prefix*suffix`` in file order, e.g. ``("cpu", "_active_ticks")``."""
        return {k: v for k, v in self.columns.items() if k.startswith(prefix) and k.endswith(suffix)}


#: The widest time stamp a sample may carry (int64 nanoseconds).
_MAX_NS = 2**63 - 1


def parse_samples(text: str, meta: SamplerMeta | None = None) -> Samples:
    """Parse sampler CSV text; a torn last row (a sampler killed mid-write) is dropped, and so is a row whose cells
    are not numbers (a file edited or damaged: ``abc``, a stamp past int64), rather than failing the whole file."""
    lines = io.StringIO(text)
    header = lines.readline().strip().split(",")
    times: list[int] = []
    rows: list[list[float]] = []
    for line in lines:
        cells = line.rstrip("\n").split(",")
        if len(cells) != len(header) or not line.endswith("\n"):
            continue
        try:
            stamp = int(cells[0])
            values = [float(c) if c else math.nan for c in cells[1:]]
        except ValueError:
            continue
        if abs(stamp) > _MAX_NS:
            continue
        times.append(stamp)
        rows.append(values)
    data = np.array(rows, dtype=np.float64).reshape(len(rows), len(header) - 1)
    columns = {name: data[:, i] for i, name in enumerate(header[1:])}
    return Samples(np.array(times, dtype=np.int64), columns, meta, dict(meta.labels) if meta else {})


def read_samples(csv_path: str | Path, meta: SamplerMeta | None = None) -> Samples:
    return parse_samples(Path(csv_path).read_text(encoding="ascii"), meta)


#: The battery's temperature where a phone reports one: the MNN suite's monitor reads it.
_PREFERRED_TEMPS = ("temp_power_supply_battery_mc", "temp_battery_mc")


def temperature_column(columns: Sequence[str]) -> str | None:
    """The column that stands for the device's temperature: the battery's, else a CPU zone, else the first."""
    temps = [c for c in columns if c.startswith("temp_") and c.endswith("_mc")]
    for preferred in _PREFERRED_TEMPS:
        if preferred in temps:
            return preferred
    return next((c for c in temps if "cpu" in c), temps[0] if temps else None)

"""``freq_temperature.csv`` in the MNN-based suite's own format, written row by row.

That suite's ``temperature.py`` writes a pandas frame: an unnamed index column counting from 1, then ``stamp``
(ms since the first sample), ``temperature`` (tenths of a degree C, as ``dumpsys battery`` prints it) and
``cpu0`` ... ``cpu7`` (``scaling_cur_freq`` in kHz; always these eight, as its script lists them, and any higher core
the device has after them).  Its tools read the file back by those names; a value not read is ``nan``, its word.

The temperature is the battery's where the device has one (what the suite read), else a CPU zone's, else the first
temperature the device exposes.  Slow sensors are read every 100 ms, so the last reading is repeated on the rows in
between, as the suite's own rows each carry a value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import IO

from edgebench.sensors.samples import temperature_column

_FREQ = re.compile(r"^cpu(\d+)_(freq_khz|active_ticks)$")


class FreqTemperatureWriter:
    """Appends one row per sample; the header lists cpu0..cpu7 and any higher core seen in the device's columns."""

    def __init__(self, out: IO[str], columns: Sequence[str]) -> None:
        self.out = out
        cores = sorted({*range(8), *(int(m.group(1)) for c in columns if (m := _FREQ.match(c)))})
        index = {c: i for i, c in enumerate(columns)}
        self._freq = [index.get(f"cpu{core}_freq_khz") for core in cores]
        temp = temperature_column(columns)
        self._temp = index[temp] if temp else None
        self._last_temp = "nan"
        self._t0: int | None = None
        self._row = 0
        out.write(",".join(["", "stamp", "temperature", *(f"cpu{c}" for c in cores)]) + "\n")

    def write(self, t_ns: int, values: Sequence[int | float | None]) -> None:
        if self._t0 is None:
            self._t0 = t_ns
        if self._temp is not None and values[self._temp] is not None:
            self._last_temp = str(round(values[self._temp] / 100))  # type: ignore[operator]
        self._row += 1
        freqs = ["nan" if i is None or values[i] is None else str(values[i]) for i in self._freq]
        stamp = str(round((t_ns - self._t0) / 1e6))
        self.out.write(",".join([str(self._row), stamp, self._last_temp, *freqs]) + "\n")

"""How long ``edgebench report`` takes, how big the file is, and how fast Chromium draws it, for large inputs.

Two synthesised inputs (the numbers are made up, the shapes are real: records validated as ``TrialResult``, series
in the store's own formats): a 200-trial sweep (5 models x 8 batch sizes x 5 frequencies, each trial with 20 steps
sampled every 10 ms on 4 cores), and a one-hour ``edgebench monitor`` recording at 10 ms (360 000 rows: 4 cores'
ticks and clocks, a temperature).  Prints build time, file size and, where Chromium is installed, the time from
opening the file to every chart drawn.  ``--quick``: 20 trials and 5 minutes of recording, to check it runs.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.browser, the Chromium driver

from edgebench.records.result import TrialResult
from edgebench.report.content import build_content, select
from edgebench.report.html import render_html
from edgebench.store import Store

CORES = 4
MODELS = ("lenet", "alexnet", "mobilenet_v2", "resnet18", "vgg11")


def _samples_csv(t0: int, seconds: float, rng: np.random.Generator, interval_ns: int = 10_000_000) -> str:
    n = int(seconds * 1e9 / interval_ns)
    t = t0 + np.arange(n, dtype=np.int64) * interval_ns
    head = ["t_ns"] + [f"cpu{c}_{k}" for c in range(CORES) for k in ("active_ticks", "idle_ticks")]
    head += [f"cpu{c}_freq_khz" for c in range(CORES)] + ["temp_cpu_thermal_mc", "proc_rss_bytes"]
    cols = [t]
    for _ in range(CORES):
        busy = rng.random(n) < 0.8
        cols += [np.cumsum(busy), np.cumsum(~busy)]
    cols += [np.full(n, 1_500_000) - (rng.random(n) < 0.1) * 900_000 for _ in range(CORES)]
    cols += [45_000 + np.cumsum(rng.normal(0, 20, n)).astype(np.int64), 300 * 2**20 + rng.integers(0, 2**20, n)]
    buffer = io.StringIO()
    buffer.write(",".join(head) + "\n")
    np.savetxt(buffer, np.column_stack(cols), fmt="%d", delimiter=",")
    return buffer.getvalue()


def _meta(columns: list[str], rows: int) -> dict:
    return {"interval_ms": 10.0, "columns": columns, "sensors": ["cpu_time", "cpu_freq", "thermal", "process"],
            "unavailable": {"rapl": "synthesised: no power sensor"}, "samples": rows}  # fmt: skip


def synth_sweep(store: Store, trials: int, rng: np.random.Generator) -> str:
    sweep_id = "sweep-bench"
    store.add_sweep(sweep_id, trials, "{}")
    for i in range(trials):
        model, batch, freq = MODELS[i % 5], 2 ** (1 + (i // 5) % 8), 600_000 + 300_000 * ((i // 40) % 5)
        step_ms = 20.0 * batch * (1 + i % 5) * 1.5e6 / freq
        t0 = 10**12 + i * 10**11
        steps = [t0 + int(k * step_ms * 1e6) for k in range(21)]
        events = [{"event": "ready", "pid": 1}]
        events += [{"event": "step", "phase": "train", "index": k, "start_ns": steps[k], "end_ns": steps[k + 1]}
                   for k in range(20)]  # fmt: skip
        csv = _samples_csv(t0 - 10**8, 20 * step_ms / 1e3 + 0.2, rng)
        stats = {"mean": step_ms, "median": step_ms, "p5": step_ms * 0.95, "p95": step_ms * 1.05, "std": 1.0,
                 "ci95": step_ms * 0.01, "n": 20, "cv": 0.01}  # fmt: skip
        result = TrialResult.model_validate({
            "trial_id": f"bench-{i:04d}", "status": "ok",
            "trial": {"model": model, "batch_size": batch, "threads": 4, "cores": list(range(CORES)), "steps": 20,
                      "warmup": 0, "freq_khz": freq},
            "latency": {"step_ms": stats, "throughput_sps": batch / step_ms * 1e3, "measured_steps": 20},
            "cpu": {"util_pct": {"per_core": [80.0] * CORES, "mean": 80.0}, "process_pct": 320.0},
            "memory": {"peak_bytes": (200 + 10 * batch) * 2**20},
            "sweep": {"sweep_id": sweep_id, "trial_key": f"k{i}", "position": i},
        })  # fmt: skip
        meta = _meta(csv.partition("\n")[0].split(",")[1:], csv.count("\n") - 1)
        store.save(result, {"events": "\n".join(map(json.dumps, events)) + "\n", "samples": csv,
                            "sampler_meta": json.dumps(meta)})  # fmt: skip
    return sweep_id


def open_time_s(html: Path) -> tuple[float, float] | None:
    """Seconds from opening the file to its first chart drawn, and to every chart drawn."""
    try:
        from tests.browser import Browser, chromium_path

        chromium_path()
    except (ImportError, AssertionError):
        return None
    browser = Browser()
    try:
        start = time.perf_counter()
        browser.open(html.as_uri())
        browser.evaluate("new Promise(ok => { (function poll() { if (document.body.dataset.rendered) ok(1);"
                         " else setTimeout(poll, 20); })(); })", timeout=300)  # fmt: skip
        every = time.perf_counter() - start
        first_ms = float(browser.evaluate("document.body.dataset.firstDrawnMs || 'NaN'"))
        return first_ms / 1e3, every
    finally:
        browser.close()


def build(store: Store, out: Path, sweep_id: str | None, monitor: Path | None) -> tuple[float, int]:
    start = time.perf_counter()
    results = select(store, [], sweep_id, None) if sweep_id else []
    page = render_html(build_content(store, results, monitor, "benchmark"), "benchmark")
    out.write_text(page, encoding="utf-8")
    return time.perf_counter() - start, len(page.encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20 trials and 5 minutes of recording")
    args = parser.parse_args()
    trials, seconds = (20, 300.0) if args.quick else (200, 3600.0)
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="edgebench-report-bench-") as tmp:
        root = Path(tmp)
        with Store(root / "store.sqlite") as store:
            t = time.perf_counter()
            sweep_id = synth_sweep(store, trials, rng)
            print(f"synthesised {trials} trials in {time.perf_counter() - t:.1f} s", flush=True)
            monitor = root / "monitor"
            monitor.mkdir()
            csv = _samples_csv(10**12, seconds, rng)
            (monitor / "samples.csv").write_text(csv)
            (monitor / "meta.json").write_text(json.dumps(_meta(csv.partition("\n")[0].split(",")[1:], 0)))
            rows = csv.count("\n") - 1
            print(f"synthesised a {seconds / 60:.0f}-minute monitor recording: {rows} rows, "
                  f"{len(csv) / 2**20:.0f} MiB", flush=True)  # fmt: skip
            cases = ((f"{trials}-trial sweep", sweep_id, None),
                     (f"{seconds / 60:.0f}-minute monitor recording at 10 ms", None, monitor))  # fmt: skip
            for label, sweep, mon in cases:
                out = root / "report.html"
                seconds_taken, size = build(store, out, sweep, mon)
                opened = open_time_s(out)
                shown = "no Chromium to open it"
                if opened:
                    first, every = opened
                    shown = f"headless Chromium: first chart {first:.1f} s after opening, every chart {every:.1f} s"
                print(f"{label}: built in {seconds_taken:.1f} s, {size / 2**20:.1f} MiB; {shown}", flush=True)


if __name__ == "__main__":
    main()

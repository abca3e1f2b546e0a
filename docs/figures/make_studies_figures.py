"""Draw every figure of docs/studies-figures.md from real trials, with exactly the command its table lists.

    .venv/bin/python docs/figures/make_studies_figures.py [--out docs/figures/studies] [--keep-store]

WHY a script: the page promises one command per figure; running those very commands (``FIGURES`` below, which
tests/repo/test_studies_figures.py checks against the page's table, so the two cannot drift) from trials run a
moment before is the only way to show that they work and what they draw.  The trials (``TRIALS``) are kept
small (LeNet, three steps, batch sizes 4-64; a fake backend where a figure is about sensors, not a framework) so
the whole run takes a few minutes on a 2-core machine.  They go to their own store in a temporary folder
(``EDGEBENCH_STORE``, so the commands stay exactly as printed), never the user's.

Each figure is then reduced for the docs (at most ``WIDTH_PX`` wide, a 128-colour palette: a few tens of KB), a
thumbnail goes to ``thumbs/``, the two tables' terminal output is kept as text and drawn as a picture, and one
contact sheet (``all-figures.png``) shows them all with a title under each.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TX2 = "tests/fixtures/sysfs/jetson_tx2"
WIDTH_PX = 900
THUMB_PX = 300
TEXT_COLUMNS = 150  # a terminal's width: longer lines of a table's notes wrap, as a terminal would
TEXT_WIDTH_PX = 1100  # a terminal picture is not reduced below its native width (the text would blur)
SHEET_COLUMNS = 4


@dataclass(frozen=True)
class Trials:
    """Commands that store the trials some figures are drawn from; ``ref`` names them in ``Figure.uses``."""

    ref: str
    device: str
    commands: tuple[str, ...]


@dataclass(frozen=True)
class Figure:
    """One row of the page's table: its command, whose ``TRIAL`` / ``ID`` is the trial / sweep of ``uses``."""

    slug: str
    title: str
    uses: str
    command: str
    text: bool = False  # the command prints a table: its output is kept (.txt) and drawn (.png)


LOCAL = "this VM (2 cores, no GPU, no power sensor, no hardware PMU)"
FIXTURE = "the Jetson TX2 fixture tree (a copied tree: its readings stand still)"

SWEEP = "--set models=[lenet] --set batch_sizes=[4,16,64] --set threads=[1] --set steps=5 --set warmup=2"
MOBILENET = (
    "edgebench run -m mobilenet_v2 --preset cifar10 --mode infer -b 1 --threads 1 --steps 5 --warmup 1"
    " --min-time 1s"
)  # a second of samples: a copied tree's utilization estimate needs some

# One thread per trial: this 2-core VM is shared, and two torch threads spinning against a neighbour's process
# made a batch of 16 seventy times slower than a batch of 4 in a first run.
TRIALS = (
    Trials("local-sweep", LOCAL, (f"edgebench sweep {SWEEP} --set infer_steps=0",)),
    Trials("tx2-sweep", FIXTURE, (f"edgebench sweep --sysfs-root {TX2} {SWEEP} --set infer_steps=0 --set idle=0",)),
    Trials("local-traced", LOCAL,
           ("edgebench run -m lenet -b 1024 --threads 1 --steps 3 --warmup 1 --infer-steps 0 --trace layers"
            " --counters task-clock,context-switches,page-faults",)),
    Trials("tx2-fake", FIXTURE + "; the fake backend (50 ms steps, no framework): the figure is about the sensors",
           (f"EDGEBENCH_FAKE_STEP_MS=50 edgebench run --backend fake --steps 20 --warmup 0 --infer-steps 0"
            f" --sysfs-root {TX2} --idle 0",)),
    Trials("table4", "three device records: the TX2 tree (measured power), the Raspberry Pi 4 tree and this VM"
                     " (estimated from utilization)",
           (f"{MOBILENET} --trace layers --sysfs-root {TX2} --idle 0.3s",
            f"{MOBILENET} --trace layers --sysfs-root tests/fixtures/sysfs/rpi4 --estimate-energy idle=2W,max=6W",
            f"{MOBILENET} --trace layers --estimate-energy idle=5W,max=25W")),
    Trials("own", LOCAL + "; the command runs its own trials", ()),
)  # fmt: skip

FIGURES = (
    Figure("fig3-cpu-utilization", "Fig. 3: CPU utilization per core over three steps", "local-traced",
           "edgebench plot utilization TRIAL --steps 3 -o fig3-cpu-utilization.png"),
    Figure("fig3-gpu-utilization", "Fig. 3: GPU utilization over steps", "tx2-fake",
           "edgebench plot gpu-utilization TRIAL -o fig3-gpu-utilization.png"),
    Figure("fig4-cpu-utilization-batch", "Fig. 4: CPU utilization against batch size", "local-sweep",
           "edgebench plot sweep --sweep ID --y cpu_util_pct -o fig4-cpu-utilization-batch.png"),
    Figure("fig4-gpu-utilization-batch", "Fig. 4: GPU utilization against batch size", "tx2-sweep",
           "edgebench plot sweep --sweep ID --y gpu_util_pct -o fig4-gpu-utilization-batch.png"),
    Figure("fig5-core-utilization-batch", "Fig. 5: each core's utilization against batch size", "local-sweep",
           "edgebench plot sweep --sweep ID --y core_util_pct -o fig5-core-utilization-batch.png"),
    Figure("fig6-energy-batch", "Fig. 6: energy per step against batch size", "tx2-sweep",
           "edgebench plot sweep --sweep ID --y energy_per_step_j -o fig6-energy-batch.png"),
    Figure("fig6-rail-energy-batch", "Fig. 6: energy per step by component against batch size", "tx2-sweep",
           "edgebench plot sweep --sweep ID --y rail_energy_per_step_j -o fig6-rail-energy-batch.png"),
    Figure("fig7-power-rails", "Fig. 7: power by component over steps", "tx2-fake",
           "edgebench plot power-rails TRIAL -o fig7-power-rails.png"),
    Figure("fig8-throughput-batch", "Fig. 8: throughput against batch size", "local-sweep",
           "edgebench plot sweep --sweep ID --y throughput_sps -o fig8-throughput-batch.png"),
    Figure("fig9-peak-memory-batch", "Fig. 9 (total): peak memory against batch size", "local-sweep",
           "edgebench plot sweep --sweep ID --y peak_memory_bytes -o fig9-peak-memory-batch.png"),
    Figure("fig9-memory-categories", "Fig. 9: memory by category against batch size", "local-sweep",
           "edgebench plot memory-categories --sweep ID -o fig9-memory-categories.png"),
    Figure("dnntune-layer-counters", "DNNTune: perf counters per layer", "local-traced",
           "edgebench plot layer-counters TRIAL -o dnntune-layer-counters.png"),
    Figure("dnntune-layers", "DNNTune: per-layer table (edgebench layers)", "local-traced",
           "edgebench layers TRIAL", text=True),
    Figure("dnntune-table5", "DNNTune Table 5: frameworks x precisions", "own",
           "edgebench frameworks --models lenet --backends torch,onnxruntime,mnn --precisions fp32,int8 --threads 1"
           " --steps 5 --warmup 1", text=True),
    Figure("dnntune-table4", "DNNTune Table 4: partition per device", "table4",
           "edgebench partition -m mobilenet_v2 --table4 --objective energy --network 3g --plot dnntune-table4.png",
           text=True),
)  # fmt: skip


def split(command: str) -> tuple[dict[str, str], list[str]]:
    """``VAR=value ... edgebench ARGS`` -> (environment, argv run through this interpreter's edgebench)."""
    words = shlex.split(command)
    env = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[0] == "edgebench", command
    return env, [sys.executable, "-m", "edgebench", *words[1:]]


def run(command: str, cwd: Path, env: dict[str, str]) -> str:
    extra, argv = split(command)
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=cwd, env={**env, **extra}, capture_output=True, text=True)
    print(f"  [{time.monotonic() - started:5.1f} s] {command}", flush=True)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {command}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc.stdout


def shrink(path: Path, width: int, dest: Path | None = None) -> None:
    """At most ``width`` pixels wide, a 128-colour palette: a docs-sized PNG."""
    from PIL import Image

    with Image.open(path) as img:
        img = img.convert("RGB")
        if img.width > width:
            img = img.resize((width, round(img.height * width / img.width)), Image.Resampling.LANCZOS)
        img.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(dest or path, optimize=True)


def draw_text(text: str, title: str, path: Path) -> None:
    """A command's terminal output as a picture (monospace, as the terminal showed it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = [part for line in text.rstrip("\n").splitlines()
             for part in (textwrap.wrap(line, TEXT_COLUMNS, subsequent_indent="    ") or [""])]  # fmt: skip
    wide = max(len(line) for line in lines)
    fig = plt.figure(figsize=(max(6.0, 0.2 + wide * 0.0715), 0.45 + 0.135 * len(lines)), dpi=100)
    fig.text(0.01, 1 - 0.08 / fig.get_figheight(), title, family="DejaVu Sans", size=9, weight="bold", va="top")
    fig.text(0.01, 1 - 0.35 / fig.get_figheight(), "\n".join(lines), family="DejaVu Sans Mono", size=8.5,
             va="top", linespacing=1.1)  # fmt: skip
    fig.savefig(path, dpi=100, facecolor="white")
    plt.close(fig)


def contact_sheet(figures: list[tuple[Path, str]], path: Path) -> None:
    """Every figure in a grid, a short title under each: one picture for the README."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    rows = -(-len(figures) // SHEET_COLUMNS)
    fig, axes = plt.subplots(rows, SHEET_COLUMNS, figsize=(14, 2.55 * rows), dpi=100)
    for ax in axes.flat:
        ax.axis("off")
    for ax, (png, title) in zip(axes.flat, figures, strict=False):
        with Image.open(png) as img:
            ax.imshow(img.convert("RGB"))
        ax.set_title("\n".join(textwrap.wrap(title, 44)), y=-0.02, va="top", fontsize=9)
    fig.subplots_adjust(left=0.005, right=0.995, top=0.995, bottom=0.04, wspace=0.04, hspace=0.28)
    fig.savefig(path, dpi=100, facecolor="white")
    plt.close(fig)
    shrink(path, 1400)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "figures" / "studies")
    parser.add_argument("--keep-store", action="store_true", help="keep the temporary store and print its path")
    args = parser.parse_args()
    from edgebench.store import Store

    out = args.out.resolve()
    (out / "thumbs").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="edgebench-figures-"))
    store = work / "store.db"
    env = {**os.environ, "EDGEBENCH_STORE": str(store), "COLUMNS": "150", "PYTHONPATH": str(REPO / "src")}
    started = time.monotonic()
    made: dict[str, tuple[str | None, str | None]] = {"own": (None, None)}  # ref -> (newest trial, newest sweep)
    for trials in TRIALS:
        if not trials.commands:
            continue
        print(f"trials {trials.ref} on {trials.device}:")
        for command in trials.commands:
            run(command, REPO, env)
        with Store(store, read_only=True) as s:
            made[trials.ref] = (s.trials()[-1].trial_id, (s.sweep_ids() or [None])[-1])
    print("figures:")
    sheet: list[tuple[Path, str]] = []
    for figure in FIGURES:
        trial, sweep = made[figure.uses]
        command = figure.command.replace(" TRIAL", f" {trial}").replace(" ID ", f" {sweep} ")
        printed = run(command, out, env)
        png = out / f"{figure.slug}.png"
        if figure.text:
            (out / f"{figure.slug}.txt").write_text(f"$ {figure.command}\n{printed}")
            if figure.slug == "dnntune-table4":  # its --plot drew the bars; the terminal table goes beside it
                draw_text(printed, f"$ {figure.command}", out / f"{figure.slug}-table.png")
                shrink(out / f"{figure.slug}-table.png", TEXT_WIDTH_PX)
            else:
                draw_text(printed, f"$ {figure.command}", png)
        shrink(png, TEXT_WIDTH_PX if figure.text and figure.slug != "dnntune-table4" else WIDTH_PX)
        shrink(png, THUMB_PX, out / "thumbs" / png.name)
        sheet.append((png, figure.title))
    contact_sheet(sheet, out / "all-figures.png")
    print(f"{len(sheet)} pictures and all-figures.png in {out} ({time.monotonic() - started:.0f} s)")
    if args.keep_store:
        print(f"store kept: {store}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

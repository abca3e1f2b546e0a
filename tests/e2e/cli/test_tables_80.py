"""At 80 columns (a normal terminal, and what rich assumes for piped output) the tables keep names and numbers
whole: nothing is cut to ``squeezen…`` and no column is squeezed to nothing."""

from __future__ import annotations

import shutil

from tests.factories import readable
from tests.paths import GOLDEN_STORE, GOLDEN_TRACED


def at_80(cli, *args: str) -> str:
    proc = cli(*args, env={"COLUMNS": "80"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_models_at_80_columns(cli):
    out = at_80(cli, "models", "lenet", "squeezenet", "shufflenet_v2_0.5x", "dqn", "bert_base", "--no-flops")
    readable(out, "shufflenet_v2_0.5x", "squeezenet", "reinforcement", "atari 4x84x84", "DNNTune")


def test_layers_at_80_columns(cli):
    shutil.copy(GOLDEN_STORE, cli.store_path)
    out = at_80(cli, "layers", GOLDEN_TRACED, "--no-measure")
    readable(out, "classifier.1", "MaxPool2d", "Sequential", "fwd ms", "share %")
    readable(at_80(cli, "layers", GOLDEN_TRACED, "--no-measure", "--roofline"), "classifier.1", "FLOP/B")


def test_sweep_summary_at_80_columns(cli):
    # the fake backend: the table's width is the point, not what torch measures
    settings = ["models=[squeezenet_1_1, lenet]", "batch_sizes=[1, 2]", "steps=1", "warmup=0", "infer_steps=0",
                "backend=fake", "idle=0"]  # fmt: skip
    out = at_80(cli, "sweep", *(arg for setting in settings for arg in ("--set", setting)))
    # the table, not the log lines above it nor the lowest per model under it (one repeat each: none clearly best;
    # or no best at all where the suite's other worker disturbed every trial of a model)
    below = [at for at in (out.find("lowest time per sample for"), out.find("no best for ")) if at >= 0]
    assert below, out
    table = out[out.rindex("sweep sweep-") : min(below)]
    readable(table, "squeezenet_1_1", "samples/s", "step ms")

"""Every ``edgebench`` example of the docs site (the guides and ``phones.md``; not the generated reference) is run
by the real command, in a sandbox prepared once for the module.

``tests/repo/test_docs_examples.py`` parses every example as the command line reads it; here each one runs.  The
sandbox is what a user of the page has in front of them: a store holding the trials the examples read (the
session's traced LeNet trial, the golden schema-3 store, the MNN suite's own result folders imported), a working
folder holding the files the examples name (the repository's ``examples/sweeps``, a ``train.py``, a ``bench.sh``,
``mypkg/mymodule.py`` as the page writes it, ...), and the user's devices mapped onto the suite's stand-ins: the
real OpenSSH server of ``tests/sshd.py`` under the Host aliases the examples use (``orin``, ``raspberrypi``, in an
ssh config the sandbox's ``ssh`` reads, as a user's ``~/.ssh/config`` would), emulated phones of ``tests/adbd.py``
for the adb serials, and a Ray cluster of ``edgebench fleet join`` on this machine for the fleet examples.

What an example cannot run as written here is in :data:`SUBSTITUTED`, each entry saying what is replaced and why
(a user's host name, an hour shortened to seconds, a 224x224 model given a small preset); everything else runs
verbatim.  Each example's exit code is checked (0, or what the page says it returns) and, where the page shows
output, a line of it.  :func:`test_every_docs_example_is_run_here` fails on a new example that is not placed in a
lane below.

The Python blocks of the pages in :data:`PYTHON_PAGES` (the workflows' page) run too, each page's blocks in order in
one fresh interpreter, as a notebook's cells would, in a folder and with a default store of their own; a page
elsewhere whose Python block calls the workflows must be listed there (:func:`test_every_python_api_example_is_run`).

Cost: the examples are grouped in lanes (a lane's examples run in order, each lane after the sandbox is ready), and
a lane per core (and one more) runs at a time.  The module is a stage of its own, ``pytest -m docs_examples``
(deselected from a plain ``pytest`` by pyproject's ``addopts``; the README's test line and ``.ci/run`` run both):
its 103 commands take about seven CPU-minutes here (docs/developer/testing.md has the figures).
"""

from __future__ import annotations

import getpass
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tests.adbd import AdbdSim, adbd_sim  # noqa: F401  (the session fixture)
from tests.conftest import Edgebench, store_with_traced_lenet
from tests.factories import copy_of_the_golden_store
from tests.paths import FIXTURES, HAS_PMU, ROOT, SRC, free_port
from tests.ray_cluster import LocalCluster
from tests.repo.test_docs_examples import examples
from tests.sshd import Sshd, sshd  # noqa: F401  (the session fixture)


@dataclass(frozen=True)
class Sub:
    """What runs instead of a docs example's line (``{name}`` filled from the sandbox), and why."""

    run: str
    why: str


#: Two examples whose lines are longer than this file's.
RESNET_PARTITION = (
    "edgebench partition -m resnet50 --cloud-trial SERVER_TRIAL_ID --sweep-bandwidth 0.5-100Mbps --plot resnet50.png"
)
PLOT_USAGE = (
    "edgebench plot KIND [TRIAL] [--sweep ID] [--y FIELD] [--x FIELD] [--steps N] [--monitor DIR] -o FIG.png|.pdf|.svg"
)
#: The MNN suite's sweep file is written for a Snapdragon 855 (cores f0 and 0f: cpu4-7 and cpu0-3); this machine has
#: cpu0-1, so its masks become 0x3, and its 5 models x 6 batch sizes (60 trials, a 120 s cool-down between models)
#: become one trial of LeNet on the fake backend (the file names no backend: the sweep's machinery is the point).
SMALL_SWEEP = "--set models=[lenet] --set batch_sizes=[1] --set cores=[0x3] --set backend=fake"
#: The language models' page: its LoRA fine-tune from a pretrained base, and the plots of the trials its runs stored.
LM_PLOTS = {"lm-loss": "loss.png", "lm-context": "context.png", "lm-kv-cache": "kv.png"}
LM_LORA = (
    "edgebench run --model lm_1m --data shakespeare --finetune lora --lora-rank 8 --pretrain-steps 20 --batch-size 4"
    " --input-shape 64 --steps 10 --eval-every 5 --contexts none"
)
#: What runs instead of an example, and why: a user's host, phone or board mapped onto the suite's stand-in; a
#: duration, a model's input or a matrix cut to what a test may cost; a usage line's placeholders filled.  Only what
#: cannot run as written here has an entry; every other example runs as the page writes it.
SUBSTITUTED: dict[str, Sub] = {
    # --- backends.md: the backends run as named; the 224x224 models on the page's own small preset ------------------
    "edgebench run -m mobilenet_v2 --mode infer --backend onnxruntime --precision int8": Sub(
        "edgebench run -m mobilenet_v2 --mode infer --backend onnxruntime --precision int8 --preset cifar10 "
        "--steps 3 --warmup 1 --idle 0",
        "MobileNetV2 at 224x224 takes seconds a pass here: its 32x32 preset, 3 steps",
    ),
    "edgebench run -m lenet --mode infer --precision int8": Sub(
        "edgebench run -m lenet --mode infer --precision int8 --steps 3 --warmup 1 --idle 0",
        "3 measured steps, not 20: the quantization is the point",
    ),
    "edgebench frameworks --models lenet,mobilenet_v2 --mode infer --precisions fp32,int8": Sub(
        "edgebench frameworks --models lenet --mode infer --precisions fp32,int8 --input-shape 3x32x32 --steps 2 "
        "--warmup 1",
        "LeNet's eight cells (every backend at both precisions: an export, a conversion or a calibration each), 2 "
        "steps a cell; MobileNetV2's eight took half a minute more here, and the example above runs it on ONNX "
        "Runtime int8",
    ),
    "edgebench run -m lenet --backend litert --mode infer --batch-size 1 --trace layers": Sub(
        "edgebench run -m lenet --backend litert --mode infer --batch-size 1 --trace layers --input-shape 3x32x32 "
        "--steps 3 --warmup 1 --idle 0",
        "LeNet at 3x32x32, the .tflite conversion the frameworks example makes (one conversion for both), 3 passes",
    ),
    "edgebench run -m lenet --backend litert --mode infer --batch-size 1 --precision int8-dynamic": Sub(
        "edgebench run -m lenet --backend litert --mode infer --batch-size 1 --precision int8-dynamic "
        "--input-shape 3x32x32 --steps 3 --warmup 1 --idle 0",
        "LeNet at 3x32x32 (the frameworks example's conversion), 3 passes",
    ),
    "edgebench run --backend mnn --model lenet --json": Sub(
        "edgebench run --backend mnn --model lenet --json -b 4 --steps 3 --warmup 1 --infer-steps 2 --idle 0",
        "3 training steps and 2 inference passes, not 20 and 10, at batch 4: the conversion the suite's MNN tests "
        "made (tests/e2e/backends/mnn), from the prepared-trial cache",
    ),
    "edgebench run --backend mnn --model mobilenet_v2 --mode infer --precision fp16 --trace layers": Sub(
        "edgebench run --backend mnn --model mobilenet_v2 --mode infer --precision fp16 --trace layers "
        "--preset cifar10 --steps 2 --warmup 1 --idle 0",
        "MobileNetV2 on its 32x32 preset, 2 traced passes",
    ),
    "edgebench run --backend mnn --model lenet --mode infer --precision int8": Sub(
        "edgebench run --backend mnn --model lenet --mode infer --precision int8 -b 8 --steps 3 --warmup 1 --idle 0",
        "3 passes, not 20, at batch 8: the quantized model tests/e2e/backends/mnn/test_models.py made",
    ),
    "edgebench run --backend executorch --model lenet": Sub(
        "edgebench run --backend executorch --model lenet -b 4 --steps 3 --warmup 1 --infer-steps 2 --idle 0",
        "batch 4, 3 training steps (the portable kernels take 2 s a step at batch 32 here) and 2 inference passes; "
        "the programs are those the suite's tests lowered",
    ),
    "edgebench run --backend executorch --model lenet --mode infer --precision int8 --trace layers": Sub(
        "edgebench run --backend executorch --model lenet --mode infer --precision int8 --trace layers -b 1 "
        "--steps 5 --warmup 1 --idle 0",
        "5 traced passes at batch 1 (the program the suite's tests lowered)",
    ),
    "edgebench run --backend executorch-portable --model lenet --mode infer --precision fp16": Sub(
        "edgebench run --backend executorch-portable --model lenet --mode infer --precision fp16 -b 2 --steps 3 "
        "--warmup 1 --idle 0",
        "3 passes at batch 2 (the program the suite's tests lowered)",
    ),
    "edgebench run --model lenet.pte --trace layers": Sub(
        "edgebench run --model lenet.pte --trace layers --steps 5 --warmup 1 --idle 0",
        "lenet.pte is the suite's small XNNPACK program (tests/fixtures/executorch/tiny_xnnpack.pte); 5 passes",
    ),
    "edgebench run --target adb://8A2X0KDLN --mode infer --trace layers --warmup 5 --steps 20      --command "
    "'./executor_runner --model_path lenet.pte --num_executions 25 --etdump_path lenet.etdp'      --push "
    "executor_runner,lenet.pte --step-pattern executorch-runner": Sub(
        "edgebench run --target adb://{phone_a} --mode infer --trace layers --warmup 1 --steps 4 --command "
        "'./executor_runner --model_path lenet.pte --num_executions 5 --etdump_path lenet.etdp' --push "
        "executor_runner,lenet.pte --step-pattern executorch-runner",
        "the phone is an emulated one and executor_runner a stand-in printing a recorded run of 5 executions "
        "(tests/fixtures/command/executorch_runner.out) and writing its ETDump",
    ),
    # --- language-models.md: the plots draw the trials the page's own runs stored -------------------------------------
    **{
        f"edgebench plot {kind} TRIAL -o {out}": Sub(
            f"edgebench plot {kind} {{lm_trial}} -o {out}",
            "TRIAL is the page's first run (its held-out loss and generation)",
        )
        for kind, out in LM_PLOTS.items()
    },
    # --- first-trial.md ----------------------------------------------------------------------------------------------
    "edgebench run --model mobilenetv2 --batch-size 8 --json": Sub(
        "edgebench run --model mobilenetv2 --batch-size 8 --json --preset cifar10 --steps 2 --warmup 1 "
        "--infer-steps 1 --idle 0",
        "MobileNetV2 (the page's spelling, an alias) at 224x224 is ~4 s a step here: its 32x32 preset, 2 steps",
    ),
    # --- fleets.md: a head and a second host of the suite's own, the devices mapped onto the stand-ins -------------
    "edgebench fleet join --targets pixel-a=adb://R58M1234 --class pixel-a=pixel7": Sub(
        "edgebench fleet join --targets pixel-a=adb://{phone_a} --class pixel-a=pixel7 {head_args}",
        "the phone is an emulated one; the head gets a free port, a session folder of its own and small worker and "
        "object-store settings (tests/ray_cluster.py's), so no other Ray on this machine is touched",
    ),
    "edgebench fleet join --address head:6379 --targets orin=ssh://orin --targets pixel-b=adb://R58M9999 "
    "     --class pixel-b=pixel7": Sub(
        "edgebench fleet join --address {ray_address} --targets orin=ssh://orin --targets pixel-b=adb://{phone_b} "
        "--class pixel-b=pixel7 {node_args}",
        "the head is this machine's (its address, not a host named head); the second host is a second node here, "
        "named h2 since both run on one machine; orin is the sandbox's Host alias of the test sshd",
    ),
    # --- layers.md ---------------------------------------------------------------------------------------------------
    "edgebench run --model mobilenet_v2 --batch-size 8 --trace layers": Sub(
        "edgebench run --model mobilenet_v2 --batch-size 8 --trace layers --preset cifar10 --steps 2 --warmup 1 "
        "--infer-steps 0 --idle 0",
        "MobileNetV2 on its 32x32 preset, 2 traced steps",
    ),
    "edgebench layers TRIAL": Sub("edgebench layers {traced}", "TRIAL: the session's traced LeNet trial"),
    "edgebench layers TRIAL --depth 2 --sort time --top 15": Sub(
        "edgebench layers {traced} --depth 2 --sort time --top 15", "TRIAL: the session's traced LeNet trial"
    ),
    "edgebench layers TRIAL --roofline": Sub("edgebench layers {traced} --roofline", "TRIAL: the traced LeNet trial"),
    "edgebench trace TRIAL -o trace.json": Sub("edgebench trace {traced} -o trace.json", "TRIAL: the traced trial"),
    "edgebench trace TRIAL -o trace.json --check": Sub(
        "edgebench trace {traced} -o trace.json --check", "TRIAL: the traced trial"
    ),
    # --- measured.md -------------------------------------------------------------------------------------------------
    "edgebench run --model alexnet --target-ci 1% --max-time 5m": Sub(
        "edgebench run --model alexnet --target-ci 1% --max-time 5s --backend fake",
        "five seconds, not minutes, on the fake backend (the adaptive stop is the point; no backend is named)",
    ),
    "edgebench run --model lenet --batch-size 8 --target-ci 2%": Sub(
        "edgebench run --model lenet --batch-size 8 --target-ci 2% --max-time 5s --backend fake",
        "at most five seconds, on the fake backend (the adaptive stop is the point; no backend is named)",
    ),
    # --- mnn-suite.md, studies.md, sweeps.md: the MNN suite's sweep file ---------------------------------------------
    "edgebench sweep examples/sweeps/mnn_suite_cores.yaml": Sub(
        f"edgebench sweep examples/sweeps/mnn_suite_cores.yaml {SMALL_SWEEP}",
        "the Snapdragon's core masks are not this machine's, and the 60-trial matrix becomes one trial (see "
        "SMALL_SWEEP)",
    ),
    "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --resume": Sub(
        f"edgebench sweep examples/sweeps/mnn_suite_cores.yaml --resume {SMALL_SWEEP}",
        "the same plan as the sweep it resumes",
    ),
    "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --dry-run": Sub(
        "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --dry-run --set cores=[0x3]",
        "the Snapdragon's masks f0 and 0f are refused on this 2-core machine before planning (studies.md's form)",
    ),
    "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --set batch_sizes=[1,2,4] --set cooldown.seconds=60": Sub(
        "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --set batch_sizes=[1,2,4] --set cooldown.seconds=60 "
        "--set models=[lenet] --set cores=[0x3] --set backend=fake --set name=meizu-cores-tuned",
        "one model (so no cool-down between models), this machine's mask, the fake backend; stored under the name "
        "the compare example reads, since meizu-cores is the sweep before it",
    ),
    "edgebench sweep --set models=[lenet] --set cores=[0x1,0x2] --set batch_sizes=[8,32] --target-ci 2%": Sub(
        "edgebench sweep --set models=[lenet] --set cores=[0x1,0x2] --set batch_sizes=[8,32] --target-ci 2% "
        "--set backend=fake --set max_time=2s --set idle=0",
        "the fake backend's steps, at most 2 s a trial",
    ),
    "edgebench sweep examples/sweeps/dnntune_mobilenet.yaml": Sub(
        "edgebench sweep examples/sweeps/dnntune_mobilenet.yaml --set model.input_shape=[1,32,32,3] "
        "--set processing.CPU_affinity=big+little --set steps=2 --set warmup=1 --set infer_steps=0 --set idle=0"
        + ("" if HAS_PMU else " --set 'processing.profiling_events=CPUUtilization, Mem_footprint'"),
        "DNNTune's 224x224 input becomes 32x32, 2 steps; its big cores are every core here (this VM has no cpufreq "
        "clusters to tell big from little); without a hardware PMU its LLCmiss (perf's cache-references and "
        "cache-misses) cannot be counted, so it is left out of profiling_events",
    ),
    "edgebench export --format mnn-suite --device MEIZU --out results/ [--sweep meizu-cores] [--host NAME]": Sub(
        "edgebench export --format mnn-suite --device MEIZU --out results-sweep/ --sweep meizu-cores --host vm",
        "a usage line: its optional parts given (the sweep above, this machine's host name)",
    ),
    "edgebench compare <an imported trial> <a new one>": Sub(
        "edgebench compare {imported} {traced}", "a usage line: an imported Meizu trial and the traced LeNet trial"
    ),
    # --- monitor.md --------------------------------------------------------------------------------------------------
    "edgebench monitor --interval 10ms --duration 1h --out run1/": Sub(
        "edgebench monitor --interval 10ms --duration 2s --out run1/", "two seconds, not an hour"
    ),
    "edgebench monitor --out run2/ --pid 4242 --sensors cpu_freq,thermal,power_supply,process": Sub(
        "edgebench monitor --out run2/ --pid {pid} --sensors cpu_freq,thermal,power_supply,process "
        "--sysfs-root {sysfs}/android_phone --duration 1s",
        "a process that exists (4242 is the page's), a phone's tree for its frequency, thermal and battery "
        "sensors (this VM has none), one second rather than until Ctrl-C",
    ),
    # --- partition.md: the traced MobileNetV2 trial of layers.md is the device's ------------------------------------
    RESNET_PARTITION: Sub(
        "edgebench partition -m resnet50 --cloud-trial {server_trial} --sweep-bandwidth 0.5-100Mbps "
        "--plot resnet50.png",
        "SERVER_TRIAL_ID: the traced ResNet-50 trial of server.sqlite (a small one, on the 32x32 preset), imported "
        "by the example before; the sandbox's server is this machine, so it is also the device's newest trial",
    ),
    # --- results.md: usage lines, their placeholders filled ----------------------------------------------------------
    "edgebench trials [--model M] [--sweep ID] [--target T] [--status S] [--last N] [--json]": Sub(
        "edgebench trials --model lenet --target local --status ok --last 5", "a usage line: its flags given"
    ),
    "edgebench show ID": Sub("edgebench show {traced}", "ID: the traced LeNet trial"),
    "edgebench report [TRIAL...] [--sweep ID] [--last N] [--monitor DIR] -o report.html": Sub(
        "edgebench report {traced} -o report.html", "a usage line: one trial"
    ),
    PLOT_USAGE: Sub("edgebench plot step-times {traced} -o fig.png", "a usage line: one trial's step times"),
    "edgebench compare 20261122-0352 20261122-0401": Sub(
        "edgebench compare {golden_a} {golden_b}", "two stored trials' id prefixes (the golden store's)"
    ),
    "edgebench compare phone-a phone-b --match model,batch_size": Sub(
        'edgebench compare "Meizu 16T" vm --match model,batch_size',
        "the two devices' host names here: the imported Meizu's and this machine's",
    ),
    # --- studies.md --------------------------------------------------------------------------------------------------
    "edgebench study tx2 --quick": Sub(
        "edgebench study tx2 --quick --backend fake",
        "the fake backend's trials (the page names no backend; the study's plan and verdicts are the point, and "
        "tests/e2e/cli/test_study.py runs it on torch)",
    ),
    "edgebench study tx2 --budget 30m --html tx2.html": Sub(
        "edgebench study tx2 --quick --html tx2.html --backend fake",
        "--quick rather than a 30-minute budget (the budgeted plan is tested in tests/e2e/study), the fake backend",
    ),
    "edgebench study dnntune --quick": Sub("edgebench study dnntune --quick --backend fake", "the fake backend"),
    "edgebench study mnn-suite --quick": Sub("edgebench study mnn-suite --quick --backend fake", "the fake backend"),
    # --- targets.md --------------------------------------------------------------------------------------------------
    "edgebench sensors --target ssh://pi@raspberrypi": Sub(
        "edgebench sensors --target ssh://{user}@raspberrypi",
        "raspberrypi is the sandbox's Host alias of the test sshd, which lets in this machine's user, not pi",
    ),
    "edgebench run --target ssh://orin --model mobilenet_v2 --steps 20": Sub(
        "edgebench run --target orin --model mobilenet_v2 --steps 3 --preset cifar10 --warmup 1 --infer-steps 0 "
        "--idle 0",
        "orin by its configured name: a bare URL runs the far side's python3, which here has no torch, and the "
        "name's entry gives the python (as a board's would); MobileNetV2 on its 32x32 preset, 3 steps",
    ),
    "edgebench run --target adb://8A2X0KDLN --root --command './runTrainDemo.out MnistBenchmark data 32 Lenet'"
    "      --push build/runTrainDemo.out,data --step-pattern mnn-train-demo": Sub(
        "edgebench run --target adb://{phone_a} --root --command './runTrainDemo.out MnistBenchmark data 32 Lenet' "
        "--push build/runTrainDemo.out,data --step-pattern mnn-train-demo",
        "the phone is an emulated rooted one",
    ),
    "edgebench snapshot --target adb:// -o pixel-tree": Sub(
        "edgebench snapshot --target adb://{phone_a} -o pixel-tree",
        "the suite's adb server has more than one emulated phone attached, so adb:// (the only one) is ambiguous",
    ),
    "edgebench monitor --target orin --duration 10m --out orin-mon": Sub(
        "edgebench monitor --target orin --duration 2s --out orin-mon", "two seconds, not ten minutes"
    ),
    # --- zoo.md ------------------------------------------------------------------------------------------------------
    "edgebench models": Sub(
        "edgebench models --no-flops",
        "every model listed, its parameters counted, its FLOPs not: tracing the 38 models' training steps takes ~40 s "
        "here (tests/e2e/cli/test_models.py counts three models' FLOPs, tests/unit/graph/test_flops.py checks them)",
    ),
    "edgebench run --model char_cnn --data shakespeare --until-accuracy 0.45 --eval-every 25": Sub(
        "edgebench run --model char_cnn --data shakespeare --until-accuracy 0.45 --eval-every 25 --max-steps 30 "
        "--idle 0",
        "stopped after 30 steps, one evaluation (0.45 takes minutes of training here): the stop reason says so",
    ),
    "edgebench run --model vgg16 --batch-size 32 --memory-budget 8GiB": Sub(
        "edgebench run --model vgg16 --batch-size 32 --memory-budget 8GiB --preset cifar10 --steps 1 --warmup 1 "
        "--infer-steps 0 --idle 0",
        "VGG16 on its 32x32 preset, one step",
    ),
    "edgebench feasibility --memory-budget 8GiB": Sub(
        "edgebench feasibility --memory-budget 8GiB -m lenet -m dqn --batch-sizes 1,64",
        "two of the paper's 16 models, the batch range's ends (the full table is minutes)",
    ),
    "edgebench feasibility --memory-budget 2GiB -m resnet50 -m alexnet --batch-sizes 1,8,32 --json": Sub(
        "edgebench feasibility --memory-budget 2GiB -m resnet50 -m alexnet --batch-sizes 1,8 --json",
        "batch sizes 1 and 8 (32 adds a minute of ResNet-50 here)",
    ),
    # --- phones.md ---------------------------------------------------------------------------------------------------
    "edgebench run --target adb://192.168.1.23:5555 --root      --command 'sh bench.sh' --push bench.sh "
    "--step-pattern '^iter \\d+$' --steps 5 --warmup 1": Sub(
        "edgebench run --target adb://{phone_a} --root --command 'sh bench.sh' --push bench.sh "
        "--step-pattern '^iter \\d+$' --steps 5 --warmup 1",
        "the phone on Wi-Fi is an emulated one on 127.0.0.1",
    ),
}

#: Examples that run in a store of their own, and why (the sandbox's store would refuse them or they would change
#: what another example reads).
OWN_STORE: dict[str, str] = {
    "edgebench sweep study.yaml --executor ray --target orin": "a new sweep of the same file: the first stored it",
    "edgebench sweep study.yaml --executor ray --target class:pixel7": "a new sweep of the same file",
    "edgebench study tx2 --budget 30m --html tx2.html": "the same study as the example before it, not resumed",
}
OWN_STORE_NAMES = {line: f"own-{i}" for i, line in enumerate(OWN_STORE)}

#: Examples not run here, and why (none: every device has a stand-in).
NOT_RUN: dict[str, str] = {}


@dataclass(frozen=True)
class Expect:
    """The exit code an example returns and text its output shows (regular expressions, on stdout and stderr)."""

    code: int = 0
    shows: tuple[str, ...] = ()


EXPECTED: dict[str, Expect] = {
    "edgebench layers TRIAL": Expect(shows=("fwd ms",)),
    "edgebench layers TRIAL --roofline": Expect(shows=("bound",)),
    "edgebench trace TRIAL -o trace.json": Expect(shows=(r"wrote trace\.json: \d+ slices",)),
    "edgebench trace TRIAL -o trace.json --check": Expect(shows=("structural check: ok",)),
    "edgebench peak": Expect(shows=("GEMM", "copy", "ridge")),
    "edgebench models": Expect(shows=("lenet", "mnn backend")),  # "ends with the models MNN refuses, and why"
    "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --dry-run --set cores=[0x3]": Expect(
        shows=("sweep meizu-cores: 30 trials", r"0  \w{16}  lenet b1 t4 cpu0-1", r"mobilenet_v2 b32 t4 cpu0-1")
    ),
    "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --dry-run": Expect(shows=("sweep meizu-cores: 30 trials",)),
    "edgebench export --format mnn-suite --device MEIZU --out results/": Expect(shows=(r"wrote \d+ files under",)),
    "edgebench sensors": Expect(shows=("cpu_time",)),
    "edgebench monitor --interval 10ms --duration 1h --out run1/": Expect(shows=(r"\d+ samples over",)),
    "edgebench study tx2 --quick": Expect(shows=("O12", "cannot be checked here")),
    "edgebench fleet status": Expect(shows=("pixel-a", "pixel-b", "orin")),
    "edgebench snapshot --target adb:// -o pixel-tree": Expect(shows=("copied",)),
    "edgebench compare 20261122-0352 20261122-0401": Expect(shows=("one process per side cannot separate",)),
    # the stage's other worker may disturb a repeat: it is then left out, by id, and the interval rests on the rest
    "edgebench run --model lenet --backend fake --steps 20 --repeats 3": Expect(
        shows=(
            "3 repeats, each a fresh worker process",
            r"t interval over [23] repeats|left out \d of 3 trials as disturbed",
        )
    ),
    "edgebench compare on-cpu0 on-cpu1": Expect(
        shows=("Welch's t on log repeat medians", r"A and B differ in: .*cores")
    ),
    "edgebench compare meizu-cores meizu-cores-tuned": Expect(shows=("geometric mean",)),
    "edgebench compare phone-a phone-b --match model,batch_size": Expect(shows=("geometric mean",)),
    "edgebench partition -m lm_1m --generation --network lte": Expect(shows=("hand-over", "best for the whole")),
    LM_LORA: Expect(shows=("held-out loss", "perplexity")),
}

#: The examples, grouped in lanes: a lane's examples run one after the other, in this order (an example that reads
#: what another wrote follows it), and the lanes run side by side, so a lane is a few examples of about the same
#: cost as the others (the frameworks table alone is one).
LANES: dict[str, list[str]] = {
    "store": [
        "edgebench layers TRIAL",  # measures this device's peak first (stored once)
        "edgebench layers TRIAL --depth 2 --sort time --top 15",
        "edgebench layers TRIAL --roofline",
        "edgebench peak",
        "edgebench trace TRIAL -o trace.json",
        "edgebench trace TRIAL -o trace.json --check",
        "edgebench trials [--model M] [--sweep ID] [--target T] [--status S] [--last N] [--json]",
        "edgebench show ID",
        "edgebench report [TRIAL...] [--sweep ID] [--last N] [--monitor DIR] -o report.html",
        PLOT_USAGE,
        "edgebench export --format csv",
        "edgebench export --format parquet --out trials.parquet",
        "edgebench export --format parquet --table steps --out steps.parquet",
        'edgebench import --format mnn-suite old/MEIZU_Freq_1708800 old/XIAOMI --device "Meizu 16T"',
        "edgebench compare 20261122-0352 20261122-0401",
        "edgebench compare phone-a phone-b --match model,batch_size",
        "edgebench compare <an imported trial> <a new one>",
    ],
    "zoo": [
        "edgebench models",
        "edgebench models resnet50 bert_base --json",
        "edgebench models --preset cifar10 --no-flops",
        "edgebench models --no-measure",
        "edgebench sensors",
        "edgebench sensors --json --sysfs-root tests/fixtures/sysfs/jetson_tx2",
        "edgebench monitor --interval 10ms --duration 1h --out run1/",
        "edgebench monitor --out run2/ --pid 4242 --sensors cpu_freq,thermal,power_supply,process",
    ],
    "sweeps": [
        "edgebench sweep examples/sweeps/mnn_suite_cores.yaml",
        "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --resume",
        "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --set batch_sizes=[1,2,4] --set cooldown.seconds=60",
        "edgebench compare meizu-cores meizu-cores-tuned",
        "edgebench export --format mnn-suite --device MEIZU --out results/",
        "edgebench export --format mnn-suite --device MEIZU --sweep meizu-cores --out results/",
        "edgebench export --format mnn-suite --device MEIZU --out results/ [--sweep meizu-cores] [--host NAME]",
        "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --dry-run",
        "edgebench sweep examples/sweeps/mnn_suite_cores.yaml --dry-run --set cores=[0x3]",
        "edgebench sweep --set models=[lenet] --set cores=[0x1,0x2] --set batch_sizes=[8,32] --target-ci 2%",
        "edgebench sweep examples/sweeps/dnntune_mobilenet.yaml",
    ],
    "runs": [
        "edgebench run --model lenet --batch-size 32 --steps 20 --warmup 5 --threads 2 --cores 0x3",
        "edgebench run --model mobilenetv2 --batch-size 8 --json",
        "edgebench run --model lenet --batch-size 8 --target-ci 2%",
        "edgebench run --model alexnet --target-ci 1% --max-time 5m",
        "edgebench run --model mypkg.mymodule:factory --batch-size 16",
        'edgebench run --command "python train.py --steps 25" --push train.py      --step-pattern'
        " 'step \\d+ loss (?P<loss>[0-9.]+)' --model my_net --warmup 5 --steps 20",
        'edgebench run --command "./benchmark_model --graph=mobilenet_v1.tflite --num_threads=4"'
        "      --push benchmark_model,mobilenet_v1.tflite --step-pattern tflite-benchmark-model"
        " --model mobilenet_v1_tflite",
        'edgebench run --command "./runTrainDemo.out MnistBenchmark data 8 MobileNetV2" --push runTrainDemo.out,data'
        "      --step-pattern mnn-train-demo --model MobileNetV2 --batch-size 8",
        'edgebench run --command "./benchmark_model --graph=tiny_cnn.tflite --enable_op_profiling=true --num_runs=20'
        ' --min_secs=0"      --push benchmark_model,tiny_cnn.tflite --step-pattern tflite-benchmark-model'
        " --trace layers --model tiny_cnn_tflite",
        "edgebench run --model vgg16 --batch-size 32 --memory-budget 8GiB",
        "edgebench feasibility --memory-budget 8GiB",
        "edgebench feasibility --memory-budget 2GiB -m resnet50 -m alexnet --batch-sizes 1,8,32 --json",
    ],
    "repeats": [
        "edgebench run --model lenet --backend fake --steps 20 --repeats 3",
        "edgebench sweep --set models=[lenet] --set batch_sizes=[8] --set backend=fake --set steps=20 --set cores=[0x1]"
        " --set repeats=3"
        " --set name=on-cpu0",
        "edgebench sweep --set models=[lenet] --set batch_sizes=[8] --set backend=fake --set steps=20 --set cores=[0x2]"
        " --set repeats=3"
        " --set name=on-cpu1",
        "edgebench compare on-cpu0 on-cpu1",
    ],
    "accuracy": [
        "edgebench run --model lenet --data mnist --until-accuracy 0.95",
        "edgebench run --model char_cnn --data shakespeare --until-accuracy 0.45 --eval-every 25",
    ],
    "frameworks": ["edgebench frameworks --models lenet,mobilenet_v2 --mode infer --precisions fp32,int8"],
    "executorch": [
        "edgebench run --backend executorch --model lenet",
        "edgebench run --backend executorch --model lenet --mode infer --precision int8 --trace layers",
        "edgebench run --backend executorch-portable --model lenet --mode infer --precision fp16",
        "edgebench run --model lenet.pte --trace layers",
    ],
    "backends": [
        "edgebench run -m mobilenet_v2 --mode infer --backend onnxruntime --precision int8",
        "edgebench run -m lenet --mode infer --precision int8",
        "edgebench run --backend mnn --model lenet --json",
        "edgebench run --backend mnn --model mobilenet_v2 --mode infer --precision fp16 --trace layers",
        "edgebench run --backend mnn --model lenet --mode infer --precision int8",
        "edgebench run -m lenet --backend litert --mode infer --batch-size 1 --trace layers",
        "edgebench run -m lenet --backend litert --mode infer --batch-size 1 --precision int8-dynamic",
        "edgebench run --model tiny_cnn.tflite --trace layers",
    ],
    "partition": [
        "edgebench run --model mobilenet_v2 --batch-size 8 --trace layers",
        "edgebench partition --model mobilenet_v2 --network wifi --objective latency",
        "edgebench partition -m mobilenet_v2 --network lte --objective energy --estimate-energy idle=2.7W,max=6.4W",
        "edgebench partition -m mobilenet_v2 --mode train --batch-size 8 --transfer-dtype fp16 --json",
        "edgebench import server.sqlite",
        RESNET_PARTITION,
    ],
    "studies": [
        "edgebench study tx2 --quick",
        "edgebench study tx2 --budget 30m --html tx2.html",
        "edgebench study dnntune --quick",
        "edgebench study mnn-suite --quick",
    ],
    "devices": [
        "edgebench sensors --target ssh://pi@raspberrypi",
        "edgebench run --target ssh://orin --model mobilenet_v2 --steps 20",
        "edgebench monitor --target orin --duration 10m --out orin-mon",
        "edgebench run --target adb://8A2X0KDLN --root --command './runTrainDemo.out MnistBenchmark data 32 Lenet'"
        "      --push build/runTrainDemo.out,data --step-pattern mnn-train-demo",
        "edgebench snapshot --target adb:// -o pixel-tree",
        "edgebench sensors --sysfs-root pixel-tree",
        "edgebench run --target adb://192.168.1.23:5555 --root      --command 'sh bench.sh' --push bench.sh "
        "--step-pattern '^iter \\d+$' --steps 5 --warmup 1",
        "edgebench run --target adb://8A2X0KDLN --mode infer --trace layers --warmup 5 --steps 20      --command "
        "'./executor_runner --model_path lenet.pte --num_executions 25 --etdump_path lenet.etdp'      --push "
        "executor_runner,lenet.pte --step-pattern executorch-runner",
    ],
    "lm": [
        "edgebench run --model lm_1m --data shakespeare --batch-size 4 --input-shape 64 --steps 5 --contexts 32,64,128"
        " --decode-tokens 8 --generations 2",
        *(f"edgebench plot {kind} TRIAL -o {out}" for kind, out in LM_PLOTS.items()),
        "edgebench partition -m lm_1m --generation --network lte",
        LM_LORA,
        "edgebench run --model lm_1m --finetune lora --frozen-weights int8 --checkpointing blocks --batch-size 4"
        " --input-shape 64 --steps 3 --contexts none",
        "edgebench run --model lm_1m --mode infer --frozen-weights torchao-int8 --steps 3 --contexts 32,128"
        " --decode-tokens 8 --json",
    ],
    "lm-sweep": [
        "edgebench sweep examples/sweeps/lm_lora.yaml",
        "edgebench plot sweep --sweep lm-lora --x lora_rank --y tokens_per_s -o rank.png",
        "edgebench plot sweep --sweep lm-lora --x seq_len --y peak_memory_bytes -o seq.png",
    ],
    "fleet": [
        "edgebench fleet join --targets pixel-a=adb://R58M1234 --class pixel-a=pixel7",
        "edgebench fleet join --address head:6379 --targets orin=ssh://orin --targets pixel-b=adb://R58M9999 "
        "     --class pixel-b=pixel7",
        "edgebench fleet status",
        "edgebench sweep study.yaml --executor ray",
        "edgebench sweep study.yaml --executor ray --target orin",
        "edgebench sweep study.yaml --executor ray --target class:pixel7",
        "edgebench sweep study.yaml --executor ray --resume",
    ],
}

#: The pages' fleet study: a command workload of two short steps (Ray and the devices are the point, not a model).
STUDY = {
    "name": "study",
    "models": ["lenet"],
    "batch_sizes": [1, 2],
    "backend": "command",
    "command": "sleep 0.1; echo step; sleep 0.1; echo step",
    "step_pattern": "^step$",
    "steps": 2,
    "warmup": 0,
    "infer_steps": 0,
    "idle": "0",
}

#: A user's training script (own-workload.md): it prints the line the page's --step-pattern reads.
TRAIN_PY = """import argparse, time
parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=10)
args = parser.parse_args()
loss = 2.3
for step in range(args.steps):
    time.sleep(0.02)
    loss *= 0.97
    print(f"step {step} loss {loss:.4f}", flush=True)
"""

#: phones.md's bench.sh: one line per iteration.
BENCH_SH = 'i=0\nwhile [ $i -lt 8 ]; do sleep 0.05; i=$((i+1)); echo "iter $i"; done\n'


def _tool(output: Path, extra: str = "") -> str:
    """A stand-in for a device binary (TFLite's benchmark_model, the MNN suite's runTrainDemo.out): it prints the real
    tool's recorded output (tests/fixtures/command) and does what else the tool does (``extra``)."""
    return f"#!/bin/sh\ncat <<'EOF'\n{output.read_text()}EOF\n{extra}"


def _benchmark_model(commands: Path) -> str:
    """LiteRT's benchmark_model as its recorded outputs show it: with ``--enable_op_profiling=true`` the run that
    ends in the op-profiling tables, else the plain one."""
    profiled = (commands / "tflite_benchmark_model_op_profiling.out").read_text()
    plain = (commands / "tflite_benchmark_model.out").read_text()
    return (f"#!/bin/sh\ncase \"$*\" in\n*--enable_op_profiling=true*) cat <<'EOF'\n{profiled}EOF\n;;\n"
            f"*) cat <<'EOF'\n{plain}EOF\n;;\nesac\n")  # fmt: skip


@dataclass
class Sandbox:
    """The working folder, store, devices and values the examples run against."""

    cli: Edgebench
    folder: Path
    env: dict[str, str]
    values: dict[str, Callable[[], str] | str] = field(default_factory=dict)

    def fill(self, line: str) -> str:
        names = set(re.findall(r"\{(\w+)\}", line))
        found = {n: (v() if callable(v) else v) for n, v in self.values.items() if n in names}
        return line.format(**found)


def _newest(store: Path, where: str) -> str:
    with sqlite3.connect(store) as db:
        row = db.execute(f"select trial_id from trials where {where} order by created_at desc limit 1").fetchone()
    assert row, f"no stored trial where {where}"
    return str(row[0])


def _ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


@pytest.fixture(scope="module")
def sandbox(cli_factory, traced_lenet, onnx_cache, sshd, adbd_sim, tmp_path_factory) -> Iterator[Sandbox]:  # noqa: F811
    """The working folder, store and devices, built once (the session's traced trial, ONNX exports, sshd and adb
    server are shared with the other modules); the Ray cluster is started by the fleet examples themselves and
    stopped here."""
    cli = cli_factory("docs-sandbox")
    folder = cli.cwd
    assert folder is not None
    record = store_with_traced_lenet(traced_lenet, cli.store_path)
    # the files the examples name
    shutil.copytree(ROOT / "examples", folder / "examples")
    (folder / "train.py").write_text(TRAIN_PY)
    (folder / "bench.sh").write_text(BENCH_SH)
    (folder / "mypkg").mkdir()
    page = (ROOT / "docs" / "guide" / "own-workload.md").read_text()
    (folder / "mypkg" / "mymodule.py").write_text(
        re.search(r"```python\n(# mypkg/mymodule\.py\n.*?)```", page, re.S)[1]
    )
    (folder / "study.yaml").write_text(yaml.safe_dump(STUDY))
    shutil.copytree(FIXTURES / "mnn_suite" / "suite_repo", folder / "old")
    commands = FIXTURES / "command"
    demo = _tool(
        commands / "mnn_train_demo.out",
        f"cat > train_stamp.result <<'EOF'\n{(commands / 'train_stamp.result').read_text()}EOF\n",
    )
    shutil.copy(FIXTURES / "executorch" / "lenet_xnnpack.etdp", folder / "recorded.etdp")
    runner = _tool(commands / "executorch_runner.out", f"cp {folder / 'recorded.etdp'} lenet.etdp\n")
    tools = {"benchmark_model": _benchmark_model(commands), "runTrainDemo.out": demo,
             "build/runTrainDemo.out": demo, "mobilenet_v1.tflite": "", "data/mnist.bin": "",
             "executor_runner": runner}  # fmt: skip
    for path, text in tools.items():
        (folder / path).parent.mkdir(exist_ok=True)
        (folder / path).write_text(text)
        (folder / path).chmod(0o755)
    shutil.copy(FIXTURES / "models" / "tiny_cnn.tflite", folder / "tiny_cnn.tflite")  # a real .tflite file
    shutil.copy(FIXTURES / "executorch" / "tiny_xnnpack.pte", folder / "lenet.pte")  # backends.md's program
    (folder / "tests").symlink_to(ROOT / "tests")  # sensors.md names tests/fixtures/sysfs/jetson_tx2 from the checkout
    # the user's ssh config: Host aliases of the test sshd, read by an ``ssh`` first on PATH
    ssh_config = folder / "ssh_config"
    alias = sshd.ssh_config.read_text().split("\n", 1)[1]
    ssh_config.write_text(f"Host orin raspberrypi\n{alias}")
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").write_text(f'#!/bin/sh\nexec {shutil.which("ssh")} -F {ssh_config} "$@"\n')
    (bin_dir / "ssh").chmod(0o755)
    config = folder / "config.yaml"
    orin = {"url": "ssh://orin", "ssh_config": str(ssh_config), "python": sys.executable,
            "env": {"PYTHONPATH": str(SRC)}, "workdir": str(folder / "orin-work")}  # fmt: skip
    config.write_text(yaml.safe_dump({"targets": {"orin": orin}}))
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "EDGEBENCH_CONFIG": str(config)}
    cli = Edgebench(cli.store_path, cli.cache_path, cwd=folder)
    # the store: the traced LeNet trial and the golden schema-3 store (mnn-suite.md's import adds the Meizu's runs);
    # a server's store holding a traced ResNet-50 trial (partition.md imports it and names it --cloud-trial); the
    # device's traced MobileNetV2 trial the partition examples pick (the newest of this host, with the energy
    # estimate the lte example asks for), on the 32x32 preset so that no 224x224 trial is run for them
    server = folder / "server.sqlite"
    small = ["--preset", "cifar10", "--trace", "layers", "--steps", "2", "--warmup", "1", "--infer-steps", "0",
             "--idle", "0"]  # fmt: skip
    (folder / "golden").mkdir()
    with ThreadPoolExecutor(max_workers=3) as pool:
        stored = [
            # a copy: a reader of a WAL store writes its -shm file beside it, and the fixture stays as it is
            pool.submit(cli, "import", str(copy_of_the_golden_store(folder / "golden"))),
            pool.submit(cli, "run", "-m", "resnet50", "--mode", "infer", "-b", "1", *small, store=server),
            pool.submit(cli, "run", "-m", "mobilenet_v2", "-b", "8", "--estimate-energy", "idle=2.7W,max=6.4W", *small),
        ]
        phone_a = adbd_sim.phone("docs-rooted", "--rooted", "--sys-tree", str(FIXTURES / "sysfs" / "android_phone"))
        phone_b = adbd_sim.phone("docs-b", "--rooted")
    for done in stored:
        _ok(done.result())
    sleeper = subprocess.Popen(["sleep", "600"])
    ray_root = Path(tmp_path_factory.mktemp("ray"))
    sandbox = Sandbox(cli, folder, env)
    sandbox.values = {
        "traced": record["trial_id"],
        "golden_a": "20261123-174043",
        "golden_b": "20261123-174053",
        "user": getpass.getuser(),
        "phone_a": phone_a.serial,
        "phone_b": phone_b.serial,
        "pid": str(sleeper.pid),
        "sysfs": str(FIXTURES / "sysfs"),
        "imported": lambda: _newest(cli.store_path, "json_extract(result_json, '$.imported_from') is not null"),
        "server_trial": lambda: _newest(server, "model = 'resnet50'"),
        "lm_trial": lambda: _newest(
            cli.store_path, "model = 'lm_1m' and json_extract(result_json, '$.language_model.generation') is not null"
        ),
    }
    cluster = LocalCluster(ray_root)
    sandbox.values.update(_ray_values(cluster, sandbox))
    try:
        yield sandbox
    finally:
        sleeper.kill()
        sleeper.wait()
        cluster.stop()


def _ray_values(cluster: LocalCluster, sandbox: Sandbox) -> dict[str, str]:
    """The fleet examples' head and node arguments: the ports, session folder and worker settings of ``cluster``
    (tests/ray_cluster.py), whose ``stop`` ends what the examples started."""
    root = cluster.root
    sandbox.env.update({k: v for k, v in cluster.env.items() if k.startswith("RAY_")})
    sandbox.env["RAY_ADDRESS"] = cluster.address
    common = f"--num-cpus 1 --object-store-memory {cluster.object_store_bytes}"
    low = cluster._worker_port  # as LocalCluster.join picks them: below the ephemeral range, a random block
    workers = "--min-worker-port={} --max-worker-port={} --ray-client-server-port={} --disable-usage-stats"
    (root / "tmp").mkdir()
    return {
        "ray_tmp": str(root / "tmp"),
        "ray_address": cluster.address,
        "head_args": f"--name h1 --port {cluster.port} --temp-dir {cluster.temp} {common} -- "
        + workers.format(low, low + 150, free_port())
        + f" --node-manager-port={free_port()} --object-manager-port={free_port()}",
        "node_args": f"--name h2 {common} -- " + workers.format(low + 200, low + 350, free_port()),
    }


def _run(sandbox: Sandbox, line: str) -> subprocess.CompletedProcess[str]:
    sub = SUBSTITUTED.get(line)
    command = sandbox.fill(sub.run if sub else line)
    args = shlex.split(command)
    assert args[0] == "edgebench", command
    store = sandbox.folder / f"{OWN_STORE_NAMES[line]}.sqlite" if line in OWN_STORE else None
    env = dict(sandbox.env)
    if line.startswith("edgebench fleet join"):
        # the nodes are stopped with SIGKILL (tests/ray_cluster.py): what their workers had open on a device (a
        # remote target's mirror folder) cannot be removed by them, so they keep their temporary files apart
        env["TMPDIR"] = str(sandbox.values["ray_tmp"])
    try:
        return sandbox.cli(*args[1:], env=env, store=store, timeout=300)
    except subprocess.TimeoutExpired as exc:  # this example's test fails saying so; the other lanes go on
        return subprocess.CompletedProcess(args, -9, str(exc.stdout or ""), f"{command}: timed out after 300 s")


@pytest.fixture(scope="module")
def ran(sandbox) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every example's process, the lanes run side by side."""

    def lane(lines: list[str]) -> dict[str, subprocess.CompletedProcess[str]]:
        return {line: _run(sandbox, line) for line in lines}

    results: dict[str, subprocess.CompletedProcess[str]] = {}
    # One lane a core and one more (most of an example is its processes' CPU time; more lanes than that only
    # slowed every example down, past its timeout under load)
    with ThreadPoolExecutor(max_workers=min(len(LANES), (os.cpu_count() or 1) + 1)) as pool:
        for done in pool.map(lane, LANES.values()):
            results.update(done)
    return results


def test_every_docs_example_is_run_here():
    placed = [line for lines in LANES.values() for line in lines]
    assert len(placed) == len(set(placed)), "an example is in two lanes"
    documented = {line for _, line in examples()}
    assert documented - set(NOT_RUN) == set(placed), (
        f"not run: {sorted(documented - set(placed) - set(NOT_RUN))}; gone from the docs: "
        f"{sorted(set(placed) - documented)}"
    )
    assert not set(SUBSTITUTED) - documented, sorted(set(SUBSTITUTED) - documented)


#: Flags a substitution drops, and why: every other flag of an example is in what runs instead.
DROPPED = {"--budget": "study tx2 --budget 30m is run as --quick (a 30-minute plan)"}


def _flags(line: str) -> set[str]:
    return {word.split("=")[0] for word in shlex.split(line) if word.startswith("-")}


def test_a_substitution_keeps_the_example_s_command_and_flags():
    for line, sub in SUBSTITUTED.items():
        written, run = shlex.split(line), shlex.split(sub.run)
        assert run[:2] == written[:2], f"`{line}` runs another command: `{sub.run}`"
        if re.search(r"\[-|<[a-z]|\|", line):  # a usage line: its flags are optional
            continue
        lost = _flags(line) - _flags(sub.run) - set(DROPPED)
        assert not lost, f"`{line}` loses {sorted(lost)} in `{sub.run}`"


@pytest.mark.parametrize(("page", "line"), examples(), ids=[f"{p}:{i}" for i, (p, _) in enumerate(examples())])
def test_docs_example_runs(ran, page, line):
    proc = ran[line]
    expect = EXPECTED.get(line, Expect())
    out = proc.stdout + proc.stderr
    assert proc.returncode == expect.code, f"{page}: `{line}` exited {proc.returncode}:\n{out[-3000:]}"
    for shown in expect.shows:
        assert re.search(shown, out), f"{page}: `{line}` does not show {shown!r}:\n{out[-3000:]}"


#: The pages whose ```python blocks are a notebook to run (the others' blocks are module files or fragments), and
#: what each shows (regular expressions on its output).
PYTHON_PAGES: dict[str, tuple[str, ...]] = {
    "guide/python-api.md": (
        r"lenet fake \d+\.\d+ ms a step",
        r"stored in None",
        r"lenet fake \S+ \d+\.\d+ ms",
        r"B/A \d",
    ),
}


def python_blocks(page: str) -> list[str]:
    """The ```python blocks of ``page`` (relative to docs/), in order."""
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / page).read_text(), re.S)


def test_every_python_api_example_is_run():
    calling = {
        str(page.relative_to(ROOT / "docs"))
        for page in (ROOT / "docs").rglob("*.md")
        if any("edgebench.workflows" in block for block in python_blocks(str(page.relative_to(ROOT / "docs"))))
    }
    assert calling <= set(PYTHON_PAGES), f"Python blocks calling the workflows, not run: {sorted(calling)}"


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_docs_python_example_runs(page, tmp_path):
    """The page's blocks as one script in a fresh interpreter (a notebook's cells, run in order), in a folder of
    their own with a default store there (an example that forgets its store writes nothing of the user's)."""
    blocks = python_blocks(page)
    assert blocks, f"{page} has no Python block"
    env = dict(os.environ, EDGEBENCH_STORE=str(tmp_path / "default.sqlite"), EDGEBENCH_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", "\n".join(blocks)], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=300)  # fmt: skip
    assert proc.returncode == 0, f"{page}: its Python blocks failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    for shown in PYTHON_PAGES[page]:
        assert re.search(shown, proc.stdout), f"{page}: its Python blocks do not show {shown!r}:\n{proc.stdout}"
    assert not (tmp_path / "default.sqlite").exists(), "an example wrote to the default store"

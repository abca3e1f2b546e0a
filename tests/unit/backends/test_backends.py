"""The backend seam: framework-free specs and capabilities, and the refusal of what a backend cannot run."""

import json
import subprocess
import sys
import textwrap

import pytest
from pydantic import ValidationError

from edgebench.backends.base import Backend, Capabilities
from edgebench.config.flags import build
from edgebench.config.trial import make_trial
from edgebench.errors import UsageError
from edgebench.records.trial import Trial
from edgebench.registry import BACKENDS, MODELS
from edgebench.workloads import get_workload
from edgebench.workloads.tasks import TASKS
from tests.paths import EXAMPLES

#: A backend that trains on the CPU in fp32 and nothing else, registered only by the tests below.
LIMITED = Backend(
    name="limited",
    capabilities=Capabilities(modes=("train",), precisions=("fp32",), devices=("cpu",), trace_kinds=("none",)),
    session="edgebench.backends.torch.session:open_session",
    tasks="edgebench.backends.torch.tasks:task_session",
)


def imports_torch(code: str) -> bool:
    """Run ``code`` in a fresh interpreter and say whether it left torch in ``sys.modules``."""
    script = textwrap.dedent(code) + "\nimport sys, json\nprint(json.dumps('torch' in sys.modules))\n"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "code",
    [
        # --help, and the listing of the specs alone
        "from edgebench.cli import main\nassert main(['--help']) == 0",
        "from edgebench.cli import main\nassert main(['models', '--no-measure', '--json']) == 0",
        "from edgebench.cli import main\nassert main(['models', 'resnet50', '--no-measure']) == 0",
        # config validation and sweep planning, presets and real data included
        f"""
        from edgebench.config.sweep_file import load_config
        from edgebench.host.sysfs import SysFS
        from edgebench.sweep.plan import plan
        config = load_config({str(EXAMPLES / "mnn_suite_cores.yaml")!r}, ["models=[resnet50, char_cnn]"]).config
        assert plan(config, source=None, sysfs=SysFS("/nonexistent"), allowed=tuple(range(8))).trials
        """,
        "from edgebench.records.trial import Trial\nTrial(model='resnet50', preset='cifar10')\n"
        "Trial(model='lenet', data='mnist')\nTrial(model='char_cnn', data='shakespeare')",
        # every workload spec, and the worker's loop with its stop rules
        "from edgebench.registry import MODELS\n[MODELS.load(n) for n in MODELS.names()]",
        "import edgebench.agents.python.worker, edgebench.agents.python.stopping, edgebench.backends.base",
        # the workstation's side of a trial: launcher, targets, agent, measuring a bundle, the store and reports
        "import edgebench.launch.trial, edgebench.agents.python.agent, edgebench.targets.local, "
        "edgebench.measure.trial",
        "import edgebench.store, edgebench.report.summary, edgebench.report.tables, edgebench.store.trials",
        "from edgebench.registry import BACKENDS\nBACKENDS.load('torch').capabilities",
        "from edgebench.registry import BACKENDS\nBACKENDS.load('onnxruntime').capabilities\n"
        "BACKENDS.load('onnxruntime').missing_device('cpu')",
    ],
)
def test_imports_no_torch(code):
    assert imports_torch(code) is False


def test_the_torch_backend_does_import_torch():
    """The check above can fail: building a session is where torch comes in."""
    assert imports_torch("from edgebench.workloads import get_workload\nget_workload('lenet').session(2)") is True


def test_every_workload_names_a_known_task_and_a_model_builder():
    for name in MODELS.names():
        workload = MODELS.load(name)
        assert workload.task in TASKS, name
        assert isinstance(workload.model, str) and workload.model.startswith("edgebench.zoo."), name


def test_torch_capabilities_cover_what_trials_may_ask():
    capabilities = BACKENDS.load("torch").capabilities
    assert set(capabilities.precisions) == {"fp32", "bf16", "fp16", "int8"}
    assert set(capabilities.trace_kinds) == {"none", "layers", "ops"}
    assert set(capabilities.devices) == {"cpu", "cuda"} and set(capabilities.modes) == {"train", "infer"}


@pytest.fixture
def limited(monkeypatch):
    monkeypatch.setitem(BACKENDS._entries, "limited", "tests.unit.backends.test_backends:LIMITED")
    return "limited"


@pytest.mark.parametrize(
    ("option", "value", "flag", "message"),
    [
        ("precision", "bf16", "--precision", "the limited backend cannot run at precision 'bf16'; it offers: fp32"),
        ("trace", "layers", "--trace", "the limited backend cannot run trace 'layers'; it offers: none"),
        ("device", "cuda:1", "--backend", "the limited backend cannot run on device 'cuda'; it offers: cpu"),
        ("infer_steps", 10, "--backend", "the limited backend cannot run mode 'infer'; it offers: train"),
        ("mode", "infer", "--backend", "the limited backend cannot run mode 'infer'; it offers: train"),
    ],
)
def test_a_trial_its_backend_cannot_run_is_a_usage_error(limited, option, value, flag, message):
    assert Trial(backend=limited, infer_steps=0).backend == "limited"
    with pytest.raises(UsageError) as info:
        build(make_trial, {"backend": limited, "infer_steps": 0, option: value}, {})
    assert (info.value.field, info.value.message) == (flag, message)
    assert "\n" not in str(info.value)


def test_an_unknown_backend_names_the_known_ones():
    with pytest.raises(ValidationError, match="unknown backend 'mace': must be 'torch'"):
        make_trial(backend="mace")


def test_the_spec_builds_its_model_only_when_asked():
    workload = get_workload("lenet")
    assert workload.model == "edgebench.zoo.lenet:lenet"
    assert sum(p.numel() for p in workload.build_model(10, (1, 28, 28)).parameters()) == 349_980

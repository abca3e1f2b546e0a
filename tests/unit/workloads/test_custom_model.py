"""Bring your own model: ``--model mypkg.mymodule:factory``."""

import math
import sys

import pytest
from pydantic import ValidationError

from edgebench.config.trial import make_trial
from edgebench.records.trial import Trial
from edgebench.workloads import NAMED_MODELS_ENV, ModelNotNamed, get_workload, name_model, named_workload
from tests.paths import BYO_MODELS


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """The user's module on the path, and its models named, as ``--model byo_models:NAME`` names one."""
    (tmp_path / "byo_models.py").write_text(BYO_MODELS.read_text())
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("tiny", "autoencoder", "WORKLOAD"):
        name_model(f"byo_models:{name}")
    yield "byo_models"
    sys.modules.pop("byo_models", None)


def test_factory_returning_a_module_trains_as_a_classifier(user_module):
    trial = Trial(model=f"{user_module}:tiny")
    assert trial.model == "byo_models:tiny"
    workload = get_workload(trial.model)
    assert (workload.input_shape, workload.num_classes, workload.domain) == ((3, 8, 8), 4, "custom")
    session = workload.session(5)
    losses = [float(session.train_step()) for _ in range(3)]
    assert all(map(math.isfinite, losses)) and losses[-1] < losses[0]
    assert session.model(session.inputs).shape == (5, 4)


def test_factory_with_its_own_loss(user_module):
    session = get_workload(f"{user_module}:autoencoder").session(8)
    losses = [float(session.train_step()) for _ in range(3)]
    assert losses[-1] < losses[0]


def test_a_workload_object_is_used_as_it_is(user_module):
    assert get_workload(f"{user_module}:WORKLOAD").name == "mine"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz:build", "cannot import 'no_such_module_xyz:build': ModuleNotFoundError"),
        ("byo_models:missing", "AttributeError"),
        ("byo_models:NOT_A_MODEL", "is a int, not a Workload or a callable"),
        ("byo_models:", "is not module:attribute"),
    ],
)
def test_bad_targets_fail_validation_in_one_line(user_module, target, message):
    with pytest.raises(ValidationError, match=message) as info:
        make_trial(model=target)
    assert info.value.errors()[0]["loc"] == ("model",)


def test_parsing_a_trial_imports_nothing_and_the_edge_check_does(tmp_path, monkeypatch):
    """A stored or bundled trial reads back without the user's module; the check where input enters imports it."""
    (tmp_path / "side_effect_models.py").write_text(
        "import pathlib\npathlib.Path(__file__).with_suffix('.imported').touch()\n"
        "def tiny(num_classes=10):\n    raise RuntimeError('not built here')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    parsed = Trial.model_validate_json(Trial(model="side_effect_models:tiny").model_dump_json())
    assert parsed.model == "side_effect_models:tiny"
    assert not (tmp_path / "side_effect_models.imported").exists()
    assert Trial(model="no_such_module_anywhere:Net").model == "no_such_module_anywhere:Net"
    with pytest.raises(ValidationError) as info:
        make_trial(model="no_such_module_anywhere:Net")
    assert info.value.errors()[0]["loc"] == ("model",)
    make_trial(model="side_effect_models:tiny")
    assert (tmp_path / "side_effect_models.imported").exists()


def test_a_model_named_by_data_is_not_imported(tmp_path, monkeypatch):
    """Data never becomes code (issue 39): a ``module:attr`` a stored trial or a shared file holds is imported only
    once the user names it in this command (``--model``), or sets ``$EDGEBENCH_NAMED_MODELS`` by hand."""
    (tmp_path / "evil_models.py").write_text("import pathlib\npathlib.Path(__file__).with_suffix('.ran').touch()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModelNotNamed, match="add --model evil_models:build"):
        get_workload("evil_models:build")
    from edgebench.zoo.custom import resolve

    with pytest.raises(ModelNotNamed):
        resolve("evil_models:build")  # the import itself checks too
    assert not (tmp_path / "evil_models.ran").exists()
    monkeypatch.setenv(NAMED_MODELS_ENV, "other:x")
    with pytest.raises(ModelNotNamed):
        get_workload("evil_models:build")
    with pytest.raises(ValueError, match="cannot import 'evil_models:build': AttributeError"):
        named_workload("evil_models:build")  # named: imported (and its missing factory said in one line)
    assert (tmp_path / "evil_models.ran").exists()
    sys.modules.pop("evil_models", None)

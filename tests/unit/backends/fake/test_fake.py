"""The fake backend (``--backend fake``): a real plugin whose steps take a set time and may fail at a set step,
importing no framework, so the sweep's resume and failure paths run end to end in seconds.  Where a test is about a
framework (torch, MNN, ONNX Runtime) it keeps running that framework; this is for what surrounds a backend."""

from __future__ import annotations

import pytest

from edgebench.backends.fake.session import FAIL_AT_ENV, STEP_MS_ENV, FakeStepFailure, open_session
from edgebench.cli import main
from edgebench.errors import UsageError
from edgebench.records.trial import Trial
from edgebench.registry import BACKENDS


def test_it_is_registered_like_the_real_backends_and_imports_no_framework():
    assert "fake" in BACKENDS.names()
    backend = BACKENDS.load("fake")
    assert backend.capabilities.precisions == ("fp32",)
    assert backend.open_session.__func__ is type(BACKENDS.load("torch")).open_session


def test_steps_fail_at_the_step_asked_for(monkeypatch):
    monkeypatch.setenv(STEP_MS_ENV, "0")
    monkeypatch.setenv(FAIL_AT_ENV, "2")
    session = open_session(Trial(backend="fake"))
    assert session.input_shape == (1, 28, 28) and session.num_classes == 10  # lenet's, from the framework-free spec
    first, second = session.train_step(), session.train_step()
    assert second < first
    with pytest.raises(FakeStepFailure, match="fails at step 2"):
        session.train_step()


def test_a_bad_setting_names_the_variable(monkeypatch):
    monkeypatch.setenv(STEP_MS_ENV, "fast")
    with pytest.raises(UsageError) as err:
        open_session(Trial(backend="fake"))
    assert err.value.field == STEP_MS_ENV and "'fast' is not a number" in err.value.message


def test_what_it_cannot_run_is_refused_before_anything_runs(capsys):
    assert main(["run", "--no-store", "--backend", "fake", "--precision", "int8", "--mode", "infer"]) == 2
    assert capsys.readouterr().err == (
        "edgebench: error: --precision: the fake backend cannot run at precision 'int8'; it offers: fp32\n"
    )

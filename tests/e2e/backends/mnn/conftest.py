"""MNN sessions of converted models, shared by this folder's modules: converting a model takes seconds, so each is
built once per module that asks for it."""

from __future__ import annotations

import pytest

from tests.conftest import require_mnn


@pytest.fixture(scope="module")
def lenet_train():
    require_mnn()
    from edgebench.backends.mnn.session import MnnSession
    from edgebench.records.trial import Trial

    return MnnSession(Trial(model="lenet", backend="mnn", batch_size=4, threads=1))


@pytest.fixture(scope="module")
def mobilenet_train():
    require_mnn()
    from edgebench.backends.mnn.session import MnnSession
    from edgebench.records.trial import Trial

    trial = Trial(model="mobilenet_v2", backend="mnn", batch_size=2, threads=1, input_shape=(3, 32, 32), num_classes=10)
    return MnnSession(trial)

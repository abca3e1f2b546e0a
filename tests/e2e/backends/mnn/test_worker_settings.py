"""The MNN worker's optimizer is the workload's, read off a converted model's session (seconds), so apart from the
quick unit tests in tests/unit/backends/mnn/test_worker.py.
"""

from __future__ import annotations

import pytest

from tests.conftest import require_mnn


def test_optimizer_settings_are_the_workloads():
    require_mnn()
    from edgebench.backends.mnn.session import MnnSession
    from edgebench.records.trial import Trial
    from edgebench.workloads import get_workload

    session = MnnSession(Trial(model="lenet", backend="mnn", batch_size=2, threads=1))
    settings = get_workload("lenet").optimizer
    assert session.optimizer.momentum == pytest.approx(settings.momentum)
    assert session.optimizer.weight_decay == pytest.approx(settings.weight_decay)
    assert session.optimizer.learning_rate == pytest.approx(settings.lr)

"""What every torch task's session is made from (``SessionInputs``, declared once): the same inputs give the same
session, a dataset the task cannot train on is refused before anything is built, and the token tasks score every
position of their labels."""

from __future__ import annotations

import pytest
import torch

from edgebench.backends.torch.tasks import task_session
from edgebench.backends.torch.tasks.base import SessionInputs, TokenSession
from edgebench.workloads import get_workload


def test_a_dataset_the_task_cannot_train_on_is_refused_naming_the_ones_it_can():
    with pytest.raises(ValueError, match=r"cannot train on 'mnist' \(its task takes: none\)"):
        task_session(get_workload("dcgan"), 2, input_shape=(3, 64, 64), num_classes=1, device="meta", seed=0,
                     data="mnist")  # fmt: skip


def test_the_seed_makes_the_synthetic_batch():
    inputs = SessionInputs(batch_size=2, input_shape=(8,), num_classes=5, device="cpu", seed=3)
    assert inputs.generator().initial_seed() == 3 and inputs.data is None  # synthetic unless a dataset is named
    first, again = (task_session(get_workload("char_cnn"), 2, input_shape=(8,), num_classes=5, device="cpu", seed=3)
                    for _ in range(2))  # fmt: skip
    assert isinstance(first, TokenSession) and torch.equal(first.tokens, again.tokens)
    assert first.labels().shape == (2, 8) and torch.equal(first.labels(), first.tokens[:, 1:])

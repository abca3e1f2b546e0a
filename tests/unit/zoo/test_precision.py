"""Mixed precision: the trial's step runs under autocast with the precision's dtype; fp32 is left untouched."""

import torch

from edgebench.workloads import get_workload
from edgebench.zoo.precision import at_precision


def test_fp32_is_the_step_itself():
    def step():
        return None

    assert at_precision(step, "fp32", "cpu") is step


def test_bf16_and_fp16_train_under_autocast():
    for precision, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        seen = []
        session = get_workload("lenet").session(4)
        original = session.model.forward

        def forward(x, original=original, seen=seen):
            out = original(x)
            seen.append((torch.is_autocast_enabled("cpu"), out.dtype))
            return out

        session.model.forward = forward
        loss = at_precision(session.train_step, precision, "cpu")()
        assert seen == [(True, dtype)]  # the logits were computed in the low precision
        assert torch.isfinite(loss) and next(session.model.parameters()).dtype == torch.float32
    assert not torch.is_autocast_enabled("cpu")

"""Speech recognition: CTC loss over per-step symbol log-probabilities (blank = the last symbol).

Targets are random transcripts a quarter as long as the input, so every alignment CTC needs exists.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from edgebench.backends.torch.data.synthetic import token_batch
from edgebench.backends.torch.tasks.base import LossSession, SessionInputs, Task


class CTCSession(LossSession):
    def __init__(self, model: torch.nn.Module, task: Task, features: torch.Tensor, targets: torch.Tensor) -> None:
        super().__init__(model, task.workload.optimizer)
        self.features, self.targets = features, targets
        batch, steps = features.shape[:2]
        self.input_lengths = torch.full((batch,), steps, dtype=torch.long)
        self.target_lengths = torch.full((batch,), targets.shape[1], dtype=torch.long)

    def loss(self) -> torch.Tensor:
        log_probs = F.log_softmax(self.model(self.features), dim=-1).transpose(0, 1)  # (time, batch, symbols)
        if log_probs.device.type == "meta":
            # CTC has no meta kernel; its own cost is not a matmul, so the FLOP count is the same with a stand-in.
            return log_probs.mean()
        blank = log_probs.shape[-1] - 1
        return F.ctc_loss(log_probs, self.targets, self.input_lengths, self.target_lengths, blank=blank)

    @torch.no_grad()
    def infer_step(self) -> None:
        self.model(self.features)


class CTCTask(Task):
    def session(self, inputs: SessionInputs) -> CTCSession:
        shape = inputs.input_shape
        if len(shape) != 2:
            raise ValueError(f"a speech input is (time_steps, features), not {shape}")
        model, generator = self.build(inputs), inputs.generator()
        features = torch.randn((inputs.batch_size, *shape), generator=generator)
        targets = token_batch(inputs.batch_size, (max(1, shape[0] // 4),), inputs.num_classes - 1, generator)
        return CTCSession(model, self, features.to(inputs.device), targets.to(inputs.device))

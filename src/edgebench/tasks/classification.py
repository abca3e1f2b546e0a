"""Image classification: cross-entropy on logits (not on a softmax output, the MNN-based suite's NaN bug)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from edgebench.data.synthetic import classification_batch
from edgebench.models.workload import Workload
from edgebench.tasks.base import make_optimizer


class ClassificationSession:
    def __init__(self, model: nn.Module, workload: Workload, inputs: torch.Tensor, targets: torch.Tensor) -> None:
        self.model = model
        self.inputs, self.targets = inputs, targets
        self.optimizer, self.scheduler = make_optimizer(model.parameters(), workload.optimizer)

    def train_step(self) -> torch.Tensor:
        self.optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(self.model(self.inputs), self.targets)
        loss.backward()
        self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        return loss.detach()

    @torch.no_grad()
    def infer_step(self) -> None:
        self.model(self.inputs)


class ClassificationTask:
    def __init__(self, workload: Workload) -> None:
        self.workload = workload

    def session(
        self, batch_size: int, *, input_shape: tuple[int, ...], num_classes: int, device: str, seed: int
    ) -> ClassificationSession:
        torch.manual_seed(seed)
        model = self.workload.build_model(num_classes, input_shape).to(device).train()
        generator = torch.Generator().manual_seed(seed)
        inputs, targets = classification_batch(batch_size, input_shape, num_classes, generator)
        return ClassificationSession(model, self.workload, inputs.to(device), targets.to(device))

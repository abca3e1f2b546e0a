"""Image classification: cross-entropy on logits (not on a softmax output, the MNN-based suite's NaN bug).

With ``data="mnist"`` each step trains on the next batch of real digits and ``evaluate()`` gives the accuracy on
the held-out ones; otherwise the batch is synthetic and fixed.
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import nn

from edgebench.backends.torch.data.batches import EpochSampler
from edgebench.backends.torch.data.synthetic import classification_batch
from edgebench.backends.torch.tasks.base import SessionInputs, Task, make_optimizer
from edgebench.workloads.spec import Workload

EVAL_BATCH = 500


class ClassificationSession:
    def __init__(
        self,
        model: nn.Module,
        workload: Workload,
        inputs: torch.Tensor,
        targets: torch.Tensor,
        data: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
        sampler: EpochSampler | None = None,
    ) -> None:
        self.model = model
        self.inputs, self.targets = inputs, targets
        self.optimizer, self.scheduler = make_optimizer(model.parameters(), workload.optimizer)
        self.data, self.sampler = data, sampler

    def train_step(self) -> torch.Tensor:
        if self.sampler is not None and self.data is not None:
            index = self.sampler.next()
            self.inputs, self.targets = self.data[0][index], self.data[1][index]
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

    @torch.no_grad()
    def evaluate(self) -> float:
        """Top-1 accuracy on the held-out data, in eval mode (dropout off, batch norm on running statistics)."""
        if self.data is None:
            raise ValueError("evaluate() needs real data (data='mnist')")
        _, _, test_x, test_y = self.data
        was_training = self.model.training
        self.model.eval()
        correct = 0
        for start in range(0, len(test_y), EVAL_BATCH):
            logits = self.model(test_x[start : start + EVAL_BATCH])
            correct += int((logits.argmax(dim=1) == test_y[start : start + EVAL_BATCH]).sum())
        self.model.train(was_training)
        return correct / len(test_y)


class ClassificationTask(Task):
    def session(self, inputs: SessionInputs) -> ClassificationSession:
        generator, device, batch_size = inputs.generator(), inputs.device, inputs.batch_size
        if inputs.data is None:
            model = self.build(inputs)
            images, targets = classification_batch(batch_size, inputs.input_shape, inputs.num_classes, generator)
            return ClassificationSession(model, self.workload, images.to(device), targets.to(device))
        from edgebench.registry import DATASETS

        digits = DATASETS.load(inputs.data).load()
        input_shape = inputs.input_shape
        if math.prod(input_shape) != math.prod(digits.input_shape):
            input_shape = digits.input_shape  # the digits as they are (1x28x28) unless the model wants them flat
        num_classes = digits.num_classes
        arrays = (digits.train_x, digits.train_y, digits.test_x, digits.test_y)
        train_x, train_y, test_x, test_y = (
            a.reshape(-1, *input_shape).to(device) if i % 2 == 0 else a.to(device) for i, a in enumerate(arrays)
        )
        model = self.build(replace(inputs, input_shape=input_shape, num_classes=num_classes))
        sampler = EpochSampler(len(train_y), batch_size, generator)
        session = ClassificationSession(
            model,
            self.workload,
            train_x[:batch_size],
            train_y[:batch_size],
            (train_x, train_y, test_x, test_y),
            sampler,
        )
        session.num_classes, session.input_shape = num_classes, input_shape  # type: ignore[attr-defined]
        return session

"""Semantic segmentation: per-pixel cross-entropy, the logits upsampled bilinearly to the label map's size."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from edgebench.backends.torch.data.synthetic import classification_batch, token_batch
from edgebench.backends.torch.tasks.base import LossSession, SessionInputs, Task


class SegmentationSession(LossSession):
    def __init__(self, model: torch.nn.Module, task: Task, images: torch.Tensor, labels: torch.Tensor) -> None:
        super().__init__(model, task.workload.optimizer)
        self.images, self.labels = images, labels

    def loss(self) -> torch.Tensor:
        logits = self.model(self.images)
        logits = F.interpolate(logits, size=self.labels.shape[-2:], mode="bilinear", align_corners=False)
        return F.cross_entropy(logits, self.labels)

    @torch.no_grad()
    def infer_step(self) -> None:
        self.model(self.images)


class SegmentationTask(Task):
    def session(self, inputs: SessionInputs) -> SegmentationSession:
        model, generator = self.build(inputs), inputs.generator()
        shape, classes = inputs.input_shape, inputs.num_classes
        images, _ = classification_batch(inputs.batch_size, shape, classes, generator)
        labels = token_batch(inputs.batch_size, shape[1:], classes, generator)
        return SegmentationSession(model, self, images.to(inputs.device), labels.to(inputs.device))

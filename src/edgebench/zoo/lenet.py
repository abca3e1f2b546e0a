"""LeNet as the MNN-based suite trains it (MNN ``tools/train/source/models/Lenet.cpp``), with its activations fixed.

Their model has no activation after either convolution and ends in a softmax fed to a cross-entropy, which is why
its loss reaches NaN.  This definition keeps the layer sizes (conv 1-20-50 with 5x5 kernels, fc 800-400-10) and
adds ReLU after each convolution; the loss takes logits.
"""

from __future__ import annotations

import torch
from torch import nn


class LeNet(nn.Module):
    def __init__(self, num_classes: int = 10, input_shape: tuple[int, ...] = (1, 28, 28)) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(input_shape[0], 20, 5),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(20, 50, 5),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
        )
        with torch.no_grad():
            flat = self.features(torch.zeros(1, *input_shape)).numel()
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(flat, 400),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(400, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def lenet(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``lenet`` workload (:mod:`edgebench.workloads.lenet`)."""
    return LeNet(num_classes, shape)

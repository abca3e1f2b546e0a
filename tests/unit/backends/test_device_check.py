"""``--device cuda`` on a machine without it is refused before anything runs, without importing torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from edgebench.backends.torch import devices
from edgebench.host.sysfs import SysFS


def driver_tree(tmp_path, gpus: int) -> SysFS:
    (tmp_path / "proc/driver/nvidia/gpus").mkdir(parents=True)
    (tmp_path / "proc/driver/nvidia/version").write_text("NVRM version: 550.54\n")
    for i in range(gpus):
        (tmp_path / f"proc/driver/nvidia/gpus/0000:0{i}:00.0").mkdir()
    return SysFS(tmp_path)


@pytest.mark.parametrize(
    ("build", "gpus", "device", "words"),
    [
        ("", 1, "cuda", "CPU-only build"),
        ("12.4", None, "cuda", "no NVIDIA driver"),
        ("12.4", 1, "cuda:1", "there is no GPU 1 here: the driver lists 1 (cuda:0 to cuda:0)"),
        ("12.4", 2, "cuda:1", None),
        ("", None, "cpu", None),
    ],
)
def test_what_the_torch_build_and_the_driver_say(monkeypatch, tmp_path, build, gpus, device, words):
    monkeypatch.setattr(devices, "_torch_cuda_build", lambda: build)
    sysfs = driver_tree(tmp_path, gpus) if gpus is not None else SysFS(tmp_path)
    reason = devices.missing_device(device, sysfs)
    assert reason is None if words is None else words in reason


def test_this_torch_build_is_read_without_importing_it():
    code = (
        "import sys; from edgebench.backends.torch.devices import _torch_cuda_build; "
        "print(repr(_torch_cuda_build()), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    import torch

    assert out == [repr(torch.version.cuda or ""), "False"]

"""Does this machine have the device a torch trial asks for?  Answered without importing torch.

Importing torch takes seconds and, on a CUDA build, initialises the driver; the CLI asks before anything runs, so
it reads what torch's package and the NVIDIA driver leave on disk instead: the build's ``torch/version.py``
(``cuda = None`` on a CPU-only build), the driver's files (``/proc/driver/nvidia`` on a PC or server, the ``nvgpu``
module and ``/dev/nvhost-ctrl-gpu`` on a Jetson) and, where the driver lists them, the GPUs present.  A machine
where all of that looks right but CUDA still fails at run time gets a ``crashed`` trial with torch's own reason.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from edgebench.host.sysfs import SysFS

#: Files whose presence says an NVIDIA driver is loaded (desktop/server driver; Jetson's integrated GPU).
DRIVER_FILES = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/sys/module/nvgpu", "/dev/nvhost-ctrl-gpu")
_CUDA_LINE = re.compile(r"^cuda\s*(?::[^=]*)?=\s*(.+)$", re.MULTILINE)


def missing_device(device: str, sysfs: SysFS | None = None) -> str | None:
    """Why ``device`` (``cpu``, ``cuda``, ``cuda:N``) cannot run torch here, or None when it can."""
    if device == "cpu":
        return None
    sysfs = sysfs or SysFS("/")
    build = _torch_cuda_build()
    if build is None:
        return "torch is not installed here: pip install torch (a CUDA build for a GPU)"
    if build == "":
        return "the torch installed here is a CPU-only build: install a CUDA build of torch, or use --device cpu"
    if not any(sysfs.exists(f) for f in DRIVER_FILES):
        return f"no NVIDIA driver is loaded on this machine (none of {', '.join(DRIVER_FILES)}); use --device cpu"
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    gpus = sysfs.glob("/proc/driver/nvidia/gpus/*")
    if gpus and index >= len(gpus):
        return f"there is no GPU {index} here: the driver lists {len(gpus)} (cuda:0 to cuda:{len(gpus) - 1})"
    return None


def _torch_cuda_build() -> str | None:
    """The CUDA version torch was built for, ``""`` for a CPU-only build, None when torch is not installed."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    version = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    try:
        match = _CUDA_LINE.search(version.read_text(encoding="utf-8"))
    except OSError:
        return "unknown"  # an unusual install: let the trial find out
    if match is None:
        return "unknown"
    value = match.group(1).strip().strip("'\"")
    return "" if value == "None" else value

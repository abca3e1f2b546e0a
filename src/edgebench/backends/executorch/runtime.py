"""ExecuTorch's runtime as the worker imports it: the two compiled extensions it needs and nothing of the exporter.

``executorch.runtime`` and ``executorch.extension.pybindings.portable_lib`` import ``executorch.exir`` (the whole
exporter: torch.export, torch._dynamo, ~2,900 modules, 7.5-20 s here), and ``executorch.extension.training`` does
the same through its Python ``TrainingModule``.  The worker needs neither: it loads the compiled extensions
themselves, ``executorch.extension.pybindings._C`` (programs, methods, ETDump, the threadpool) and the training
library ``_training_lib`` (``get_sgd_optimizer``), after ``import torch``, which they link against and which converts
their tensors.  The training library is loaded from its file, because importing it by name would run its package's
``__init__`` (the exporter again).  So a worker pays ``import torch`` plus the extensions (about as long as torch
alone), and the trial's environment records what the import took (``executorch_import_s``).

Threads: ``_unsafe_reset_threadpool(n)`` sizes the global pthreadpool XNNPACK runs on.  It must be called once, before
any program is loaded: called after an XNNPACK program ran, in a process that also lowered one, the next
``execute`` crashes (reproduced with executorch 1.5.1), so :func:`load` sets it first and the worker never lowers.

Logs: the extensions send ExecuTorch's log lines (cpuinfo probes, ``Resetting threadpool to 1 threads.``, errors)
to Python's ``sys.stderr`` (``pybindings.cpp`` replaces the log sink with ``std::cerr`` under pybind11's
``scoped_estream_redirect``); :func:`quiet` keeps them off the terminal where they would interleave with a table.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import io
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from edgebench.backends.executorch import INSTALL

_TRAINING_LIB = "executorch.extension.training.pybindings._training_lib"


@dataclass(frozen=True)
class Runtime:
    """The imported extensions, the threadpool as set, and what importing them took."""

    pybindings: Any
    torch: Any
    threads: int
    import_s: float
    version: str

    def training_lib(self) -> Any:
        return _training_lib()


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    """Inside the block, what ExecuTorch logs (to Python's ``sys.stderr``) is kept in the yielded buffer."""
    buffer = io.StringIO()
    with contextlib.redirect_stderr(buffer):
        yield buffer


@cache
def load(threads: int) -> Runtime:
    """Import torch and ExecuTorch's runtime extension and size its threadpool (once per process, before any
    program is loaded); a missing package is one line naming the extra."""
    start = time.perf_counter()
    try:
        import torch
        from executorch.extension.pybindings import _C as pybindings
    except ImportError as exc:
        raise RuntimeError(f"the executorch backend needs the executorch package ({exc}): {INSTALL}") from None
    with quiet():
        pybindings._unsafe_reset_threadpool(threads)
    return Runtime(pybindings, torch, pybindings._threadpool_get_thread_count(), time.perf_counter() - start, version())


def version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("executorch")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@cache
def _training_lib() -> Any:
    """``get_sgd_optimizer``'s extension, loaded from its file (see the module's docstring)."""
    if _TRAINING_LIB in sys.modules:
        return sys.modules[_TRAINING_LIB]
    spec = importlib.util.find_spec("executorch.extension.pybindings._C")
    assert spec is not None and spec.origin is not None
    folder = Path(spec.origin).parents[1] / "training" / "pybindings"
    found = next(iter(sorted(folder.glob("_training_lib*.so"))), None)
    if found is None:
        raise RuntimeError(f"the executorch package has no training library in {folder}: {INSTALL}")
    loader = importlib.machinery.ExtensionFileLoader(_TRAINING_LIB, str(found))
    module_spec = importlib.util.spec_from_file_location(_TRAINING_LIB, found, loader=loader)
    assert module_spec is not None
    module = importlib.util.module_from_spec(module_spec)
    loader.exec_module(module)
    sys.modules[_TRAINING_LIB] = module
    return module

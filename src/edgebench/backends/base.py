"""What a backend is to the rest of edgebench: what it can do, and the session the worker's loop drives.

The worker times steps, applies stop rules, reads phase memory and writes events without knowing the framework;
everything framework-specific (threads, autocast, device sync, peak device memory, tracing hooks, eval mode) sits
behind :class:`BackendSession`.  A backend's :class:`Backend` record is framework-free, so the CLI can refuse a
trial its backend cannot run (``Trial``'s validators call :func:`refusal`) before anything is imported or started.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from edgebench.registry import import_target

if TYPE_CHECKING:
    from edgebench.records.trial import Trial
    from edgebench.workloads.spec import Workload

Mode = Literal["train", "infer"]


@dataclass(frozen=True)
class Capabilities:
    """What a backend can run: checked against each trial before its worker starts."""

    modes: tuple[Mode, ...]
    precisions: tuple[str, ...]
    #: Device kinds: ``cpu``, ``cuda`` (a trial's ``cuda:1`` is kind ``cuda``).
    devices: tuple[str, ...]
    #: Values of ``Trial.trace`` the backend can record (``none`` always among them).
    trace_kinds: tuple[str, ...]
    #: The precisions a user's model file runs at (None: as :attr:`precisions`); a runtime that cannot change a
    #: file's precision (LiteRT: a ``.tflite`` file is fp32, fp16 or int8 as converted) lists ``fp32`` only.
    file_precisions: tuple[str, ...] | None = None


def device_kind(device: str) -> str:
    """``cuda:1`` -> ``cuda``; the kind is what a backend's capabilities list."""
    return device.split(":", 1)[0]


def refusal(backend: str, what: str, wanted: str, offered: tuple[str, ...]) -> str | None:
    """Why ``backend`` cannot run ``what`` = ``wanted`` (one line naming what it offers), or None when it can."""
    if wanted in offered:
        return None
    return f"the {backend} backend cannot run {what} {wanted!r}; it offers: {', '.join(offered)}"


class TraceRecording(Protocol):
    """Layer or op spans of the measured steps (``trial.trace``), as the worker drives them."""

    def counting(self, step: Callable[[], Any]) -> Callable[[], Any]:
        """``step``, whose first call also counts per-layer costs (run during the warm-up)."""
        ...

    def ensure_costs(self, step: Callable[[], Any]) -> None: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def remove(self) -> None: ...

    def save(self, path: str) -> int:
        """Write the span table to ``path``; returns the number of spans."""
        ...


class BackendSession(Protocol):
    """One trial's model, optimizer and data inside a framework, ready for the worker to time.

    ``train_step`` and ``infer_step`` already run at the trial's precision; ``sync`` waits for the device, so a
    step's end time is when its work finished, not when it was queued.
    """

    #: Trainable parameters of the whole model (both nets of a GAN).
    params: int
    #: The input and classes actually used: a real dataset decides them (the text's alphabet, the digits' shape).
    input_shape: tuple[int, ...]
    num_classes: int
    #: The framework's own settings as run (version, threads...), stored with the trial.
    env: dict[str, Any]
    #: Held-out accuracy, for ``until_accuracy``; None where the session has no real held-out data.
    evaluate: Callable[[], float] | None
    #: An int8 trial's quantization record (a :class:`~edgebench.records.quantization.Quantization` as a dict);
    #: None otherwise.
    quantization: dict[str, Any] | None

    def train_step(self) -> float | None:
        """One full training step; returns the loss (None where the framework does not report one)."""
        ...

    def infer_step(self) -> None: ...

    def sync(self) -> None: ...

    def to_inference(self) -> None:
        """Switch to inference behaviour (dropout off, batch norm on running statistics) before infer steps."""
        ...

    def reset_device_peak_memory(self) -> None: ...

    def device_peak_memory_bytes(self) -> int | None:
        """Peak accelerator memory since the last reset; None on the CPU."""
        ...

    def trace_recorder(self) -> TraceRecording | None:
        """A recorder for ``trial.trace``, installed; None when the trial traces nothing."""
        ...


@dataclass(frozen=True)
class Backend:
    """A backend as the registry lists it: its name, its capabilities and where its framework code is.

    ``session`` and ``tasks`` are ``"module:attr"`` strings imported only when a trial runs, so reading the
    capabilities (trial validation, the CLI's checks) never imports the framework.
    """

    name: str
    capabilities: Capabilities
    #: ``(trial) -> BackendSession``: applies the framework's settings and builds the trial's session.
    session: str
    #: ``(workload, batch_size, *, input_shape, num_classes, device, seed, data) -> the task's raw session``.
    tasks: str
    #: ``(device) -> why it is missing, or None``: whether the machine that runs the worker has the trial's device,
    #: answered without importing the framework (the CLI asks before anything runs); None: assume it has.
    device_check: str | None = None
    #: ``(model, mode) -> why this backend cannot run it, or None``, framework-free (trial validation asks, so a
    #: model the backend refuses is a usage error before anything runs); None: every model.
    model_check: str | None = None

    def model_refusal(self, model: str, mode: str) -> str | None:
        return import_target(self.model_check)(model, mode) if self.model_check else None

    def missing_device(self, device: str) -> str | None:
        return import_target(self.device_check)(device) if self.device_check else None

    def open_session(self, trial: Trial) -> BackendSession:
        return import_target(self.session)(trial)

    def task_session(self, workload: Workload, batch_size: int, **options: Any) -> Any:
        return import_target(self.tasks)(workload, batch_size, **options)

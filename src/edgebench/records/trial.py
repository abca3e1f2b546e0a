"""A Trial: one model at one configuration, the unit a worker process runs and the store keeps."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from edgebench.backends.base import Capabilities, device_kind, refusal
from edgebench.registry import BACKENDS, DATASETS, MODELS

PositiveInt = Annotated[int, Field(ge=1)]
#: Numeric precision: ``fp32``; autocast mixed precision with ``bf16`` / ``fp16`` compute; or ``int8``, post-training
#: static quantization, which only inference runs (``mode="infer"``).
Precision = Literal["fp32", "bf16", "fp16", "int8"]
#: What the measured steps are: ``train`` (forward, loss, backward, update) or ``infer`` (forward passes only).
Mode = Literal["train", "infer"]


class Trial(BaseModel):
    """Everything that defines a measurement; two equal Trials measure the same thing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: The user's own workload, run with ``sh -c`` on the target (backend ``command``); ``model`` is then a label.
    command: str | None = None
    #: Files copied to the target before a command runs: ``LOCAL[:REMOTE]`` (REMOTE relative to its work directory).
    push: tuple[str, ...] = ()
    #: Where a command's steps end: a regex over its output lines (named groups kept) or a shipped pattern's name.
    step_pattern: str | None = None
    model: str = "lenet"
    #: ``train``: warm-up and measured steps train; ``infer``: they are forward passes in inference mode.
    mode: Mode = "train"
    batch_size: PositiveInt = 32
    steps: PositiveInt = 20
    warmup: Annotated[int, Field(ge=0)] = 3
    #: Intra-op threads; ``None`` means one per core of the placement.
    threads: PositiveInt | None = None
    #: Cores the worker (all its threads) may run on; ``None`` means every core this process may use.
    cores: tuple[int, ...] | None = None
    #: The hex mask ``cores`` was typed as (``0f``), kept for the MNN-based suite's folder names; it names the same
    #: cores as ``cores``, so it is no part of what the trial measures (``trial_key`` leaves it out).
    cores_mask: str | None = None
    input_shape: tuple[PositiveInt, ...] | None = None
    num_classes: PositiveInt | None = None
    #: Inference passes timed after a training trial's measured steps; an inference trial's measured steps are
    #: already inference (``steps``), so it runs none of these.
    infer_steps: Annotated[int, Field(ge=0)] = 10
    sample_interval_ms: Annotated[float, Field(gt=0)] = 10.0
    timeout_s: Annotated[float, Field(gt=0)] = 1800.0
    device: str = "cpu"
    seed: int = 0
    #: Idle baseline measured before the warm-up (s); ``None``: 5 s where a power sensor exists, else none.
    idle_s: Annotated[float, Field(ge=0)] | None = None
    #: Power model for ``estimated_*`` energy (``idle=2.7W,max=6.4W``); ``None``: no estimate.
    estimate_energy: str | None = None
    #: Framework the worker runs the model with: a name in ``edgebench.registry.BACKENDS``.
    backend: str = "torch"
    precision: Precision = "fp32"
    #: CPU frequency the cpufreq policies of ``cores`` are pinned to; applied by the launcher that owns it (sweep).
    freq_khz: PositiveInt | None = None
    #: Adaptive measurement: keep stepping until the 95% CI half-width of the mean step time is within this
    #: percentage of the mean; ``steps`` is then the minimum, ``max_steps`` / ``max_time_s`` the caps.
    target_ci_pct: Annotated[float, Field(gt=0, lt=100)] | None = None
    max_time_s: Annotated[float, Field(gt=0)] = 120.0
    #: A named input of the workload (``cifar10``, ``imagenet``...); ``input_shape``/``num_classes`` override it.
    preset: str | None = None
    #: Train on this real dataset (``mnist``, ``shakespeare``) instead of a synthetic batch.
    data: str | None = None
    #: Train until held-out accuracy reaches this (0-1], evaluating every ``eval_every`` steps (needs ``data``).
    until_accuracy: Annotated[float, Field(gt=0, le=1)] | None = None
    eval_every: PositiveInt = 50
    #: Cap on measured steps for an adaptive rule (``target_ci_pct``: 2,000 when unset; ``until_accuracy``: only
    #: ``timeout_s`` bounds it when unset).
    max_steps: PositiveInt | None = None
    #: The worker may not use more memory than this; a trial that needs more is recorded ``infeasible``.
    memory_budget_bytes: PositiveInt | None = None
    #: Per-step spans: ``layers`` (nn.Module forward and backward), ``ops`` (aten ops via torch.profiler).
    trace: Literal["none", "layers", "ops"] = "none"

    @field_validator("model")
    @classmethod
    def _known_model(cls, name: str, info: ValidationInfo) -> str:
        if info.data.get("command") is not None:  # the user's own workload: the model is only its label
            if not name.strip():
                raise ValueError("a command trial's label cannot be empty")
            return name.strip()
        if ":" in name:  # the user's own model: it must import now, not fail later in the worker
            from edgebench.backends.torch.models.custom import resolve

            resolve(name.strip())
            return name.strip()
        return MODELS.canonical(name)

    @model_validator(mode="before")
    @classmethod
    def _command_backend(cls, values: Any) -> Any:
        """``--command`` picks the ``command`` backend and times no inference passes of its own; any other backend
        with a command, or the command backend without one, is refused in one line."""
        if not isinstance(values, dict):
            return values
        command, backend = values.get("command"), values.get("backend")
        if command is not None:
            if not str(command).strip():
                raise ValueError("command: is empty; give the workload to run, e.g. --command './bench --steps 20'")
            if backend is not None and backend != "command":
                raise ValueError(
                    f"backend: --command runs your own workload, not the {backend} backend; drop --backend {backend}"
                )
            # edgebench times no inference passes of its own after a command: the workload is all there is
            values = {**values, "infer_steps": 0, "backend": "command"}
            if values.get("step_pattern") is None:
                raise ValueError(
                    "step_pattern: a command trial needs --step-pattern: a regex matching the line that ends each "
                    "step, or a shipped pattern (mnn-train-demo, tflite-benchmark-model)"
                )
        else:
            if backend == "command":
                raise ValueError("backend: the command backend runs a --command; give one, or another backend")
            for key in ("push", "step_pattern"):
                if values.get(key):
                    raise ValueError(f"{key}: only a --command trial uses it; add --command or drop it")
        return values

    @field_validator("step_pattern")
    @classmethod
    def _step_pattern(cls, text: str | None) -> str | None:
        from edgebench.command.patterns import check_step_pattern

        return None if text is None else check_step_pattern(text)

    @field_validator("push")
    @classmethod
    def _push_specs(cls, specs: tuple[str, ...]) -> tuple[str, ...]:
        from edgebench.command.push import parse_push

        for spec in specs:
            parse_push(spec)
        return specs

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, preset: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("command") is not None and preset is not None:
            raise ValueError("a command trial runs its own inputs; drop --preset")
        if preset is None or "model" not in info.data:
            return preset
        from edgebench.workloads import get_workload

        workload = get_workload(info.data["model"])
        try:
            return workload.preset(preset).name
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None

    @field_validator("data")
    @classmethod
    def _known_data(cls, data: str | None, info: ValidationInfo) -> str | None:
        if data is None:
            return None
        data = DATASETS.canonical(data)
        requires = getattr(DATASETS.load(data), "requires", "")
        if requires and importlib.util.find_spec(requires) is None:
            raise ValueError(f"the {data} data ships in {requires}: pip install 'edgebench[data]'")
        if "model" in info.data:
            from edgebench.workloads import get_workload
            from edgebench.workloads.tasks import task_datasets

            workload = get_workload(info.data["model"])
            accepted = task_datasets(workload.task)
            if data not in accepted:
                what = f"one of: {', '.join(accepted)}" if accepted else "no real dataset yet, only synthetic batches"
                raise ValueError(f"{workload.name} ({workload.domain}) cannot train on {data}; its task takes {what}")
        return data

    @field_validator("until_accuracy")
    @classmethod
    def _accuracy_needs_data(cls, target: float | None, info: ValidationInfo) -> float | None:
        if target is not None and info.data.get("mode") == "infer":
            raise ValueError("trains until an accuracy, which an inference trial (--mode infer) never does")
        if target is not None and info.data.get("data") is None:
            raise ValueError("needs real held-out data to measure accuracy on: add --data mnist or --data shakespeare")
        return target

    @field_validator("trace")
    @classmethod
    def _trace_measured_steps_only(cls, trace: str, info: ValidationInfo) -> str:
        if "backend" in info.data:
            _refuse(info.data["backend"], "trace", trace, lambda c: c.trace_kinds)
        if trace != "none" and info.data.get("until_accuracy") is not None:
            raise ValueError(
                "cannot be combined with --until-accuracy: its held-out evaluations run between the steps and would "
                "be traced as training; trace a fixed-step or --target-ci run"
            )
        return trace

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, backend: str, info: ValidationInfo) -> str:
        backend = check_backend(backend)
        device = info.data.get("device")
        if device is not None:
            _refuse(backend, "on device", device_kind(device), lambda c: c.devices)
        mode = info.data.get("mode", "train")
        _refuse(backend, "mode", mode, lambda c: c.modes)
        if mode == "train" and info.data.get("infer_steps"):  # inference passes after training
            _refuse(backend, "mode", "infer", lambda c: c.modes)
        if info.data.get("model") is not None:  # a model the backend refuses (MNN: its task, its recorded probe)
            reason = BACKENDS.load(backend).model_refusal(info.data["model"], mode)
            if reason:
                raise ValueError(reason)
        return backend

    @field_validator("precision")
    @classmethod
    def _backend_precision(cls, precision: str, info: ValidationInfo) -> str:
        if precision == "int8" and info.data.get("mode") != "infer":
            raise ValueError("'int8' is post-training quantization, which only inference runs: add --mode infer")
        if precision == "int8" and device_kind(info.data.get("device", "cpu")) != "cpu":
            raise ValueError("'int8' (static quantization) runs on the CPU only: use --device cpu")
        if "backend" in info.data:
            _refuse(info.data["backend"], "at precision", precision, lambda c: c.precisions)
        return precision

    @field_validator("cores")
    @classmethod
    def _sorted_cores(cls, cores: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if cores is None:
            return None
        if not cores:
            raise ValueError("names no core")
        if min(cores) < 0:
            raise ValueError("core ids are >= 0")
        return tuple(sorted(set(cores)))

    @field_validator("device")
    @classmethod
    def _device(cls, device: str) -> str:
        return check_device(device)

    @field_validator("max_steps")
    @classmethod
    def _cap_above_minimum(cls, max_steps: int | None, info: ValidationInfo) -> int | None:
        return check_step_cap(max_steps, info.data.get("steps") or 1, info.data.get("target_ci_pct"))

    @field_validator("estimate_energy")
    @classmethod
    def _power_model(cls, spec: str | None) -> str | None:
        from edgebench.measure.estimate import parse_power_model

        return None if spec is None else parse_power_model(spec).spec()

    def with_placement(self, allowed: tuple[int, ...]) -> Trial:
        """Fill in cores and threads for this host: all allowed cores, one thread per core, unless given."""
        cores = self.cores or allowed
        return self.model_copy(update={"cores": cores, "threads": self.threads or len(cores)})


def _refuse(backend: str, what: str, wanted: str, offered: Callable[[Capabilities], tuple[str, ...]]) -> None:
    """A ``ValueError`` (one usage line, exit 2) when ``backend``'s declared capabilities do not include ``wanted``.

    The capabilities are read from the backend's framework-free record, so this check imports no framework.
    """
    capabilities = BACKENDS.load(backend).capabilities
    reason = refusal(backend, what, wanted, offered(capabilities))
    if reason:
        raise ValueError(reason)


def check_backend(backend: str) -> str:
    """A registered backend's name, or the choices in the words a closed set of values is refused with."""
    if backend in BACKENDS:
        return BACKENDS.canonical(backend)
    names = [repr(n) for n in BACKENDS.names()]
    choices = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    raise ValueError(f"unknown backend {backend!r}: must be {choices}")


def check_device(device: str) -> str:
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError("must be cpu or cuda[:N]")
    return device


def check_step_cap(max_steps: int | None, steps: int, target_ci_pct: float | None) -> int | None:
    """An adaptive trial's step cap cannot be below its minimum (nor below 2, the fewest a CI needs)."""
    if max_steps is not None and target_ci_pct is not None and max_steps < max(steps, 2):
        raise ValueError(f"must be at least steps ({steps}) and 2, the fewest steps a confidence interval needs")
    return max_steps

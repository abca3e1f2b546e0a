"""A Trial: one model at one configuration, the unit a worker process runs and the store keeps."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from edgebench.registry import MODELS

PositiveInt = Annotated[int, Field(ge=1)]
#: Numeric precision of training: ``fp32``, or autocast mixed precision with ``bf16`` / ``fp16`` compute.
Precision = Literal["fp32", "bf16", "fp16"]
#: Frameworks a worker can train with (MNN and onnxruntime are planned, see DESIGN.md).
Backend = Literal["torch"]


class Trial(BaseModel):
    """Everything that defines a measurement; two equal Trials measure the same thing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = "lenet"
    batch_size: PositiveInt = 32
    steps: PositiveInt = 20
    warmup: Annotated[int, Field(ge=0)] = 3
    #: Intra-op threads; ``None`` means one per core of the placement.
    threads: PositiveInt | None = None
    #: Cores the worker (all its threads) may run on; ``None`` means every core this process may use.
    cores: tuple[int, ...] | None = None
    input_shape: tuple[PositiveInt, ...] | None = None
    num_classes: PositiveInt | None = None
    infer_steps: Annotated[int, Field(ge=0)] = 10
    sample_interval_ms: Annotated[float, Field(gt=0)] = 10.0
    timeout_s: Annotated[float, Field(gt=0)] = 1800.0
    device: str = "cpu"
    seed: int = 0
    #: Idle baseline measured before the warm-up (s); ``None``: 5 s where a power sensor exists, else none.
    idle_s: Annotated[float, Field(ge=0)] | None = None
    #: Power model for ``estimated_*`` energy (``idle=2.7W,max=6.4W``); ``None``: no estimate.
    estimate_energy: str | None = None
    backend: Backend = "torch"
    precision: Precision = "fp32"
    #: CPU frequency the cpufreq policies of ``cores`` are pinned to; applied by the launcher that owns it (sweep).
    freq_khz: PositiveInt | None = None
    #: Adaptive measurement: keep stepping until the 95% CI half-width of the mean step time is within this
    #: percentage of the mean; ``steps`` is then the minimum, ``max_steps`` / ``max_time_s`` the caps.
    target_ci_pct: Annotated[float, Field(gt=0, lt=100)] | None = None
    max_steps: PositiveInt = 2000
    max_time_s: Annotated[float, Field(gt=0)] = 120.0

    @field_validator("model")
    @classmethod
    def _known_model(cls, name: str) -> str:
        return MODELS.canonical(name)

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
    def _cap_above_minimum(cls, max_steps: int, info: ValidationInfo) -> int:
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


def check_device(device: str) -> str:
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError("must be cpu or cuda[:N]")
    return device


def check_step_cap(max_steps: int, steps: int, target_ci_pct: float | None) -> int:
    """An adaptive trial's step cap cannot be below its minimum (nor below 2, the fewest a CI needs)."""
    if target_ci_pct is not None and max_steps < max(steps, 2):
        raise ValueError(f"must be at least steps ({steps}) and 2, the fewest steps a confidence interval needs")
    return max_steps

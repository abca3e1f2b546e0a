"""A Trial: one model at one configuration, the unit a worker process runs and the store keeps."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from edgebench.registry import MODELS

PositiveInt = Annotated[int, Field(ge=1)]


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
    #: Per-step spans: ``layers`` (nn.Module forward and backward), ``ops`` (aten ops via torch.profiler).
    trace: Literal["none", "layers", "ops"] = "none"

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
        if device != "cpu" and not device.startswith("cuda"):
            raise ValueError("must be cpu or cuda[:N]")
        return device

    def with_placement(self, allowed: tuple[int, ...]) -> Trial:
        """Fill in cores and threads for this host: all allowed cores, one thread per core, unless given."""
        cores = self.cores or allowed
        return self.model_copy(update={"cores": cores, "threads": self.threads or len(cores)})

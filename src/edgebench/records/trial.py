"""A Trial: one model at one configuration, the unit a worker process runs and the store keeps.

A record, so parsing one has no side effects: it checks types, ranges and how fields fit together, nothing that
needs a registry or imports the user's code.  Those checks (a known model and backend, what the backend can run,
a ``module:factory`` model that imports) run where the user's input enters (:mod:`edgebench.config.trial`), so a
bundle or a stored result reads back on a machine without the model's module.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from edgebench.records.model import Record
from edgebench.units import MAX_QUANTITY

# Every number a user gives is bounded (edgebench.units.MAX_QUANTITY): a 400-digit batch, budget or interval would
# overflow a float or SQLite's integer after the trial had run.
PositiveInt = Annotated[int, Field(ge=1, le=MAX_QUANTITY)]
Count = Annotated[int, Field(ge=0, le=MAX_QUANTITY)]
Seconds = Annotated[float, Field(ge=0, le=MAX_QUANTITY)]
#: Numeric precision: ``fp32``; autocast mixed precision with ``bf16`` / ``fp16`` compute; or ``int8``, post-training
#: static quantization, which only inference runs (``mode="infer"``); ``int8-dynamic``, post-training dynamic-range
#: quantization (int8 weights, activations quantized at run time), where a backend offers it (LiteRT).
Precision = Literal["fp32", "bf16", "fp16", "int8", "int8-dynamic"]
#: The precisions that are post-training quantization: inference on the CPU only.
QUANTIZED = ("int8", "int8-dynamic")
#: What the measured steps are: ``train`` (forward, loss, backward, update) or ``infer`` (forward passes only).
Mode = Literal["train", "infer"]
#: The step cap of a ``target_ci_pct`` trial whose ``max_steps`` is unset.
DEFAULT_MAX_STEPS = 2000


class Trial(Record):
    """Everything that defines a measurement; two equal Trials measure the same thing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: The user's own workload, run with ``sh -c`` on the target (backend ``command``); ``model`` is then a label.
    command: str | None = None
    #: Files copied to the target before a command runs: ``LOCAL[:REMOTE]`` (REMOTE relative to its work directory).
    push: tuple[str, ...] = ()
    #: Where a command's steps end: a regex over its output lines (named groups kept) or a shipped pattern's name.
    step_pattern: str | None = None
    model: str = "lenet"
    #: A model file (``.onnx``, ``.mnn``) the trial runs instead of a zoo workload, as an absolute path; ``model``
    #: is then its label (the file's name).  Set from ``--model path`` by :func:`edgebench.config.trial.make_trial`.
    model_file: str | None = None
    #: 16 hex digits of SHA-256 over the model file: two trials of one path whose bytes changed differ.
    model_sha256: str | None = None
    #: The model file's input ``input_shape`` describes (DNNTune's ``input_name``); None: its only (first) input.
    input_name: str | None = None
    #: The model file's output the step fetches (DNNTune's ``output_name``); None: every output.
    output_name: str | None = None
    #: ``train``: warm-up and measured steps train; ``infer``: they are forward passes in inference mode.
    mode: Mode = "train"
    batch_size: PositiveInt = 32
    steps: PositiveInt = 20
    #: The measured phases (training steps, inference passes) go on past ``steps`` until they have lasted this long
    #: (s), so their CPU share is resolvable; ``auto``: as long as the kernel's CPU-time accounting needs on the
    #: trial's cores (:func:`edgebench.measure.utilization.min_cpu_share_window_s`), the default when ``steps`` is
    #: not given; ``None``: exactly ``steps``.
    min_time_s: Seconds | Literal["auto"] | None = None
    warmup: Count = 3
    #: Intra-op threads; ``None`` means one per core of the placement.
    threads: PositiveInt | None = None
    #: Cores the worker (all its threads) may run on; ``None`` means every core this process may use.
    cores: tuple[int, ...] | None = None
    #: The hex mask ``cores`` was typed as (``0f``), kept for the MNN-based suite's folder names; it names the same
    #: cores as ``cores``, so it is no part of what the trial measures (:func:`configuration_key` leaves it out).
    cores_mask: str | None = None
    input_shape: tuple[PositiveInt, ...] | None = None
    num_classes: PositiveInt | None = None
    #: Inference passes timed after a training trial's measured steps; an inference trial's measured steps are
    #: already inference (``steps``), so it runs none of these.
    infer_steps: Count = 10
    sample_interval_ms: Annotated[float, Field(gt=0, le=MAX_QUANTITY)] = 10.0
    timeout_s: Annotated[float, Field(gt=0, le=MAX_QUANTITY)] = 1800.0
    device: str = "cpu"
    seed: Annotated[int, Field(ge=-MAX_QUANTITY, le=MAX_QUANTITY)] = 0
    #: Idle baseline measured before the warm-up (s); ``None``: 5 s where a power sensor exists, else none.
    idle_s: Seconds | None = None
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
    max_time_s: Annotated[float, Field(gt=0, le=MAX_QUANTITY)] = 120.0
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
    #: Linux perf events (perf's names) counted per step and per traced layer span; see ``host/perf_events.py``.
    counters: tuple[str, ...] = ()
    #: What samples the sensors: ``native`` (the static binary of ``agents/native/``, built for the device),
    #: ``sh`` (a ``--command`` trial's device-side script loop), or ``auto``: native for a ``--command`` trial on
    #: a remote device where a build fits (else sh), the Python sampler for edgebench's own workloads.
    sampler: Literal["auto", "native", "sh"] = "auto"
    #: How many independent repeats of this configuration run, each a trial in a fresh worker process (a fresh agent
    #: on a remote target), their figures and decisions taken across them; ``auto``: as many as the configuration's
    #: measured run-to-run spread needs (:func:`edgebench.measure.repeats.repeats_needed`).  How often a
    #: configuration runs is no part of what one trial measures: :func:`configuration_key` leaves it out.
    repeats: PositiveInt | Literal["auto"] = 1
    #: 16 hex digits of SHA-256 over a text file given as ``data`` (an absolute path then): a changed file is
    #: another trial.  Set by :func:`edgebench.config.trial.make_trial`.
    data_sha256: str | None = None
    # -- language models (checked against the workload in :func:`edgebench.config.trial.check_trial`) ----------
    #: What a training step updates: every weight (``full``), or low-rank adapters beside a frozen base (``lora``).
    finetune: Literal["full", "lora"] = "full"
    #: LoRA's rank, scale numerator and target layers (None / empty: 8, 16 and the seven projections).
    lora_rank: PositiveInt | None = None
    lora_alpha: Annotated[float, Field(gt=0)] | None = None
    lora_targets: tuple[str, ...] = ()
    #: Whose LoRA: edgebench's own layer, or Hugging Face ``peft`` (the ``lm`` extra).
    lora_impl: Literal["edgebench", "peft"] = "edgebench"
    #: Activation checkpointing: ``blocks`` recomputes each transformer block in backward instead of keeping its
    #: activations.
    checkpointing: Literal["none", "blocks"] = "none"
    #: The linear weights that do not train, as int8: edgebench's (``int8``, only int8 kept for backward) or
    #: torchao's weight-only int8 (``torchao-int8``); a LoRA base, or an inference model.
    frozen_weights: Literal["fp32", "int8", "torchao-int8"] = "fp32"
    #: Full training of the base for this many steps on the first half of the training text before the measured
    #: fine-tune on the second half (cached): the honest start of a perplexity claim.
    pretrain_steps: Annotated[int, Field(ge=0)] = 0
    #: Train until held-out bits per byte reach this (``unigram``: the text's unigram line); needs ``data``.
    until_bits_per_byte: Annotated[float, Field(gt=0)] | Literal["unigram"] | None = None
    #: Context lengths (tokens) time to first token and decode speed are measured at (None: 64, 256, 1024 up to the
    #: model's window; empty: none).
    contexts: tuple[PositiveInt, ...] | None = None
    #: Tokens each timed generation produces (the first from the prefill).
    decode_tokens: Annotated[int, Field(ge=2)] = 32
    #: Timed generations per context length (after one untimed); 0: no generation phase.
    generations: Annotated[int, Field(ge=0)] = 3

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
            if values.get("preset") is not None:
                raise ValueError("preset: a command trial runs its own inputs; drop --preset")
            if "model" in values and not str(values["model"]).strip():
                raise ValueError("model: a command trial's label cannot be empty")
        else:
            if backend == "command":
                raise ValueError("backend: the command backend runs a --command; give one, or another backend")
            for key in ("push", "step_pattern"):
                if values.get(key):
                    raise ValueError(f"{key}: only a --command trial uses it; add --command or drop it")
        if isinstance(values.get("model"), str):
            values = {**values, "model": values["model"].strip()}
        return values

    @model_validator(mode="after")
    def _fields_agree(self) -> Trial:
        """Checks across fields, on the whole record (never on the order fields happen to be declared in)."""
        self._model_file_agrees()
        if self.until_accuracy is not None and self.mode == "infer":
            raise ValueError(
                "until_accuracy: trains until an accuracy, which an inference trial (--mode infer) never does"
            )
        if self.until_accuracy is not None and self.data is None:
            raise ValueError(
                "until_accuracy: needs real held-out data to measure accuracy on: add --data mnist or "
                "--data shakespeare"
            )
        if self.trace != "none" and self.until_accuracy is not None:
            raise ValueError(
                "trace: cannot be combined with --until-accuracy: its held-out evaluations run between the steps and "
                "would be traced as training; trace a fixed-step or --target-ci run"
            )
        if self.sampler == "sh" and self.backend != "command":
            raise ValueError(
                "sampler: sh is the loop of a --command trial's device-side script; edgebench's own workloads sample "
                "with the Python sampler (auto) or the native one (native)"
            )
        if self.precision in QUANTIZED and self.mode != "infer":
            raise ValueError(
                f"precision: {self.precision!r} is post-training quantization, which only inference runs: add --mode "
                "infer"
            )
        if self.precision in QUANTIZED and self.device.split(":", 1)[0] != "cpu":
            raise ValueError(f"precision: {self.precision!r} (quantization) runs on the CPU only: use --device cpu")
        if self.idle_s is not None and self.idle_s >= self.timeout_s:
            raise ValueError(
                f"idle_s: an idle baseline of {self.idle_s:g} s leaves nothing of the {self.timeout_s:g} s timeout for "
                "the trial; shorten --idle or raise --timeout"
            )
        if self.min_time_s not in (None, "auto") and (
            self.target_ci_pct is not None or self.until_accuracy is not None or self.backend == "command"
        ):
            rule = "--command" if self.backend == "command" else "--target-ci" if self.target_ci_pct else None
            rule = rule or "--until-accuracy"
            raise ValueError(f"min_time_s: {rule} decides when the measured steps end; drop --min-time")
        if isinstance(self.min_time_s, float) and self.min_time_s * (2 if self.infer_steps else 1) >= self.timeout_s:
            raise ValueError(
                f"min_time_s: {self.min_time_s:g} s of measured steps"
                + (" and as long of inference passes" if self.infer_steps else "")
                + f" leave nothing of the {self.timeout_s:g} s timeout; shorten --min-time or raise --timeout"
            )
        try:
            check_step_cap(self.max_steps, self.steps, self.target_ci_pct)
        except ValueError as exc:
            raise ValueError(f"max_steps: {exc}") from None
        self._lm_fields_agree()
        return self

    def _lm_fields_agree(self) -> None:
        """The language-model settings that only make sense together (the workload is checked where input enters)."""
        if self.finetune != "lora":
            for key in ("lora_rank", "lora_alpha", "lora_targets"):
                if getattr(self, key):
                    raise ValueError(
                        f"{key}: sets LoRA, which --finetune {self.finetune} does not use; add --finetune lora"
                    )
            if self.lora_impl != "edgebench":
                raise ValueError("lora_impl: sets LoRA, which a full fine-tune does not use; add --finetune lora")
        if self.finetune == "lora" and self.mode == "infer":
            raise ValueError("finetune: lora trains adapters, which an inference trial (--mode infer) never does")
        if self.frozen_weights != "fp32" and self.mode == "train" and self.finetune != "lora":
            raise ValueError(
                f"frozen_weights: {self.frozen_weights} freezes the base, and a full fine-tune trains every weight: "
                "add --finetune lora (or --mode infer)"
            )
        if self.until_bits_per_byte is not None:
            if self.data is None:
                raise ValueError(
                    "until_bits_per_byte: needs held-out text to measure: add --data shakespeare or --data FILE.txt"
                )
            if self.until_accuracy is not None:
                raise ValueError("until_bits_per_byte: and --until-accuracy are two stopping rules; give one")
            if self.mode == "infer":
                raise ValueError("until_bits_per_byte: trains until a loss, which an inference trial never does")
            if self.trace != "none":
                raise ValueError(
                    "trace: cannot be combined with --until-bits-per-byte (its evaluations would be traced)"
                )
            if self.min_time_s not in (None, "auto"):
                raise ValueError(
                    "min_time_s: --until-bits-per-byte decides when the measured steps end; drop --min-time"
                )
        if self.pretrain_steps and self.data is None:
            raise ValueError("pretrain_steps: pretrains on the first half of a text: add --data shakespeare or a file")

    def _model_file_agrees(self) -> None:
        """What a model file cannot do: it is an inference graph with no data, labels or training program."""
        if self.model_file is None:
            for key in ("input_name", "output_name", "model_sha256"):
                if getattr(self, key) is not None:
                    raise ValueError(f"{key}: names a model file's tensor; give the file with --model path.onnx")
            return
        if self.mode == "train":
            raise ValueError(
                "mode: a model file is an inference graph (no loss, labels or optimizer in it), so edgebench does not "
                "train it; use --mode infer (the default for a model file)"
            )
        for key, what in (("preset", "--preset"), ("data", "--data"), ("num_classes", "--num-classes")):
            if getattr(self, key) is not None:
                raise ValueError(f"{key}: a model file brings its own graph and shapes; drop {what}")
        if self.command is not None:
            raise ValueError("model_file: a --command trial runs your own workload; drop the model file")

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

    def with_placement(self, allowed: tuple[int, ...]) -> Trial:
        """Fill in cores and threads for this host: all allowed cores, one thread per core, unless given."""
        cores = self.cores or allowed
        return self.model_copy(update={"cores": cores, "threads": self.threads or len(cores)})


#: Fields that are no part of what a trial measures: ``cores_mask`` names the same cores as ``cores``, ``repeats``
#: says how often the configuration runs.
NOT_MEASURED = frozenset({"cores_mask", "repeats"})


def configuration_key(trial: Trial) -> str:
    """16 hex digits of SHA-256 over the fields that differ from their defaults, :data:`NOT_MEASURED` left out: the
    configuration's key, the same for each of its repeats and stable as fields with defaults are added (a sweep's
    planned keys, the store's ``config_key``)."""
    fields = trial.model_dump(mode="json", exclude_defaults=True, exclude=set(NOT_MEASURED))
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def check_device(device: str) -> str:
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError("must be cpu or cuda[:N]")
    return device


def check_step_cap(max_steps: int | None, steps: int, target_ci_pct: float | None) -> int | None:
    """An adaptive trial's step cap cannot be below its minimum (nor below 2, the fewest a CI needs)."""
    if max_steps is not None and target_ci_pct is not None and max_steps < max(steps, 2):
        raise ValueError(f"must be at least steps ({steps}) and 2, the fewest steps a confidence interval needs")
    return max_steps

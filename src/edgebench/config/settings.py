"""Every setting of a Trial declared once: its flag, its YAML key, how users write its value, its help and default.

``edgebench run`` builds its options from these declarations, the sweep configuration its keys, and the plan its
Trials, so a setting is written the same way, checked by the same code and refused in the same words wherever it
is given: ``--memory-budget 8GiB`` on the command line, ``memory_budget: 8GiB`` in a sweep file, where a scalar is
a constant and a list an axis (``memory_budget: [2GiB, 8GiB]``).  Types and limits stay on
:class:`~edgebench.records.trial.Trial`; a declaration only adds what the record cannot know: names, units, words.
A Trial field without a declaration fails ``tests/unit/config/test_settings.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, InstanceOf, TypeAdapter, ValidationError

from edgebench.config.trial import check_backend
from edgebench.config.yaml_values import read_scalar
from edgebench.errors import UsageError, explain
from edgebench.host.cpuset import TypedMask, parse_cores
from edgebench.records.trial import Trial, check_device
from edgebench.units import parse_duration_s, parse_freq_khz, parse_percent, parse_shape, parse_size_bytes

#: Core sets named by role on big.LITTLE devices (DNNTune's ``CPU_affinity``), resolved against cpufreq clusters.
CORE_ROLES = ("big", "little", "all")


def quantity(parser: Callable[[str], Any], *, bare_numbers: bool = True) -> Callable[[Any], Any]:
    """Parse a value written as text (``10ms``); a YAML number passes through when it already is in the field's unit.

    ``bare_numbers=False`` sends numbers through the parser too (``target_ci: 0.02`` is ambiguous, not 0.02%).
    Anything else is left for the field's type to refuse, so the wording is pydantic's everywhere.
    """

    def parse(value: Any) -> Any:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) or (isinstance(value, int | float) and not bare_numbers):
            return parser(value)
        return value

    return parse


def duration_ms(text: str) -> float:
    """A sampler period: ``10ms``, ``0.5s``; a bare number is milliseconds."""
    return parse_duration_s(text, "ms") * 1e3


def core_spec(value: Any) -> tuple[int, ...] | str | None:
    """A core set: a taskset hex mask (``f0``), a cpu list (``0,2-3``, ``[0, 2, 3]``), ``big``, ``little``, ``all``."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower().replace("+", "_") in (*CORE_ROLES, "big_little"):
        role = value.strip().lower()
        return "all" if role in ("big+little", "big_little") else role
    if isinstance(value, list | tuple):
        if not value or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in value):
            raise ValueError("a list of cores holds core numbers such as [0, 1]")
        return tuple(sorted(set(value)))
    if isinstance(value, int) and not isinstance(value, bool):
        # YAML reads f0 as text but 11 and 0x3 as numbers; read them as written, as taskset would (11 = cpu0 and 4).
        return parse_cores(getattr(value, "text", str(value)))
    if isinstance(value, str):
        return parse_cores(value)
    raise ValueError(f"{value!r} is not a core mask (f0, 0x3), a cpu list (0,2-3), big, little or all")


#: The shortest sampler period honoured: each sample reads ``/proc`` and ``/sys`` files (about 0.1-0.5 ms on a
#: phone or a Pi), so a shorter period is never kept and the sampler spins on a core the trial needs.
MIN_SAMPLE_INTERVAL_MS = 1.0


def sample_interval(interval_ms: float) -> float:
    """A sampler period the sampler can honour (``--interval``, ``sample_interval:``)."""
    if interval_ms < MIN_SAMPLE_INTERVAL_MS:
        raise ValueError(
            f"{interval_ms:g} ms is shorter than the sampler can keep (each sample reads /proc and /sys; at least "
            f"{MIN_SAMPLE_INTERVAL_MS:g}ms, 10ms by default)"
        )
    return interval_ms


def frequency(value: Any) -> int | str:
    """A CPU frequency in kHz or with a unit (``1.7GHz``), or ``all`` (every one the core set's policies offer)."""
    if isinstance(value, str) and value.strip().lower() == "all":
        return "all"
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{value!r} is not a frequency such as 1708800 (kHz), 1.7GHz, or all")
    return parse_freq_khz(value)


def min_time(value: Any) -> Any:
    """A measuring time (``1s``, ``500ms``; a bare number is seconds) or ``auto``."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    return quantity(parse_duration_s)(value)


def push_list(value: Any) -> Any:
    """``--push a.bin,model.mnn:models/m.mnn``: comma-separated ``LOCAL[:REMOTE]``; a YAML list is the same."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


def counter_list(value: Any) -> Any:
    """``cache-misses,task-clock`` or a YAML list: perf event names, each one edgebench can open."""
    from edgebench.host.perf_events import parse_counters

    return parse_counters(value) if isinstance(value, (str, list, tuple)) else value


def name_list(value: Any) -> Any:
    """``q_proj,v_proj`` or a YAML list: layer names."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


def token_counts(value: Any) -> Any:
    """``64,256,1024`` (or a YAML list, or one number): context lengths in tokens; ``none`` for none."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("none", ""):
            return ()
        try:
            return tuple(int(part) for part in text.split(",") if part.strip())
        except ValueError:
            raise ValueError(f"{value!r} is not a list of token counts such as 64,256,1024 (or none)") from None
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return value


def shape(value: Any) -> Any:
    """``3x32x32``, ``[3, 32, 32]`` or ``(3, 32, 32)`` as text; one number is a one-dimensional shape (a language
    model's sequence length: ``--input-shape 256``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return parse_shape(value.strip("[]() ")) if isinstance(value, str) else value


def power_model(spec: str) -> str:
    """``idle=2.7W,max=6.4W[,gpu=10W]`` in its canonical spelling, refused at once when it is not one."""
    from edgebench.measure.estimate import parse_power_model

    return parse_power_model(spec).spec()


def _is_one_shape(value: list[Any]) -> bool:
    """``input_shape: [3, 32, 32]`` is one shape; ``[3x32x32, 1x28x28]`` and ``[[3, 32, 32]]`` are an axis."""
    return all(isinstance(v, int) and not isinstance(v, bool) for v in value)


@dataclass(frozen=True)
class Setting:
    """How users give one :class:`Trial` field: on the command line, in a sweep file, and what it means."""

    #: The Trial field this sets.
    field: str
    #: One line for ``run --help`` (the generated settings reference in the docs shows it too).
    help: str
    #: The sweep file's key (``batch_sizes``, ``sample_interval``); default: the field's name.
    yaml_key: str | None = None
    #: The ``run`` flag (``--interval``); default: the key with dashes, or the field's name for a plural axis.
    cli_flag: str | None = None
    short: str | None = None
    #: Text (or a YAML scalar) -> the field's unit; ``ValueError`` with the fix.  None: the field's type reads it.
    parse: Callable[[Any], Any] | None = None
    #: A check of one value beyond its type (the Trial runs it too), so that a sweep file fails as it loads.
    check: Callable[[Any], Any] | None = None
    #: What one value may be where it is wider than the Trial field: core roles and ``all`` frequencies, which the
    #: plan resolves against the device.
    accepts: Any = None
    #: The default as users write it (``10ms``), or what it means when it depends (``one per core used``).
    shown_default: str | None = None
    #: The key names an axis in the plural (``batch_sizes``): always a list, a scalar a one-element list.
    plural_axis: bool = False
    #: In a sweep without this key: the Trial's default, or this (all the MNN suite's batch sizes).
    sweep_default: Any = None
    #: Left out of a sweep, the key reads None and the plan decides (``frequencies``: none pinned; ``steps``: 20,
    #: or 5 with ``target_ci``) rather than the Trial's default.
    absent_is_none: bool = False
    #: The flag's text is the value as written, never read as YAML: a shell command or a regex (``true``,
    #: ``loss: (\d+)``) must not turn into a boolean or a mapping.
    raw_text: bool = False
    #: Whether a YAML list of these values can be one value (a shape) rather than an axis.
    is_one_value: Callable[[list[Any]], bool] | None = None

    @property
    def key(self) -> str:
        return self.yaml_key or self.field

    @property
    def flag(self) -> str:
        """``--memory-budget`` for the key ``memory_budget``; an axis in the plural is singular (``--batch-size``)."""
        return self.cli_flag or "--" + (self.field if self.plural_axis else self.key).replace("_", "-")

    @property
    def attribute(self) -> str:
        """The sweep configuration's attribute: the plural key of an axis, else the Trial field (key as alias)."""
        return self.key if self.plural_axis else self.field

    @property
    def trial_default(self) -> Any:
        return Trial.model_fields[self.field].default


SETTINGS: tuple[Setting, ...] = (
    Setting("command", "Run your own workload with sh -c on the target (the model is then its label).", raw_text=True),
    Setting("push", "Copy LOCAL[:REMOTE] into the target's work directory before --command (several: a,b:dir/b; REMOTE "
            "is relative to it and stays inside it).",
            parse=push_list, shown_default="nothing", absent_is_none=True, raw_text=True),
    Setting("step_pattern", "Regex ending each step in --command's output (named groups kept), or "
            "mnn-train-demo / tflite-benchmark-model / executorch-runner / executorch-train-cifar.", raw_text=True),
    Setting("model", "Workload name (see `edgebench models`), or a model file: path/to/model.onnx, .mnn, .tflite or "
            ".pte.",
            yaml_key="models", short="-m", plural_axis=True),
    Setting("input_name", "With a model file: the input --input-shape describes (DNNTune's input_name).",
            shown_default="its only (first) input"),
    Setting("output_name", "With a model file: the output each step fetches (DNNTune's output_name).",
            shown_default="every output"),
    Setting("mode", "train: time training steps; infer: time forward passes (warm-up and measured steps alike).",
            plural_axis=True, shown_default="train; infer with a model file", absent_is_none=True),
    Setting("batch_size", "Samples per training step.", yaml_key="batch_sizes", short="-b", plural_axis=True,
            sweep_default=(1, 2, 4, 8, 16, 32)),
    Setting("steps", "Measured training steps (with --target-ci: the minimum).", shown_default="20; 5 with --target-ci",
            absent_is_none=True),
    Setting("min_time_s", "Measure on past --steps until the measured steps (and inference passes) last this long, "
            "e.g. 1s; auto: long enough to resolve the worker's CPU share; 0: exactly --steps.", yaml_key="min_time",
            parse=min_time, accepts=float | Literal["auto"] | None, shown_default="auto without --steps; else 0",
            absent_is_none=True),
    Setting("warmup", "Warm-up steps, excluded from every statistic."),
    Setting("threads", "Intra-op threads.", shown_default="one per core used", plural_axis=True),
    Setting("cores", "Cores to run on: hex mask as taskset (f0 = cpu4-7), list (0,2-3), big, little or all.",
            parse=core_spec, accepts=InstanceOf[TypedMask] | tuple[int, ...] | Literal[CORE_ROLES] | None,
            shown_default="all", plural_axis=True),
    Setting("freq_khz", "Pin the CPU frequency of the cores' cpufreq policies, e.g. 1.7GHz (root only).",
            yaml_key="frequencies", cli_flag="--frequency", parse=frequency, accepts=int | Literal["all"],
            shown_default="not pinned", plural_axis=True, absent_is_none=True),
    Setting("input_shape", "Per-sample input shape, e.g. 3x32x32 (a model file: the dimensions it leaves open).",
            parse=shape, shown_default="the workload's; a model file's own",
            is_one_value=_is_one_shape),
    Setting("num_classes", "Output classes.", shown_default="the workload's"),
    Setting("preset", "Named input of the workload (cifar10, imagenet...; see `edgebench models`)."),
    Setting("data", "Train on real data that ships offline: mnist (images), shakespeare (text)."),
    Setting("sample_interval_ms", "Sampler period, e.g. 10ms.", yaml_key="sample_interval", cli_flag="--interval",
            parse=quantity(duration_ms), check=sample_interval, shown_default="10ms"),
    Setting("infer_steps", "Inference passes timed after training (0 = none); --mode infer times --steps instead."),
    Setting("timeout_s", "Give up on the trial after this long (its idle baseline included), e.g. 30m.",
            yaml_key="timeout", parse=quantity(parse_duration_s), shown_default="30m"),
    Setting("device", "cpu or cuda[:N].", check=check_device),
    Setting("backend", "Framework that runs the model: torch, onnxruntime (infer only), mnn, litert (infer only), "
            "executorch (XNNPACK), executorch-portable; command (--command).",
            plural_axis=True, check=check_backend, shown_default="torch; command with --command",
            absent_is_none=True),
    Setting("precision", "fp32, autocast mixed precision bf16 / fp16, or int8 (static quantization, --mode infer); "
            "int8-dynamic (dynamic range, litert).", plural_axis=True),
    Setting("target_ci_pct", "Step until the 95% CI of the mean step time is within this much of it, e.g. 2%.",
            yaml_key="target_ci", parse=quantity(parse_percent, bare_numbers=False)),
    Setting("max_time_s", "With --target-ci: stop after this long anyway, e.g. 2m.", yaml_key="max_time",
            parse=quantity(parse_duration_s), shown_default="120s"),
    Setting("seed", "Seed for weights and synthetic data."),
    Setting("until_accuracy", "Train until held-out accuracy reaches this (0-1]; needs --data."),
    Setting("eval_every", "With --until-accuracy: evaluate every N steps."),
    Setting("max_steps", "With --target-ci or --until-accuracy: stop after N measured steps anyway.",
            shown_default="2000 with --target-ci; only --timeout with --until-accuracy"),
    Setting("memory_budget_bytes", "The trial may use at most this memory, e.g. 8GiB; over it: infeasible.",
            yaml_key="memory_budget", parse=quantity(parse_size_bytes), shown_default="no limit"),
    Setting("trace", "Record per-step spans: none, layers (nn.Module fwd/bwd) or ops (aten, profiler)."),
    Setting("counters", "Linux perf events to count per step and per traced layer, by perf's names, e.g. "
            "cache-references,cache-misses,instructions,cycles,page-faults,context-switches,task-clock.",
            parse=counter_list, shown_default="none", absent_is_none=True),
    Setting("sampler", "native: a small static sampler built for the device (pip install "
            "'edgebench[native-sampler]'); sh: a --command trial's script loop; auto: native for --command on adb/ssh "
            "devices where it builds, else sh or the Python sampler.", shown_default="auto"),
    Setting("idle_s", "Idle baseline measured before the trial, e.g. 5s; 0 skips it.", yaml_key="idle",
            parse=quantity(parse_duration_s), shown_default="5s where a power sensor exists"),
    Setting("estimate_energy", "Also estimate energy from utilization with this device's power, e.g. "
            "idle=2.7W,max=6.4W[,gpu=10W]; labelled, never in energy_j.", check=power_model),
    Setting("repeats", "Run each configuration N times, each in a fresh worker process, interleaved with the other "
            "configurations; figures and decisions are taken across them. auto: as many as its run-to-run spread "
            "needs (3 to 20).", shown_default="1"),
    Setting("finetune", "Language models: what a training step updates: full (every weight) or lora (low-rank "
            "adapters beside a frozen base)."),
    Setting("lora_rank", "With --finetune lora: the adapters' rank r.", shown_default="8"),
    Setting("lora_alpha", "With --finetune lora: alpha, the adapters' output scaled by alpha / r.",
            shown_default="16"),
    Setting("lora_targets", "With --finetune lora: the linear layers adapted, by name, e.g. q_proj,v_proj.",
            parse=name_list, shown_default="q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"),
    Setting("lora_impl", "With --finetune lora: edgebench (its own LoRA layer, nothing imported) or peft (Hugging "
            "Face's library: pip install 'edgebench[lm]')."),
    Setting("checkpointing", "Language models: activation checkpointing: blocks recomputes each transformer block in "
            "backward instead of keeping its activations; none."),
    Setting("frozen_weights", "Language models: the frozen linear weights (a LoRA base; an inference model) as fp32, "
            "int8 (edgebench's, only int8 kept for backward) or torchao-int8 (torchao's weight-only int8)."),
    Setting("pretrain_steps", "Language models: first train the base in full for N steps on the first half of the "
            "text (cached), then measure the fine-tune on the second half."),
    Setting("until_bits_per_byte", "Language models: train until held-out bits per byte reach this, e.g. 4.5, or "
            "unigram (the text's unigram line); needs --data."),
    Setting("contexts", "Language models: context lengths (tokens) to time the first token and decoding at, e.g. "
            "64,256,1024; none for no generation.", parse=token_counts, is_one_value=_is_one_shape,
            shown_default="64,256,1024 within the model's window", absent_is_none=True),
    Setting("decode_tokens", "Language models: tokens each timed generation produces."),
    Setting("generations", "Language models: timed generations per context length (0: none)."),
)  # fmt: skip
BY_FIELD: dict[str, Setting] = {s.field: s for s in SETTINGS}


@functools.cache
def value_type(setting: Setting) -> Any:
    """The type of one value of ``setting`` as users write it: the Trial field's type (or ``accepts``), read by
    ``parse`` first and checked by ``check`` after, so a flag and a sweep key accept and refuse the same things."""
    info = Trial.model_fields[setting.field]
    base = setting.accepts if setting.accepts is not None else info.annotation
    if setting.accepts is None and info.metadata:
        base = Annotated[(base, *info.metadata)]
    if setting.check is not None:
        check = setting.check
        base = Annotated[base, AfterValidator(lambda v: v if v is None else check(v))]
    if setting.parse is not None:
        base = Annotated[base, BeforeValidator(setting.parse)]
    return Annotated[base, BeforeValidator(_not_a_boolean)]


def _not_a_boolean(value: Any) -> Any:
    """No setting is a yes/no: YAML reads ``true``, ``yes`` and ``on`` as booleans, which number fields would
    otherwise take as 1 (``batch_sizes: [true]`` ran batch 1)."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is a yes/no, not a value of this setting; quote it if you meant text")
    return value


@functools.cache
def _adapter(setting: Setting) -> TypeAdapter[Any]:
    return TypeAdapter(value_type(setting))


def read_flag(setting: Setting, text: str) -> Any:
    """One flag's text as the field's value, read as the sweep file's value would be (``8`` is a number there too);
    what is wrong is a :class:`UsageError` naming the flag, in the words a sweep file's key gets."""
    if not text.strip():  # YAML reads nothing as null, which would mean the default (all cores for --cores "")
        raise UsageError(setting.flag, f"is empty; give a value, or leave {setting.flag} out for its default")
    try:
        return _adapter(setting).validate_python(text if setting.raw_text else read_scalar(text))
    except ValidationError as exc:
        raise UsageError(setting.flag, explain(exc.errors()[0])) from None


def with_adaptive_minimum(values: dict[str, Any]) -> dict[str, Any]:
    """Fill ``steps`` where it was not given: a minimum of 5 with ``target_ci_pct``; else 20 measured steps that go
    on until the phase lasts long enough for the worker's CPU share (``min_time_s`` ``auto``), so the default trial
    shows that figure instead of withholding it.  Given ``steps`` mean exactly that many (the MNN-based suite's
    and the paper's rule), and a command's steps are its own."""
    if values.get("steps") is not None:
        return values
    if values.get("target_ci_pct") is not None:
        return {**values, "steps": 5}
    adaptive = any(values.get(k) is not None for k in ("until_accuracy", "until_bits_per_byte", "command"))
    if values.get("min_time_s") is None and not adaptive:
        return {**values, "min_time_s": "auto"}
    return values

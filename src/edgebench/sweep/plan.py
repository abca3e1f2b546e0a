"""Grid expansion: a sweep configuration becomes an ordered list of Trials, each with a stable key.

The key is a hash of the Trial's fields that differ from their defaults, so it stays the same across runs and
across edgebench versions that add fields with defaults; ``--resume`` skips the keys a sweep already stored.
Everything that depends on the device (core roles, ``all`` frequencies, cores this process may use) is resolved
here, before any trial runs, so a bad core mask fails at once with the key that names it.

Order: core set, then frequency (so the clock changes as rarely as possible), threads, precision, backend, any
other setting given as an axis (in the order of :data:`edgebench.config.settings.SETTINGS`), model, batch size, as the
MNN-based suite walks models and then batch sizes inside one configuration.  Every setting of a Trial can be a
constant or an axis of the sweep (:mod:`edgebench.config.settings`); a value the Trial refuses is reported with its key.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from edgebench.config.settings import BY_FIELD, SETTINGS, Setting, with_adaptive_minimum
from edgebench.config.sweep_file import SweepConfig
from edgebench.config.trial import make_trial
from edgebench.errors import UsageError, located
from edgebench.host.cpu import freq_policies
from edgebench.host.cpuset import format_cpu_list, format_mask
from edgebench.host.frequency import frequencies_for
from edgebench.host.sysfs import SysFS
from edgebench.measure.notes import thread_oversubscription
from edgebench.records.trial import Trial, configuration_key


@dataclass(frozen=True)
class PlannedTrial:
    """One trial to run: its key in the sweep, its place in the plan, the Trial, and which repeat of the Trial's
    configuration it is (0: the first, whose key is the configuration's own)."""

    key: str
    position: int
    trial: Trial
    repeat: int = 0

    @property
    def label(self) -> str:
        label = trial_label(self.trial)
        return label if self.trial.repeats == 1 else f"{label} #{self.repeat + 1}"

    @property
    def config_key(self) -> str:
        return configuration_key(self.trial)


@dataclass(frozen=True)
class Plan:
    sweep_id: str
    trials: tuple[PlannedTrial, ...]

    @property
    def sets_frequency(self) -> bool:
        return any(p.trial.freq_khz is not None for p in self.trials)


#: ``repeats: auto`` first runs this many repeats of each configuration, then as many more as their spread needs.
AUTO_PILOT = 3


def repeat_key(config_key: str, index: int) -> str:
    """A repeat's key in its sweep: the configuration's key for the first (so a sweep stored before repeats existed
    resumes as the first repeat of each), ``<key>-r<index>`` for the others."""
    return config_key if index == 0 else f"{config_key}-r{index}"


def planned_repeats(trial: Trial) -> int:
    """How many repeats of ``trial``'s configuration the plan holds before any runs (``auto``: the pilot's)."""
    return AUTO_PILOT if trial.repeats == "auto" else trial.repeats


def with_repeats(trials: list[Trial]) -> tuple[PlannedTrial, ...]:
    """Each configuration once (a trial planned twice, ``0x3`` and ``0-1``, runs once), then each of its repeats as
    a planned trial of its own key, the repeats of a configuration together; the runner decides the order."""
    unique: dict[str, Trial] = {}
    for trial in trials:
        unique.setdefault(configuration_key(trial), trial)
    planned = []
    for key, trial in unique.items():
        for index in range(planned_repeats(trial)):
            planned.append(PlannedTrial(repeat_key(key, index), len(planned), trial, index))
    return tuple(planned)


def trial_key(trial: Trial) -> str:
    """The configuration's key (:func:`~edgebench.records.trial.configuration_key`): 16 hex digits of SHA-256 over
    the fields that differ from their defaults, stable as fields are added; a repeat's planned key adds its index
    (:func:`repeat_key`)."""
    return configuration_key(trial)


def trial_label(trial: Trial, applied_khz: int | None = None) -> str:
    """Short human name of a planned trial or a stored one's (``result.trial``): ``lenet b8 t2 cpu0-1 1708.8MHz
    fp16``, with the backend
    and mode where they are not the defaults (``mobilenet_v2 b1 t2 cpu=all onnxruntime infer int8``).  A stored
    trial's frequency is the one applied (``applied_khz``, ``result.applied_freq_khz``), the asked one beside it
    where they differ (``1708.8MHz (asked 1700MHz)``)."""
    from edgebench.workloads.lm import SHAPE_ONLY_MODELS

    parts = [trial.model + (" (shape only)" if trial.model in SHAPE_ONLY_MODELS else ""), f"b{trial.batch_size}"]
    parts.append(f"t{trial.threads}" if trial.threads else "t=cores")
    parts.append(f"cpu{format_cpu_list(trial.cores)}" if trial.cores else "cpu=all")
    if trial.freq_khz:
        ran = applied_khz or trial.freq_khz
        asked = f" (asked {trial.freq_khz / 1e3:g}MHz)" if ran != trial.freq_khz else ""
        parts.append(f"{ran / 1e3:g}MHz{asked}")
    if trial.backend != "torch":
        parts.append(trial.backend)
    if trial.mode != "train":
        parts.append(trial.mode)
    if trial.precision != "fp32":
        parts.append(trial.precision)
    if trial.input_shape is not None and len(trial.input_shape) == 1:
        parts.append(f"seq{trial.input_shape[0]}")
    if trial.finetune == "lora":
        parts.append(f"lora-r{trial.lora_rank or 'default'}")
    if trial.frozen_weights != "fp32":
        parts.append(trial.frozen_weights)
    if trial.checkpointing != "none":
        parts.append("ckpt")
    return " ".join(parts)


def default_sweep_id(source: str | Path | None, keys: list[str]) -> str:
    """``<config file stem>-<8 hex digits of the planned keys>``: the same plan gets the same id."""
    stem = Path(source).stem if source else "sweep"
    return f"{stem}-{hashlib.sha256(' '.join(sorted(keys)).encode()).hexdigest()[:8]}"


def resolve_cores(
    spec: tuple[int, ...] | str | None, index: int, sysfs: SysFS, allowed: tuple[int, ...]
) -> tuple[int, ...] | None:
    """A configured core set as core ids (``None`` = every allowed core); roles come from cpufreq clusters.

    ``little`` is the cluster with the lowest maximum frequency and ``big`` every other core, so on a phone with a
    prime core (Snapdragon 855: 4 + 3 + 1) ``big`` is the gold cluster and the prime core, as DNNTune's big cores.
    """
    field = f"cores[{index}]"
    if spec is None or spec == "all":
        return None
    if isinstance(spec, str):
        # The roles are the device's clusters, all of them: judged among the usable cores only, a replayed phone
        # tree on a 2-core machine called its little cluster big.
        policies = freq_policies(sysfs)
        if not policies:
            raise UsageError(
                field, f"{spec} cores are told apart by cpufreq clusters and this device has none; give a mask"
            )
        ordered = sorted(policies, key=lambda p: (p.cpuinfo_max_khz or p.max_khz or 0, p.cores))
        little = set(ordered[0].cores)
        cores = little if spec == "little" or len(ordered) == 1 else {c for p in ordered[1:] for c in p.cores}
        usable = tuple(sorted(cores & set(allowed)))
        if not usable:
            raise UsageError(
                field,
                f"the {spec} cores of this device (cpu {format_cpu_list(sorted(cores))}) are not usable here "
                f"(usable: cpu {format_cpu_list(allowed)}); give usable cores",
            )
        return usable
    missing = sorted(set(spec) - set(allowed))
    if missing:
        raise UsageError(
            field,
            f"cpu {format_cpu_list(missing)} (mask {format_mask(spec)}) is not available here "
            f"(usable: {format_cpu_list(allowed)}, mask {format_mask(allowed)})",
        )
    return spec


def _frequencies(config: SweepConfig, cores: tuple[int, ...] | None, sysfs: SysFS) -> list[int | None]:
    if config.frequencies is None:
        return [None]
    if config.frequencies == ["all"]:
        found = frequencies_for(sysfs, cores)
        if not found:
            raise UsageError(
                "frequencies",
                "`all` reads each cpufreq policy's scaling_available_frequencies and this device has none "
                "(a virtual machine or container); leave frequencies out",
            )
        return list(found)
    return list(config.frequencies)


#: The axes the plan walks first, outermost first; every other setting's axis follows in declaration order, then
#: model and batch size, innermost.  Cores and frequency are resolved against the device, model with its entry.
_OUTER = ("threads", "precision", "backend")
_INNER = ("model", "batch_size")
_RESOLVED = ("cores", "freq_khz")


def _axis_order() -> tuple[Setting, ...]:
    middle = [s.field for s in SETTINGS if s.field not in (*_RESOLVED, *_OUTER, *_INNER)]
    return tuple(BY_FIELD[f] for f in (*_OUTER, *middle, *_INNER))


def _build(values: dict[str, Any], where: dict[str, str]) -> Trial:
    """A Trial from one point of the grid; an error names the key (and item of an axis) that set the bad value."""
    try:
        return make_trial(**{k: v for k, v in with_adaptive_minimum(values).items() if v is not None})
    except ValidationError as exc:
        field, message = located(exc.errors()[0])
        raise UsageError(where.get(field, field), message) from None


#: The largest grid planned without asking: each planned trial is a validated Trial held in memory (a million take
#: gigabytes and minutes before the first trial), and a grid this size already runs for days.
MAX_TRIALS = 10_000


def grid_size(config: SweepConfig, frequencies: list[list[int | None]]) -> tuple[int, str]:
    """How many trials the grid expands to (before duplicates are merged), and which axes make it that big."""
    axes = [(s.key, len(config.values(s))) for s in _axis_order()]
    size = sum(len(f) for f in frequencies) * math.prod(n for _, n in axes)
    factors = [f"{len(frequencies)} core sets" if len(frequencies) > 1 else ""]
    factors += [f"{n} {key}" for key, n in axes if n > 1]
    return size, " x ".join(f for f in factors if f) or "one trial"


def plan(
    config: SweepConfig,
    *,
    source: str | Path | None,
    sysfs: SysFS,
    allowed: tuple[int, ...],
    max_trials: int = MAX_TRIALS,
) -> Plan:
    """Every trial of the sweep, in run order, each with its key; duplicates (``0x3`` and ``0-1``) run once.

    A grid larger than ``max_trials`` is refused with its size before anything is expanded.
    """
    trials: list[Trial] = []
    seen: set[str] = set()
    order = _axis_order()
    axes = [list(enumerate(config.values(s))) for s in order]
    core_sets = [resolve_cores(spec, i, sysfs, allowed) for i, spec in enumerate(config.cores)]
    frequencies = [_frequencies(config, cores, sysfs) for cores in core_sets]
    size, made_of = grid_size(config, frequencies)
    if size > max_trials:
        raise UsageError(
            "--max-trials",
            f"this sweep is {size:,} trials ({made_of}), more than {max_trials:,}: narrow an axis, or give "
            f"--max-trials {size} to plan it anyway",
        )
    for cores, freqs in zip(core_sets, frequencies, strict=True):
        for freq, *point in itertools.product(freqs, *axes):
            values = {s.field: value for s, (_, value) in zip(order, point, strict=True)}
            where = {s.field: _key_path(config, s, i) for s, (i, _) in zip(order, point, strict=True)}
            entry = values["model"]
            values.update(model=entry.name, cores=cores, freq_khz=freq, cores_mask=getattr(cores, "text", None))
            for field in ("input_shape", "num_classes", "batch_size", "threads"):  # a model's own overrides the sweep's
                if getattr(entry, field) is not None:
                    values[field] = getattr(entry, field)
                    where[field] = f"{where['model']}.{field}"
            trial = _build(values, where)
            _check_threads(trial, allowed, where)
            key = trial_key(trial)
            if key not in seen:
                seen.add(key)
                trials.append(trial)
    planned = with_repeats(trials)
    sweep_id = config.name or default_sweep_id(source, [p.key for p in planned])
    return Plan(sweep_id, planned)


def _check_threads(trial: Trial, allowed: tuple[int, ...], where: dict[str, str]) -> None:
    """Threads far beyond the trial's cores are refused at planning, by the rule ``run`` applies."""
    if trial.threads is None:
        return
    try:
        thread_oversubscription(trial.threads, len(trial.cores or allowed))
    except ValueError as exc:
        raise UsageError(where.get("threads", "threads"), str(exc)) from None


def _key_path(config: SweepConfig, setting: Setting, index: int) -> str:
    """``memory_budget`` for a constant, ``memory_budget[1]`` for the second value of its axis."""
    is_axis = isinstance(getattr(config, setting.attribute), list)
    return f"{setting.key}[{index}]" if is_axis else setting.key

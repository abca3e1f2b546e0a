"""Sweep configuration: a YAML file (or none), ``--set key=value`` overrides, typed validation, errors by key path.

A configuration names the axes of a sweep (models, batch sizes, threads, core masks, CPU frequencies, precision,
backend) and how each trial is measured (steps, warm-up, adaptive stopping, sampler period, cool-down).  Keys mirror
the flags of ``edgebench run``; values that are quantities carry their unit (``10ms``, ``2m``, ``1.7GHz``, ``2%``).
DNNTune's sections (``model`` / ``processing`` / ``objective``) are accepted too (see :mod:`edgebench.config.dnntune`).

Every error names the key at fault as a path (``batch_sizes[2]``, ``cooldown.within_c``) and says what would
fix it; nothing runs until the whole configuration is valid.
"""

from __future__ import annotations

import difflib
import itertools
import re
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
)

from edgebench.config.settings import SETTINGS, Setting, quantity, shape, value_type, with_adaptive_minimum
from edgebench.config.yaml_values import parse_yaml
from edgebench.errors import UsageError, explain, shortened
from edgebench.host.files import config_text
from edgebench.records.model import Record
from edgebench.records.trial import check_step_cap
from edgebench.registry import MODELS
from edgebench.units import parse_duration_s

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _as_list(value: Any) -> Any:
    """A scalar where a list is expected means a one-element axis (``batch_sizes: 8``)."""
    return value if isinstance(value, list | tuple) else [value]


class StrictModel(Record):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)


class ModelEntry(StrictModel):
    """One model of the sweep, with per-model overrides (a 32x32 SqueezeNet beside a 28x28 LeNet).

    ``batch_size`` and ``threads`` pin the entry to one value of those axes, so a list of entries names single
    trials (``edgebench predict --suggest`` writes its suggestions so); the same model may appear once per entry.
    """

    name: str
    input_shape: Annotated[tuple[Annotated[int, Field(ge=1)], ...] | None, BeforeValidator(shape)] = None
    num_classes: Annotated[int, Field(ge=1)] | None = None
    batch_size: Annotated[int, Field(ge=1)] | None = None
    threads: Annotated[int, Field(ge=1)] | None = None

    @field_validator("name")
    @classmethod
    def _registered(cls, name: str) -> str:
        from edgebench.backends.model_file import looks_like_file

        if looks_like_file(name):  # a model file: checked and read where the plan makes its trials
            return name
        return MODELS.canonical(name.replace("-", "_"))


def _model_entry(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


class CooldownConfig(StrictModel):
    """A pause between trials so that one trial's heat does not slow the next (the MNN suite waits 120 s).

    ``seconds`` alone: a fixed pause.  ``until_idle``: wait until every temperature sensor is within ``within_c``
    of the value it read before the first trial, at most ``timeout``; where the device has no temperature sensor
    the sweep waits ``seconds`` (120 when not given) instead and says so.
    """

    seconds: Annotated[Annotated[float, Field(ge=0)] | None, BeforeValidator(quantity(parse_duration_s))] = None
    until_idle: bool = False
    within_c: Annotated[float, Field(gt=0)] = 2.0
    timeout_s: Annotated[float, Field(gt=0, alias="timeout"), BeforeValidator(quantity(parse_duration_s))] = 600.0
    between: Literal["trials", "models"] = "trials"

    @property
    def enabled(self) -> bool:
        return self.until_idle or bool(self.seconds)


def _cooldown(value: Any) -> Any:
    """``cooldown: 120s`` / ``cooldown: 120`` is a fixed pause, ``cooldown: idle`` waits for idle temperature."""
    if value is None:
        return {}
    if isinstance(value, str) and value.strip().lower() in ("idle", "until_idle"):
        return {"until_idle": True}
    if isinstance(value, int | float | str) and not isinstance(value, bool):
        return {"seconds": value}
    return value


def _axis_or_value(setting: Setting) -> Callable[[Any], str]:
    """A list is an axis of the setting (``memory_budget: [2GiB, 8GiB]``), anything else one value for every trial."""

    def which(value: Any) -> str:
        one = setting.is_one_value is not None and isinstance(value, list) and setting.is_one_value(value)
        return "(axis)" if isinstance(value, list) and not one else "(value)"

    return which


def sweep_field(setting: Setting) -> tuple[Any, Any]:
    """The sweep configuration's field for ``setting``, derived from its declaration (type, key, default)."""
    one = value_type(setting)
    alias = setting.key if setting.key != setting.attribute else None
    if setting.field == "model":
        entry = Annotated[ModelEntry, BeforeValidator(_model_entry)]
        return Annotated[list[entry], BeforeValidator(_as_list)], Field(  # type: ignore[valid-type]
            default_factory=lambda: [ModelEntry(name=setting.trial_default)], min_length=1
        )
    if setting.plural_axis:
        axis = Annotated[list[one], BeforeValidator(_as_list), Field(min_length=1)]  # type: ignore[valid-type]
        if setting.absent_is_none:
            return axis | None, Field(None, alias=alias)
        default = list(setting.sweep_default or [setting.trial_default])
        return axis, Field(default_factory=lambda: list(default), alias=alias)
    value_or_axis = Annotated[
        Annotated[one, Tag("(value)")] | Annotated[list[one], Field(min_length=1), Tag("(axis)")],  # type: ignore[valid-type]
        Discriminator(_axis_or_value(setting)),
    ]
    if setting.absent_is_none:
        return value_or_axis | None, Field(None, alias=alias)
    return value_or_axis, Field(setting.trial_default, alias=alias)


#: One field per Trial setting: ``models``, ``batch_sizes``, ``threads``... ``memory_budget``, ``idle``.
TrialSettings = create_model(
    "TrialSettings",
    __base__=StrictModel,
    __doc__="Every Trial setting as a sweep key: a scalar is one value for every trial, a list an axis.",
    **{s.attribute: sweep_field(s) for s in SETTINGS},  # type: ignore[call-overload]
)


class SweepConfig(TrialSettings):  # type: ignore[valid-type,misc]
    """The whole sweep: the Trial settings (axes and constants) and what belongs to the sweep itself."""

    #: The sweep's id in the store; ``--resume`` finds a sweep by it.  Default: the file's stem plus a hash.
    name: str | None = None
    #: A pause between trials: ``120s`` (fixed), ``idle``, or ``{seconds, until_idle, within_c, timeout, between:
    #: trials|models}``: wait until every temperature sensor is within ``within_c`` °C of what it read before the
    #: first trial, at most ``timeout``; without a temperature sensor, a fixed ``seconds`` (120) and the result says so.
    cooldown: Annotated[CooldownConfig, BeforeValidator(_cooldown)] = Field(default_factory=CooldownConfig)
    #: DNNTune's analysis objective: which trial the sweep's summary calls best.
    objective: Literal["latency-first", "energy-first"] = "latency-first"
    #: Devices to sweep, each one trial at a time, all of them in parallel: names or URLs (``[pixel, orin]``), or
    #: a mapping defining them as the configuration file's ``targets:`` does (``{pixel: "adb://SERIAL"}``).
    targets: list[str] | dict[str, Any] | None = None

    @field_validator("name")
    @classmethod
    def _id_safe(cls, name: str | None) -> str | None:
        if name is not None and not _NAME.match(name):
            raise ValueError("use letters, digits, '.', '_' and '-' (it names the sweep in the store and on disk)")
        return name

    @field_validator("frequencies")
    @classmethod
    def _all_alone(cls, values: list[Any] | None) -> list[Any] | None:
        if values and "all" in values and len(values) > 1:
            raise ValueError("`all` already holds every frequency; give all or a list of frequencies")
        return values

    @field_validator("repeats")
    @classmethod
    def _one_repeat_count(cls, repeats: Any) -> Any:
        """Repeats are how often each configuration runs, not a setting of the work: one value for the sweep."""
        if isinstance(repeats, list):
            raise ValueError("is how often each configuration runs: give one number (or auto), not a list")
        return repeats

    @field_validator("max_steps")
    @classmethod
    def _cap_above_minimum(cls, max_steps: Any, info: ValidationInfo) -> Any:
        """Checked here when every value is one constant; an axis of them is checked per trial by the plan."""
        steps, target = info.data.get("steps"), info.data.get("target_ci_pct")
        if any(isinstance(v, list) for v in (max_steps, steps, target)):
            return max_steps
        return check_step_cap(max_steps, steps or 5, target)

    @property
    def measured_steps(self) -> int:
        """Measured steps when ``steps`` is one value: 20, or 5 with ``target_ci`` (:func:`with_adaptive_minimum`)."""
        return int(with_adaptive_minimum({"steps": self.steps, "target_ci_pct": self.target_ci_pct}).get("steps") or 20)

    def values(self, setting: Setting) -> list[Any]:
        """The values ``setting`` takes in this sweep, in the order given: an axis, or one value for every trial."""
        value = getattr(self, setting.attribute)
        return list(value) if isinstance(value, list) else [value]


class LoadedConfig(Record):
    """A validated configuration and what loading it had to say (DNNTune keys that do not apply here)."""

    model_config = ConfigDict(frozen=True)

    config: SweepConfig
    source: str
    notes: tuple[str, ...] = ()
    raw: dict[str, Any]
    #: native key -> the DNNTune key it came from (``cores`` -> ``processing.CPU_affinity``)
    origins: dict[str, str] = Field(default_factory=dict)
    #: keys given with --set
    overridden: frozenset[str] = frozenset()
    from_file: bool = False

    def label(self, key_path: str) -> str:
        """Where a key was written, as an error should name it: ``sweep.yaml: cores[1]`` or ``--set cores[1]``."""
        original = next((o for n, o in self.origins.items() if _under(key_path, n)), key_path)
        from_set = any(_under(original, k) or _under(k, original) for k in self.overridden)
        return f"--set {original}" if from_set or not self.from_file else f"{self.source}: {original}"

    def relabel(self, error: UsageError) -> UsageError:
        """A planning error on a native key (``cores[0]``) named as the user wrote it."""
        if "--" in error.field or ":" in error.field:
            return error
        return UsageError(self.label(error.field), error.message)


def load_config(path: str | Path | None, overrides: list[str] | tuple[str, ...] = ()) -> LoadedConfig:
    """Read ``path`` (YAML; None for none), apply ``--set`` overrides, translate DNNTune sections, validate."""
    from edgebench.config.dnntune import translate

    source = str(path) if path else "--set"
    raw = read_yaml(Path(path)) if path else {}
    overridden: set[str] = set()
    for item in overrides:
        key, value = parse_override(item)
        set_path(raw, key, value)
        overridden.add(key)
    if path is not None and not raw:  # most likely the wrong file, or one not yet written: never a silent default
        raise UsageError(
            str(path),
            "sets nothing; give at least one key (e.g. models: [lenet] or batch_sizes: [1, 8]), or run "
            "`edgebench sweep` with no file for the default sweep",
        )
    native, origins, notes = translate(raw, source)
    context = dict(source=source, origins=origins, overridden=frozenset(overridden), from_file=path is not None)
    try:
        config = SweepConfig.model_validate(native)
    except ValidationError as exc:
        key_path, message = describe_error(exc, SweepConfig)
        raise UsageError(LoadedConfig.model_construct(**context).label(key_path), message) from None
    return LoadedConfig(config=config, notes=tuple(notes), raw=native, **context)


def _under(path: str, prefix: str) -> bool:
    """``batch_sizes[2]`` and ``cooldown.seconds`` are under ``batch_sizes`` and ``cooldown``."""
    return path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")


def read_yaml(path: Path) -> dict[str, Any]:
    text = config_text(path, str(path), "the sweep's YAML file")  # a FIFO, a binary, a huge file: one line
    from edgebench.config.dnntune import spaced_keys

    try:
        data = parse_yaml(spaced_keys(text))
    except ValueError as exc:
        raise UsageError(str(path), str(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(
            str(path),
            f"the top level must be a mapping of keys (models:, batch_sizes: ...), not a {type(data).__name__}",
        )
    return data


_OVERRIDE = re.compile(r"^\s*([A-Za-z_][\w]*(?:\[\d+\])?(?:\.[A-Za-z_][\w]*(?:\[\d+\])?)*)\s*=(.*)$", re.DOTALL)


def parse_override(item: str) -> tuple[str, Any]:
    """``batch_sizes=[1,2,4]`` -> ``("batch_sizes", [1, 2, 4])``; the value is read as YAML (``=`` alone is null)."""
    match = _OVERRIDE.match(item)
    if not match:
        raise UsageError("--set", f"{item!r} is not KEY=VALUE such as batch_sizes=[1,2,4] or cooldown.seconds=60")
    key, text = match.group(1), match.group(2).strip()
    try:
        value = parse_yaml(text) if text else None
    except ValueError as exc:
        if text[:1] in "[{\"'":  # meant as a list, mapping or quoted text: a typo, not a bare string
            problem = str(exc).split(": ", 1)[-1]
            raise UsageError(
                f"--set {key}",
                f"{shortened(repr(text))} is not valid YAML ({problem}); e.g. {key}=[a, b] or {key}='text'",
            ) from None
        value = text  # a bare string YAML cannot read, e.g. 0,2-3: take it as written
    return key, value


_STEP = re.compile(r"([A-Za-z_]\w*)|\[(\d+)\]")


def set_path(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``a.b[2].c`` inside nested dicts and lists, creating mappings on the way."""
    steps: list[str | int] = [m.group(1) if m.group(1) else int(m.group(2)) for m in _STEP.finditer(key)]
    node: Any = data
    for step, following in itertools.pairwise(steps):
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                raise UsageError(f"--set {key}", f"there is no item {step} to set inside")
            node = node[step]
            continue
        if not isinstance(node.get(step), dict | list):
            node[step] = [] if isinstance(following, int) else {}
        node = node[step]
    last = steps[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise UsageError(f"--set {key}", f"there is no item {last}; set the whole list instead")
        node[last] = value
    else:
        node[last] = value


def format_loc(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The config model inside an annotation (``list[Annotated[ModelEntry, ...]]`` -> ``ModelEntry``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _nested_model(arg)
        if found is not None:
            return found
    return None


def _keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _model_at(root: type[BaseModel], loc: tuple[str | int, ...]) -> type[BaseModel]:
    model = root
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        nested = _nested_model(field.annotation) if field is not None else None
        if nested is None:
            break
        model = nested
    return model


def _clean_loc(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """Drop pydantic's union-branch tags (``int``, ``function-after[...]``) that are not keys of the file."""
    return tuple(p for p in loc if isinstance(p, int) or not ("[" in p or "(" in p or p in _TYPE_TAGS))


_TYPE_TAGS = {"int", "str", "float", "bool", "list", "dict", "tuple", "none", "literal", "nullable"}


def describe_error(exc: ValidationError, root: type[BaseModel]) -> tuple[str, str]:
    """The first error as ``(key path, what is wrong and how to fix it)``."""
    error = exc.errors()[0]
    loc = _clean_loc(tuple(error["loc"]))
    key_path = format_loc(loc) or "(top level)"
    kind = error["type"]
    if kind == "extra_forbidden":
        parent = _model_at(root, loc[:-1])
        valid = _keys(parent)
        close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        return key_path, f"unknown key; {hint}valid keys here: {', '.join(valid)}"
    return key_path, explain(error)


def parse_cooldown(text: str | None) -> CooldownConfig:
    """``--cooldown 120s`` or ``--cooldown idle``, read as a sweep file's ``cooldown:`` is; ValueError with the fix."""
    try:
        return CooldownConfig.model_validate(_cooldown(text))
    except ValidationError as exc:
        raise ValueError(f"{text!r}: {explain(exc.errors()[0])}; give a pause such as 120s, or idle") from None

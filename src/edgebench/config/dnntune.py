"""DNNTune's configuration sections, read into a sweep configuration.

DNNTune (REFERENCE.md section 3) configures a run with three sections::

    model:      {name, file, input_name, input_shape, output_name, data_type}
    processing: {processing_unit, CPU_threads, CPU_affinity, framework, DNN_library, profiling_tools,
                 energy_profiling, profiling_events}
    objective:  latency-first | energy-first

Its keys are matched without regard to case (the paper writes ``CPU_threads``).  What maps onto a sweep becomes
the native key (``model.name`` -> ``models``, ``CPU_affinity: big`` -> ``cores: [big]``, ``data_type`` ->
``precision``); what names TensorFlow graph nodes or vendor profilers is accepted and reported as not used,
because edgebench builds its own registered model and samples its own counters.  ``framework`` names backends
(``torch``/``pytorch``, ``onnxruntime``/``ort``, ``mnn``, ``tflite``/``litert``: whichever are registered); one
edgebench has no backend for (TensorFlow, MACE), or a data type it cannot run, is an error: measuring something else
under that name would mislead.
Errors name the key as written in the file (``processing.CPU_affinity``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from edgebench.config.trial import check_backend
from edgebench.errors import UsageError
from edgebench.registry import BACKENDS

MODEL_KEYS = ("name", "file", "input_name", "input_shape", "output_name", "data_type")
PROCESSING_KEYS = (
    "processing_unit",
    "cpu_threads",
    "cpu_affinity",
    "framework",
    "dnn_library",
    "profiling_tools",
    "energy_profiling",
    "profiling_events",
)
_PRECISION = {
    "float": "fp32",
    "float32": "fp32",
    "fp32": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "fp16": "fp16",
    "bfloat16": "bf16",
    "bf16": "bf16",
    "int8": "int8",
    "qint8": "int8",
    "quint8": "int8",
}


_UNSPACED = re.compile(
    r"^(\s*)(" + "|".join(("objective", *MODEL_KEYS, *PROCESSING_KEYS)) + r"):(?=\S)", re.IGNORECASE | re.MULTILINE
)


def spaced_keys(text: str) -> str:
    """DNNTune's own example writes ``input_shape:[1,224,224,3]``, which YAML reads as one word (no space after the
    colon); a DNNTune key written so gets its space.  Only turns what would fail to parse into what it says."""
    return _UNSPACED.sub(r"\1\2: ", text)


def is_dnntune(raw: dict[str, Any]) -> bool:
    return isinstance(raw.get("model"), dict) or isinstance(raw.get("processing"), dict)


def translate(raw: dict[str, Any], source: str) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """Native keys for ``raw``, a map from native key to the DNNTune key it came from, and notes for the user."""
    native = {k: v for k, v in raw.items() if k not in ("model", "processing", "objective")}
    origins: dict[str, str] = {}
    notes: list[str] = []
    objective = raw.get("objective")
    if isinstance(objective, dict):
        section = _section(objective, "objective", ("objective",), source)
        objective = section.get("objective", (None, None))[1]
        origins["objective"] = "objective.objective"
    if objective is not None:
        native["objective"] = objective
    if "model" in raw:
        _model(_section(raw["model"], "model", MODEL_KEYS, source), native, origins, notes, source)
    if "processing" in raw:
        _processing(_section(raw["processing"], "processing", PROCESSING_KEYS, source), native, origins, notes, source)
    return native, origins, notes


def _section(value: Any, name: str, keys: tuple[str, ...], source: str) -> dict[str, tuple[str, Any]]:
    """``{lowercase key: (key as written, value)}``; an unknown key is an error naming it."""
    if not isinstance(value, dict):
        raise UsageError(f"{source}: {name}", f"DNNTune's {name} section is a mapping of keys ({', '.join(keys)})")
    out: dict[str, tuple[str, Any]] = {}
    for key, item in value.items():
        lower = str(key).lower()
        if lower not in keys:
            raise UsageError(
                f"{source}: {name}.{key}", f"unknown key in DNNTune's {name} section; valid: {', '.join(keys)}"
            )
        out[lower] = (f"{name}.{key}", item)
    return out


def _items(value: Any) -> list[Any]:
    """DNNTune writes lists as ``a, b``; YAML may give a real list."""
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [value]


def _claim(native: dict[str, Any], key: str, value: Any, origin: str, origins: dict[str, str], source: str) -> None:
    if key in native:
        raise UsageError(f"{source}: {origin}", f"also given as {key}; keep one of the two")
    native[key] = value
    origins[key] = origin


def _model(
    section: dict[str, tuple[str, Any]], native: dict[str, Any], origins: dict[str, str], notes: list[str], source: str
) -> None:
    """``model.file`` drives the run where edgebench runs its format (``.onnx``, ``.mnn``, ``.tflite``); otherwise
    ``model.name``
    is a registered model and the file is said not to be used."""
    from edgebench.backends.model_file import FORMATS

    file_entry = section.get("file")
    if file_entry is not None and Path(str(file_entry[1])).suffix.lower() in FORMATS:
        _model_file(section, native, origins, notes, source)
        return
    if "name" not in section:
        raise UsageError(f"{source}: model.name", "required key is missing: name one of edgebench's models")
    where, name = section["name"]
    entry: dict[str, Any] = {"name": name}
    if "input_shape" in section:
        shape_key, shape = section["input_shape"]
        batch, per_sample = _split_shape(shape, f"{source}: {shape_key}")
        entry["input_shape"] = list(per_sample)
        if batch is not None and "batch_sizes" not in native:
            native["batch_sizes"] = [batch]
            origins["batch_sizes"] = shape_key
    _claim(native, "models", [entry], where, origins, source)
    if file_entry is not None:
        key, file = file_entry
        notes.append(
            f"{key}: {file} is not a format edgebench runs (it runs {', '.join(FORMATS)} files); the sweep runs its "
            f"registered model {name!r}"
        )
    for key in ("input_name", "output_name"):
        if key in section:
            notes.append(f"{section[key][0]} is not used: edgebench builds its own registered model {name!r}")
    _data_type(section, native, origins, source)


def _model_file(
    section: dict[str, tuple[str, Any]], native: dict[str, Any], origins: dict[str, str], notes: list[str], source: str
) -> None:
    """The user's model file: its path (relative to the configuration's folder), input, output and batch."""
    key, file = section["file"]
    path = Path(str(file)).expanduser()
    if not path.is_absolute() and Path(source).parent.joinpath(path).exists():
        path = Path(source).parent / path
    entry: dict[str, Any] = {"name": str(path)}
    if "input_shape" in section:  # the file's own layout, batch first, as written (no NHWC reading: it is the file's)
        shape_key, shape = section["input_shape"]
        dims = _dims(shape, f"{source}: {shape_key}")
        if len(dims) > 1:
            entry["input_shape"] = list(dims[1:])
        if "batch_sizes" not in native:
            native["batch_sizes"] = [dims[0]]
            origins["batch_sizes"] = shape_key
    elif "batch_sizes" not in native:  # the file's own batch (make_trial reads it), not the default sweep's six
        native["batch_sizes"] = [_file_batch(path)]
        origins["batch_sizes"] = key
    _claim(native, "models", [entry], key, origins, source)
    for name in ("input_name", "output_name"):
        if name in section:
            where, value = section[name]
            _claim(native, name, str(value), where, origins, source)
    if "mode" not in native:
        native["mode"] = "infer"
        origins["mode"] = key
    if "name" in section:
        where, label = section["name"]
        notes.append(f"{where} ({label}) is a label only: the trials run {path.name} and are named after it")
    _data_type(section, native, origins, source)


def _file_batch(path: Path) -> int:
    """The batch the file fixes, else 1; a file that cannot be read is left to the plan to refuse, by its key."""
    from edgebench.backends import model_file as mf

    try:
        _, batch = mf.resolve_feeds(mf.inspect(mf.check_path(str(path))), batch_size=None, input_name=None,
                                    input_shape=None)  # fmt: skip
    except ValueError:
        return 1
    return batch


def _data_type(
    section: dict[str, tuple[str, Any]], native: dict[str, Any], origins: dict[str, str], source: str
) -> None:
    if "data_type" in section:
        key, data_type = section["data_type"]
        precision = _PRECISION.get(str(data_type).strip().lower())
        if precision is None:
            raise UsageError(
                f"{source}: {key}",
                f"{data_type!r} cannot be run here; use float (fp32), float16 or bfloat16 (mixed precision), or int8 "
                "(static quantization, inference)",
            )
        _claim(native, "precision", [precision], key, origins, source)


def _dims(shape: Any, field: str) -> tuple[int, ...]:
    dims = _items(shape.strip("[]() ") if isinstance(shape, str) else shape)
    try:
        values = tuple(int(d) for d in dims)
    except (TypeError, ValueError):
        raise UsageError(field, f"{shape!r} is not a shape such as [1, 224, 224, 3]") from None
    if not values or min(values) < 1:
        raise UsageError(field, f"{shape!r} is not a shape such as [1, 224, 224, 3]")
    return values


def _split_shape(shape: Any, field: str) -> tuple[int | None, tuple[int, ...]]:
    """``[1, 224, 224, 3]`` (NHWC, as TensorFlow writes it) or ``[1, 3, 224, 224]`` -> batch 1 and ``(3, 224, 224)``."""
    values = _dims(shape, field)
    if len(values) != 4:
        return None, values
    batch, rest = values[0], values[1:]
    channels_last = rest[-1] in (1, 3, 4) and rest[0] not in (1, 3, 4)
    return batch, (rest[-1], *rest[:-1]) if channels_last else rest


#: DNNTune's profiling events -> the perf events that count them (empty: what edgebench always records) and a note.
DNNTUNE_EVENTS: dict[str, tuple[tuple[str, ...], str]] = {
    "llcmiss": (("cache-references", "cache-misses"), "counted as perf's cache-references and cache-misses "
                "(their ratio is the miss ratio) per step and per traced layer"),
    "cpuutilization": ((), "recorded by the sampler as per-core utilization (always)"),
    "mem_footprint": ((), "recorded as peak memory and memory by category (always)"),
}  # fmt: skip


def _profiling_events(
    entry: tuple[str, Any], native: dict[str, Any], origins: dict[str, str], notes: list[str], source: str
) -> None:
    """DNNTune's ``profiling_events`` as ``counters`` (perf's names); a perf name itself is taken as written."""
    from edgebench.host.perf_events import EVENTS

    key, value = entry
    counters: list[str] = []
    for item in _items(value):
        name = str(item).strip()
        mapped = DNNTUNE_EVENTS.get(name.lower())
        if mapped is not None:
            counters += mapped[0]
            notes.append(f"{key}: {name} is {mapped[1]}")
        elif name in EVENTS:
            counters.append(name)
        else:
            known = ", ".join(["CPUUtilization", "Mem_footprint", "LLCmiss", *EVENTS])
            raise UsageError(f"{source}: {key}", f"{name!r} is not an event edgebench can count; use one of {known}")
    if counters:
        _claim(native, "counters", ",".join(dict.fromkeys(counters)), key, origins, source)


def _processing(
    section: dict[str, tuple[str, Any]], native: dict[str, Any], origins: dict[str, str], notes: list[str], source: str
) -> None:
    if "cpu_threads" in section:
        key, threads = section["cpu_threads"]
        _claim(native, "threads", _items(threads) if isinstance(threads, str) else threads, key, origins, source)
    if "cpu_affinity" in section:
        key, affinity = section["cpu_affinity"]
        _claim(native, "cores", affinity, key, origins, source)
        if str(affinity).strip().lower().replace("_", "+") == "big+little":
            notes.append(
                f"{key}: big+little is every core (both clusters; on a device without cpufreq clusters, all its cores)"
            )
    if "processing_unit" in section:
        key, units = section["processing_unit"]
        devices = []
        for unit in _items(units):
            text = str(unit).lower()
            if text.startswith("cloud"):
                notes.append(f"{key}: {unit} is for partition analysis; the sweep measures on this device")
            elif "gpu" in text:
                devices.append("cuda")
            elif "cpu" in text:
                devices.append("cpu")
            else:
                raise UsageError(f"{source}: {key}", f"{unit!r} is not available; use mobile_CPU or GPU")
        if len(set(devices)) > 1:
            raise UsageError(f"{source}: {key}", "a sweep runs on one processing unit; give mobile_CPU or GPU")
        if devices:
            _claim(native, "device", devices[0], key, origins, source)
    if "framework" in section:
        key, frameworks = section["framework"]
        backends, foreign = [], []
        for name in _items(frameworks):
            try:
                backends.append(check_backend(str(name)))
            except ValueError:
                foreign.append(str(name))  # DNNTune's TensorFlow, MACE...: said in a note, the rest still runs
        if foreign:
            runnable = ", ".join(b for b in BACKENDS.names() if b not in ("command", "fake"))
            from edgebench.backends.model_file import looks_like_file

            files = [m["name"] for m in native.get("models", []) if looks_like_file(str(m["name"]))]
            default = "the model file's own runtime (onnxruntime for .onnx, mnn for .mnn, litert for .tflite)" if (
                files) else "the default backend (torch)"  # fmt: skip
            runs = ", ".join(dict.fromkeys(backends)) if backends else default
            cannot = ", ".join(foreign)
            notes.append(f"{key}: edgebench cannot run {cannot}; it runs {runnable}; this sweep runs {runs}")
        if backends:
            _claim(native, "backend", list(dict.fromkeys(backends)), key, origins, source)
    if "profiling_events" in section:
        _profiling_events(section["profiling_events"], native, origins, notes, source)
    for name in ("dnn_library", "profiling_tools"):
        if name in section:
            key, value = section[name]
            notes.append(f"{key} ({value}) is not used: edgebench's own sampler records CPU, memory and sensors")
    if "energy_profiling" in section:
        key, value = section["energy_profiling"]
        if value not in (True, False):
            raise UsageError(f"{source}: {key}", f"must be true or false (got {value!r})")
        if value:
            notes.append(f"{key}: energy is reported wherever this device has a power sensor")

"""The checks a Trial passes where the user's input enters: the CLI's flags, a sweep's plan, a DNNTune file.

:class:`~edgebench.records.trial.Trial` is a record and checks only itself (types, ranges, fields that must agree).
What needs the registries or the user's code is checked here, once, before anything runs: the model and backend are
known (aliases become their canonical names), the backend can run the mode, device, precision and trace asked for,
a ``module:factory`` model imports, a preset and a dataset fit the model's task, a step pattern and push specs
parse, and a power model reads.  Errors come back as a pydantic ``ValidationError`` located at the field, as the
record's own errors do, so every caller reports both the same way.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from edgebench.backends.base import Capabilities, device_kind, refusal
from edgebench.backends.command.shell import in_place
from edgebench.records.trial import QUANTIZED, Trial
from edgebench.registry import BACKENDS, DATASETS, MODELS


def make_trial(**values: Any) -> Trial:
    """A Trial from the user's values, with every check (the record's and the edge's) passed.

    Where the record refuses the values, a backend that cannot run them at all is the reason given first (an
    ONNX Runtime int8 training trial: the backend trains nothing, whatever the precision).
    """
    values = _with_text_file(_with_model_file(values))
    try:
        trial = Trial(**values)
    except ValidationError:
        if values.get("model_file") is None:  # a model file's own reason (no training) comes first
            _refuse_backend_first(values)
        raise
    return check_trial(trial)


def _located(field: str, value: Any, message: str) -> ValidationError:
    return ValidationError.from_exception_data(
        "Trial", [{"type": "value_error", "loc": (field,), "input": value, "ctx": {"error": ValueError(message)}}]
    )


def _with_model_file(values: dict[str, Any]) -> dict[str, Any]:
    """``model`` naming a file (``path/to/m.onnx``, ``m.mnn``), or ``model_file`` given: the file checked and read
    (:mod:`edgebench.backends.model_file`), and the values it decides filled in where the user left them out: the
    backend (ONNX Runtime for ``.onnx``, MNN for ``.mnn``), the mode (``infer``), the batch (the file's own fixed
    batch, else 1).  Any problem is one line located at the setting that fixes it."""
    from edgebench.backends import model_file as mf

    model, given_file = values.get("model"), values.get("model_file")
    text = given_file if given_file is not None else model
    if not isinstance(text, str) or (given_file is None and not mf.looks_like_file(text.strip())):
        return values
    field = "model_file" if given_file is not None else "model"
    try:
        path = mf.check_path(text.strip())
        info = mf.inspect(path)
    except ValueError as exc:
        raise _located(field, text, str(exc)) from None
    update: dict[str, Any] = {"model": path.name, "model_file": str(path), "model_sha256": mf.file_digest(path)}
    update["backend"] = values.get("backend") or mf.RUNS_ON[info.format][0]
    update["mode"] = values.get("mode") or "infer"
    try:
        _, batch = mf.resolve_feeds(
            info,
            batch_size=values.get("batch_size"),
            input_name=values.get("input_name"),
            input_shape=tuple(values["input_shape"]) if values.get("input_shape") else None,
        )
    except ValueError as exc:
        message = str(exc)
        where = "input_name" if "no input" in message or "--input-name" in message else "input_shape"
        where = "batch_size" if "fixed batch" in message else where
        raise _located(where, values.get(where), message) from None
    try:
        mf.check_output(info, values.get("output_name"))
    except ValueError as exc:
        raise _located("output_name", values.get("output_name"), str(exc)) from None
    update["batch_size"] = batch
    return {**values, **update}


def _with_text_file(values: dict[str, Any]) -> dict[str, Any]:
    """``data`` naming a file rather than a shipped dataset (``--data notes.txt``): its absolute path and digest, so
    a changed file is another trial; a missing or unreadable one is one line at ``data``."""
    data = values.get("data")
    if not isinstance(data, str) or data.strip() in DATASETS or values.get("data_sha256") is not None:
        return values
    from edgebench.backends.model_file import file_digest

    path = Path(data.strip()).expanduser()
    if not path.is_file():
        if "/" in data or "." in Path(data).name:
            raise _located("data", data, f"no file {data}: give a text file, or one of: {', '.join(DATASETS.names())}")
        return values  # an unknown dataset's name: refused by name below
    try:
        digest = file_digest(path)
    except OSError as exc:
        raise _located("data", data, f"cannot read {data}: {exc.strerror or exc}") from None
    return {**values, "data": str(path.resolve()), "data_sha256": digest}


def _refuse_backend_first(values: dict[str, Any]) -> None:
    backend, mode = values.get("backend"), values.get("mode", "train")
    if not isinstance(backend, str) or backend not in BACKENDS or values.get("command") is not None:
        return
    name = BACKENDS.canonical(backend)
    try:
        _refuse(name, "mode", str(mode), lambda c: c.modes)
        _refuse(name, "on device", device_kind(str(values.get("device", "cpu"))), lambda c: c.devices)
    except ValueError as exc:
        raise ValidationError.from_exception_data(
            "Trial", [{"type": "value_error", "loc": ("backend",), "input": backend, "ctx": {"error": exc}}]
        ) from None


def command_label(command: str) -> str:
    """A ``--command`` trial's label where ``--model`` gave none: the file it runs (``./bench.sh`` -> ``bench.sh``,
    ``python train.py`` -> ``train.py``), else its program; never the default model's name (it stored ``lenet``
    for a user's script)."""
    if in_place(command) is None:
        return "command"  # a compound command (a loop, a list, `cd x && ...`): no one program to name
    words = [w for w in shlex.split(command) if w != "exec"]
    names = [PurePosixPath(w).name for w in words[:2] if "/" in w or "." in w.lstrip(".")] + words[:1]
    return next((n for n in names if re.fullmatch(r"[\w.+-]+", n)), "command")


def check_trial(trial: Trial) -> Trial:
    """``trial`` with canonical names, or a ``ValidationError`` naming each field that cannot run (in field order)."""
    update: dict[str, Any] = {}
    errors: list[tuple[str, Any, str]] = []

    def check(field: str, fix: Callable[[Any], Any]) -> bool:
        value = getattr(trial, field)
        try:
            checked = fix(value)
        except ValueError as exc:
            errors.append((field, value, str(exc)))
            return False
        if checked != value:
            update[field] = checked
        return True

    command = trial.command is not None
    if command and "model" not in trial.model_fields_set:
        update["model"] = command_label(trial.command or "")
    if trial.push:
        check("push", _push)
    if trial.step_pattern is not None:
        check("step_pattern", _step_pattern)
    model_ok = command or trial.model_file is not None or check("model", _model)
    model = update.get("model", trial.model)
    if trial.estimate_energy is not None:
        check("estimate_energy", _power_model)
    backend_ok = check("backend", lambda b: _backend(b, trial, model if model_ok else None))
    backend = update.get("backend", trial.backend)
    if backend_ok:
        check("precision", lambda p: _refuse(backend, "at precision", p, lambda c: c.precisions) or p)
    if backend_ok and trial.model_file is not None and trial.precision in QUANTIZED:
        check("precision", lambda p: _no_int8_file(backend))
    elif backend_ok and trial.model_file is not None:
        check("precision", lambda p: _file_precision(backend, p))
    if trial.preset is not None and model_ok and not command:
        check("preset", lambda p: _preset(model, p))
    if trial.data is not None:
        check("data", lambda d: _data(d, model if model_ok and not command else None, trial))
    if model_ok and not command and trial.model_file is None:
        for field, message in _language_model_settings(trial, model):
            errors.append((field, getattr(trial, field), message))
    if backend_ok:
        check("trace", lambda k: _refuse(backend, "trace", k, lambda c: c.trace_kinds) or k)
    pattern_ok = not any(field == "step_pattern" for field, _, _ in errors)
    if command and trial.trace != "none" and trial.step_pattern is not None and pattern_ok:
        check("trace", lambda k: _command_trace(k, trial.step_pattern or ""))
    if errors:
        raise ValidationError.from_exception_data(
            "Trial",
            [
                {"type": "value_error", "loc": (field,), "input": value, "ctx": {"error": ValueError(message)}}
                for field, value, message in errors
            ],
        )
    return trial.model_copy(update=update) if update else trial


def _command_trace(kind: str, pattern: str) -> str:
    """A ``--command`` trial is traced only by a step pattern that reads its tool's per-op times."""
    from edgebench.backends.command.patterns import NAMED_PATTERNS, step_pattern

    if not step_pattern(pattern).spans:
        readers = [p.name for p in NAMED_PATTERNS.values() if p.spans]
        raise ValueError(
            f"--trace {kind} on a --command trial needs a step pattern that reads the tool's per-op times ("
            + ", ".join(readers)
            + "), or drop --trace"
        )
    return kind


def check_backend(backend: str) -> str:
    """A registered backend's name, or the choices in the words a closed set of values is refused with."""
    if backend in BACKENDS:
        return BACKENDS.canonical(backend)
    names = [repr(n) for n in BACKENDS.names()]
    choices = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    raise ValueError(f"unknown backend {backend!r}: must be {choices}")


def _model(name: str) -> str:
    if ":" in name:  # the user's own model, named here: it must import now, not fail later in the worker
        from edgebench.workloads import name_model
        from edgebench.zoo.custom import resolve

        name_model(name)
        resolve(name)
        return name
    return MODELS.canonical(name)


def _backend(name: str, trial: Trial, model: str | None) -> str:
    backend = check_backend(name)
    _refuse(backend, "on device", device_kind(trial.device), lambda c: c.devices)
    _refuse(backend, "mode", trial.mode, lambda c: c.modes)
    if trial.mode == "train" and trial.infer_steps:  # inference passes after training
        _refuse(backend, "mode", "infer", lambda c: c.modes)
    if trial.model_file is not None:
        _model_file_backend(backend, trial)
    elif model is not None:  # a model the backend refuses (MNN: its task, its recorded probe)
        reason = BACKENDS.load(backend).model_refusal(model, trial.mode)
        if reason:
            raise ValueError(reason)
    return backend


def _model_file_backend(backend: str, trial: Trial) -> None:
    """The backends that run a model file's format; int8 needs a quantized file (edgebench has no calibration data
    for a file it did not build)."""
    from edgebench.backends.model_file import RUNS_ON, model_format

    fmt = model_format(trial.model_file or "")
    runs_on = RUNS_ON[fmt]
    if backend not in runs_on:
        why = "builds zoo models from their PyTorch code" if backend == "torch" else "cannot load it"
        raise ValueError(
            f"the {backend} backend {why}; the {fmt.upper()} file {trial.model} runs on "
            + " or ".join(runs_on)
            + f": use --backend {runs_on[0]}"
        )


def _no_int8_file(backend: str) -> str:
    raise ValueError(
        f"the {backend} backend quantizes only the zoo models it builds (it has calibration data for them); "
        "quantize your model file yourself and pass the int8 file at --precision fp32"
    )


def _file_precision(backend: str, precision: str) -> str:
    """A model file at a precision its backend cannot give it: one line naming the one it can."""
    offered = BACKENDS.load(backend).capabilities.file_precisions
    if offered is not None and precision not in offered:
        raise ValueError(
            f"the {backend} backend runs a model file at the precision it was converted at (an fp16 or int8 file "
            f"runs as it is): use --precision {offered[0]}"
        )
    return precision


def _refuse(backend: str, what: str, wanted: str, offered: Callable[[Capabilities], tuple[str, ...]]) -> None:
    """A ``ValueError`` (one usage line, exit 2) when ``backend``'s declared capabilities do not include ``wanted``.

    The capabilities are read from the backend's framework-free record, so this check imports no framework.
    """
    reason = refusal(backend, what, wanted, offered(BACKENDS.load(backend).capabilities))
    if reason:
        raise ValueError(reason)


def _preset(model: str, preset: str) -> str:
    from edgebench.workloads import get_workload

    try:
        return get_workload(model).preset(preset).name
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None


def _data(data: str, model: str | None, trial: Trial) -> str:
    if trial.data_sha256 is not None:  # a text file (its path resolved by make_trial)
        return _text_file(data, model, trial)
    data = DATASETS.canonical(data)
    requires = getattr(DATASETS.load(data), "requires", "")
    if requires and importlib.util.find_spec(requires) is None:
        raise ValueError(f"the {data} data ships in {requires}: pip install 'edgebench[data]'")
    if model is not None:
        from edgebench.workloads import get_workload
        from edgebench.workloads.tasks import task_datasets

        workload = get_workload(model)
        accepted = task_datasets(workload.task)
        if data not in accepted:
            what = f"one of: {', '.join(accepted)}" if accepted else "no real dataset yet, only synthetic batches"
            raise ValueError(f"{workload.name} ({workload.domain}) cannot train on {data}; its task takes {what}")
    return data


def _text_file(path: str, model: str | None, trial: Trial) -> str:
    """A text file as a language model's data: the model must train on text, and the file be long enough."""
    if model is None:
        return path
    from edgebench.data.text import HELD_OUT_SHARE, min_text_bytes
    from edgebench.workloads import get_workload
    from edgebench.workloads.tasks import TASKS

    workload = get_workload(model)
    spec = TASKS.get(workload.task)
    if spec is None or not spec.text_files:
        raise ValueError(f"{workload.name} does not train on a text file; a language model (lm_10m...) does")
    window = (trial.input_shape or workload.input_shape)[0]
    need = min_text_bytes(window, pretraining=trial.pretrain_steps > 0)
    size = Path(path).stat().st_size
    if size < need:
        raise ValueError(
            f"{Path(path).name} has {size} bytes; {window}-token windows with {HELD_OUT_SHARE:.0%} held out"
            + (" and half the rest for pretraining" if trial.pretrain_steps else "")
            + f" need at least {need} (a longer text, or a shorter --input-shape)"
        )
    return path


def _language_model_settings(trial: Trial, model: str) -> list[tuple[str, str]]:
    """``(field, why)`` for each language-model setting ``model`` cannot take (framework-free)."""
    from edgebench.workloads import get_workload
    from edgebench.workloads.lm import EncoderWorkload, LMSettings, LMWorkload, lora_target_names

    workload = get_workload(model)
    decoder = isinstance(workload, LMWorkload)
    token_model = decoder or isinstance(workload, EncoderWorkload)
    defaults = Trial.model_fields
    given = [f for f in LM_FIELDS if getattr(trial, f) != defaults[f].default]
    if not token_model:
        return [(f, f"{workload.name} is not a language model; the lm_* models and bert_tiny/bert_mini take it")
                for f in given]  # fmt: skip
    wrong: list[tuple[str, str]] = []
    if not decoder:
        wrong += [(f, f"{workload.name} is an encoder; only a decoder (lm_10m...) generates or pretrains here")
                  for f in given if f in DECODER_FIELDS]  # fmt: skip
    if trial.lora_targets:
        names = lora_target_names(workload)
        unknown = [t for t in trial.lora_targets if t not in names]
        if unknown:
            wrong.append(("lora_targets", f"{workload.name} has no linear layer {', '.join(unknown)}; "
                                          f"its layers: {', '.join(names)}"))  # fmt: skip
    if trial.lora_impl == "peft" and importlib.util.find_spec("peft") is None:
        wrong.append(("lora_impl", "peft is not installed: pip install 'edgebench[lm]'"))
    if trial.frozen_weights == "torchao-int8" and importlib.util.find_spec("torchao") is None:
        wrong.append(("frozen_weights", "torchao is not installed: pip install 'edgebench[lm]'"))
    if decoder:
        settings = LMSettings.of(trial, workload.shape)
        window = workload.shape.max_seq
        longest = max(settings.contexts, default=0) + trial.decode_tokens
        if trial.contexts and longest > window:
            wrong.append(("contexts", f"{max(settings.contexts)} tokens and {trial.decode_tokens} decoded exceed "
                                      f"{workload.name}'s context window of {window}"))  # fmt: skip
        seq = (trial.input_shape or workload.input_shape)[0]
        if trial.input_shape is not None and (len(trial.input_shape) != 1 or seq > window):
            wrong.append(("input_shape", f"a language model's input is its sequence length, one number up to "
                                         f"{window} (e.g. --input-shape 256)"))  # fmt: skip
    return wrong


#: The Trial fields only a language model takes, and of those, the ones only a decoder does.
LM_FIELDS = ("finetune", "lora_rank", "lora_alpha", "lora_targets", "lora_impl", "checkpointing", "frozen_weights",
             "pretrain_steps", "until_bits_per_byte", "contexts", "decode_tokens", "generations")  # fmt: skip
DECODER_FIELDS = ("pretrain_steps", "until_bits_per_byte", "contexts", "decode_tokens", "generations")


def _step_pattern(text: str) -> str:
    from edgebench.backends.command.patterns import check_step_pattern

    return check_step_pattern(text)


def _push(specs: tuple[str, ...]) -> tuple[str, ...]:
    from edgebench.backends.command.push import parse_push

    for spec in specs:
        parse_push(spec)
    return specs


def _power_model(spec: str) -> str:
    from edgebench.measure.estimate import parse_power_model

    return parse_power_model(spec).spec()

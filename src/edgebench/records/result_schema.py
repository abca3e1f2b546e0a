"""Where each field of a flat result (schema 1-3) lives in the grouped one (schema 4): declared once, here.

:data:`MOVES` is the only statement of the mapping.  Three things are derived from it, so they cannot drift apart:

- :func:`migrate` carries a stored record of schema 1, 2 or 3 to schema 4, field by field;
- :func:`flat_record` gives a schema-4 result its old flat names back, for the trials table (CSV and Parquet keep
  the columns their users know: ``step_time_ms.mean``, ``energy_j``, ``env.hostname``);
- :func:`mapping_table` writes ``docs/result-schema-v4.md`` (a test checks the file is current; regenerate it with
  ``python -m edgebench.records.result_schema > docs/result-schema-v4.md``).

Schemas 1 and 2 differ from 3 only by fields they did not have yet (version 2 added energy, idle power, estimated
energy, GPU utilization, sweep, precision, target CI, inference CPU and VmPeak; version 3 predictability, trace and
throttling), so one mapping carries all three: a field an old record lacks stays unmeasured.
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from edgebench.records.device import DeviceEnvironment
from edgebench.records.result import ESTIMATED, SCHEMA_VERSION, TrialResult

Convert = Callable[[Any], Any]
#: From a schema-4 value (and the whole schema-4 record, JSON form) back to the schema-3 value.
ConvertBack = Callable[[Any, dict[str, Any]], Any]


def _same(value: Any) -> Any:
    return value


def _same_back(value: Any, record: dict[str, Any]) -> Any:
    return value


@dataclass(frozen=True)
class Move:
    """One flat field of schema 3 and its place in schema 4 (a dotted path), with the conversion both ways where
    the value itself changes form; ``why`` is the table's note."""

    old: str
    new: str
    why: str = ""
    forward: Convert = _same
    back: ConvertBack = _same_back
    #: False for a field the flat form does not read back (its old value comes from another move).
    exported: bool = True


def _measured_source(source: str | None) -> str | None:
    """Schema 3 named the estimate in ``energy_source`` where nothing was measured; the estimate keeps its own."""
    return None if source is None or source.startswith(ESTIMATED) else source


def _energy_source(source: str | None, record: dict[str, Any]) -> str | None:
    """The trials table's ``energy_source`` as schema 3 wrote it: the estimate's label where nothing was measured."""
    return source or _estimate_label(_get(record, "estimated_energy.power_model"), record)


def _power_model(source: str | None) -> str | None:
    return source[len(ESTIMATED) :].strip() if source and source.startswith(ESTIMATED) else source


def _estimate_label(model: str | None, record: dict[str, Any]) -> str | None:
    return None if model is None else f"{ESTIMATED} {model}"


def _sweep(sweep: dict[str, Any] | None, record: dict[str, Any]) -> dict[str, Any] | None:
    return None if sweep is None else {k: v for k, v in sweep.items() if k != "host"}


def _sampler(sampler: dict[str, Any] | None, record: dict[str, Any]) -> dict[str, Any] | None:
    """Schema 3's sampler, which did not say which sampler ran: ``kind`` and ``why`` only where a record knows them."""
    if sampler is None:
        return None
    return {k: v for k, v in sampler.items() if k not in ("kind", "why") or v is not None}


def _device(env: dict[str, Any] | None) -> dict[str, Any]:
    return DeviceEnvironment.from_env(env or {}).model_dump(mode="json")


def _env(device: dict[str, Any] | None, record: dict[str, Any]) -> dict[str, Any]:
    return DeviceEnvironment.model_validate(device or {}).to_env()


def _granularity(trace: dict[str, Any] | None) -> str:
    return trace["granularity"] if trace else "none"


#: Every schema-3 field, in schema 3's order (the trials table's columns keep it); a field with two entries
#: feeds two places.
# fmt: off
MOVES: tuple[Move, ...] = (
    Move("trial_id", "trial_id"),
    Move("status", "status"),
    Move("reason", "reason"),
    Move("model", "trial.model"),
    Move("batch_size", "trial.batch_size"),
    Move("threads", "trial.threads"),
    Move("cores", "trial.cores"),
    Move("steps", "trial.steps", "the steps asked for (the minimum of an adaptive trial; schema 3 kept the steps "
         "taken for an `--until-accuracy` trial); the count measured is `latency.measured_steps`"),
    Move("warmup", "trial.warmup"),
    Move("device", "trial.device", "the compute device (`cpu`, `cuda:0`); the machine is the `device` group"),
    Move("input_shape", "workload.input_shape"),
    Move("num_classes", "workload.num_classes"),
    Move("params", "workload.params"),
    Move("started_at", "started_at"),
    Move("stopped_by", "stopped_by"),
    Move("step_time_ms", "latency.step_ms"),
    Move("step_time_ms", "latency.measured_steps", "the count of measured steps (schema 3 kept it as `step_time_ms.n`)",
         forward=lambda stats: stats["n"] if stats else None, exported=False),
    Move("throughput_sps", "latency.throughput_sps"),
    Move("cpu_util_pct", "cpu.util_pct"),
    Move("idle_ratio", "cpu.idle_ratio"),
    Move("process_cpu_pct", "cpu.process_pct"),
    Move("peak_memory_bytes", "memory.peak_bytes"),
    Move("peak_memory_source", "memory.peak_source"),
    Move("infer_time_ms", "latency.infer_ms"),
    Move("infer_peak_memory_bytes", "memory.infer_peak_bytes"),
    Move("gpu_peak_memory_bytes", "memory.gpu_peak_bytes"),
    Move("energy_j", "energy.energy_j"),
    Move("energy_per_step_j", "energy.per_step_j"),
    Move("energy_per_sample_j", "energy.per_sample_j"),
    Move("energy_gross_j", "energy.gross_j"),
    Move("energy_window_s", "energy.window_s"),
    Move("idle_power_w", "energy.idle_power_w"),
    Move("idle_window_s", "energy.idle_window_s"),
    Move("avg_power_w", "energy.avg_power_w"),
    Move("energy_source", "energy.source", "measured only: schema 3's `estimated: <model>` (no sensor) is dropped, "
         "the estimate keeps it in `estimated_energy`", forward=_measured_source, back=_energy_source),
    Move("energy_by_rail", "energy.by_rail"),
    Move("energy_notes", "energy.notes"),
    Move("measurement_notes", "measurement_notes"),
    Move("estimated_energy_j", "estimated_energy.energy_j"),
    Move("estimated_energy_per_step_j", "estimated_energy.per_step_j"),
    Move("estimated_energy_per_sample_j", "estimated_energy.per_sample_j"),
    Move("estimated_avg_power_w", "estimated_energy.avg_power_w"),
    Move("estimated_idle_power_w", "estimated_energy.idle_power_w"),
    Move("estimated_energy_source", "estimated_energy.power_model", "the model alone, without `estimated: `",
         forward=_power_model, back=_estimate_label),
    Move("gpu_util_pct", "gpu_util_pct"),
    Move("cpu_freq_khz", "cpu.freq_khz"),
    Move("temperature_c", "temperature_c"),
    Move("loss", "loss"),
    Move("sampler", "sampler", back=_sampler),
    Move("env", "device", "`env.<key>` becomes `device.<key>` where the record names it (hostname, cpu_model, "
         "governors, torch...), else `device.extra.<key>`", forward=_device, back=_env),
    Move("backend", "trial.backend"),
    Move("precision", "trial.precision"),
    Move("mode", "trial.mode"),
    Move("target", "target"),
    Move("host", "sweep.host", "the executor's name for the host; the device's own is `device.hostname`"),
    Move("freq_khz", "trial.freq_khz"),
    Move("cores_mask", "trial.cores_mask"),
    Move("imported_from", "imported_from"),
    Move("target_ci_pct", "trial.target_ci_pct"),
    Move("infer_process_cpu_pct", "cpu.infer_process_pct"),
    Move("virtual_memory_peak_bytes", "memory.virtual_peak_bytes"),
    Move("sweep", "sweep", back=_sweep),
    Move("preset", "trial.preset"),
    Move("data", "trial.data"),
    Move("memory_budget_bytes", "trial.memory_budget_bytes"),
    Move("target_accuracy", "trial.until_accuracy"),
    Move("reached_accuracy", "accuracy.reached"),
    Move("final_accuracy", "accuracy.final"),
    Move("time_to_accuracy_s", "accuracy.time_s"),
    Move("steps_to_accuracy", "accuracy.steps"),
    Move("samples_to_accuracy", "accuracy.samples"),
    Move("energy_to_accuracy_j", "accuracy.energy_j"),
    Move("eval_time_s", "accuracy.eval_time_s"),
    Move("accuracy_curve", "accuracy.curve"),
    Move("predictability", "predictability"),
    Move("trace", "trial.trace", "the granularity asked for; schema 3's summary is `trace_summary`",
         forward=_granularity, exported=False),
    Move("trace", "trace_summary", "what the trace recorded"),
    Move("throttling", "throttling"),
    Move("quantization", "quantization"),
)
# fmt: on

#: Fields schema 4 gained after it was released, each optional (None in a record stored before it): a record of any
#: earlier schema 4 loads unchanged, so none raises ``schema_version``.  ``(path, why)``, in the order they came.
ADDED: tuple[tuple[str, str], ...] = (
    ("language_model", "a language model's figures (issue 41): `setup`, `tokens_per_s`, `energy_per_token_j`, "
     "`held_out`, `verdict`, `time_to_target`, `generation` (per context: `ttft_ms`, `decode_tokens_per_s`, "
     "`kv_cache_bytes`, `energy_per_token_j`), `generation_memory`"),
    ("energy.measurement_method", "how energy was measured, or that it was not (MLCommons power proposals)"),
    ("energy.sampling_rate_hz", "the sampler's rate (MLCommons)"),
    ("energy.thermal_stabilization_seconds", "the rest before the measured steps: idle baseline and a sweep's "
     "cool-down (MLCommons)"),
    ("memory.by_category.frozen_params_bytes", "weights that do not train (a LoRA base, int8 weights)"),
    ("memory.by_category.kv_cache_bytes", "a language model's KV cache"),
    ("memory.by_category.buffers_bytes", "the model's other buffers (rotary tables, batch-norm statistics)"),
    ("trial.finetune, trial.lora_rank, trial.lora_alpha, trial.lora_targets, trial.lora_impl, trial.checkpointing, "
     "trial.frozen_weights, trial.pretrain_steps, trial.until_bits_per_byte, trial.contexts, trial.decode_tokens, "
     "trial.generations, trial.data_sha256", "a language model's settings (their defaults in an older record)"),
)  # fmt: skip

#: Optional groups of schema 4 that exist only when one of their fields was recorded.
_OPTIONAL_GROUPS = ("estimated_energy", "accuracy", "sweep")


def _get(record: dict[str, Any], path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _put(record: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    for part in parents:
        record = record.setdefault(part, {})
    if isinstance(value, dict) and isinstance(record.get(leaf), dict):  # a group that a field already went into
        value = {**value, **record[leaf]}
    record[leaf] = value


def migrate(record: dict[str, Any]) -> dict[str, Any]:
    """A stored record of any schema carried to :data:`SCHEMA_VERSION`: a flat one (1-3) field by field through
    :data:`MOVES`; a field the mapping does not know is an error, never dropped."""
    version = record.get("schema_version", 1)
    if version > SCHEMA_VERSION:
        raise ValueError(f"result schema {version} is newer than this edgebench ({SCHEMA_VERSION}); upgrade it")
    if version == SCHEMA_VERSION:
        return record
    known = {m.old for m in MOVES} | {"schema_version"}
    unknown = record.keys() - known
    if unknown:
        raise ValueError(f"result schema {version}: no schema-4 place for {', '.join(sorted(unknown))}")
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    for move in MOVES:
        if move.old in record:
            value = move.forward(record[move.old])
            if value is not None or "." not in move.new or move.new.split(".")[0] not in _OPTIONAL_GROUPS:
                _put(out, move.new, value)
    if "reached" not in out.get("accuracy", {"reached": False}):  # a target without a verdict: not reached
        out["accuracy"]["reached"] = False
    return out


#: The schema whose names :func:`flat_record` gives, and which its ``schema_version`` says.
FLAT_SCHEMA = 3


def load_result(record: dict[str, Any]) -> TrialResult:
    """A stored result of any schema (a store's row, a rescue file, an imported store), migrated and validated; a
    record that is none (not a JSON object, a schema that is not a number) is a ``ValueError`` too."""
    if not isinstance(record, dict):
        raise ValueError(f"a stored result is a JSON object, not {type(record).__name__}")
    version = record.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ValueError(f"schema_version {str(version)[:20]!r} is not a number")
    return TrialResult.model_validate(migrate(record))


def flat_record(result: TrialResult) -> dict[str, Any]:
    """A schema-4 result under its schema-3 names (JSON values), in the order schema 3 had them: the trials
    table's columns, whose ``schema_version`` column says which names they are.  Fields that joined the result
    after schema 3 follow under their own names."""
    record = result.model_dump(mode="json")
    flat = {"schema_version": FLAT_SCHEMA} | {m.old: m.back(_get(record, m.new), record) for m in MOVES if m.exported}
    mapped_roots = {m.new.split(".")[0] for m in MOVES}
    return flat | {k: v for k, v in record.items() if k not in mapped_roots and k != "schema_version"}


def _holds_parts(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    if typing.get_origin(annotation) in (list, dict, tuple):
        return True
    return any(_holds_parts(a) for a in typing.get_args(annotation))


def _annotation(path: str) -> Any:
    """The type schema 4 declares at a dotted path."""
    model: Any = TrialResult
    annotation: Any = None
    for part in path.split("."):
        annotation = model.model_fields[part].annotation
        model = next((a for a in (annotation, *typing.get_args(annotation)) if isinstance(a, type)), None)
    return annotation


#: Schema-3 names whose value is a record or a list (the trials table adds no column for one that is absent).
COMPOUND = frozenset(m.old for m in MOVES if m.exported and _holds_parts(_annotation(m.new))) | frozenset(
    name  # records that joined the result after schema 3 (``hygiene``), under their own names
    for name, f in TrialResult.model_fields.items()
    if name not in {m.new.split(".")[0] for m in MOVES} and _holds_parts(f.annotation)
)


def mapping_table() -> str:
    """``docs/result-schema-v4.md``: every schema-3 name and where schema 4 keeps it."""
    lines = [
        "# Result schema 4: where each field of schema 3 went",
        "",
        "Generated from `edgebench.records.result_schema.MOVES`, the declaration the migration itself runs on",
        "(`python -m edgebench.records.result_schema > docs/result-schema-v4.md`). Stores written by schema 1, 2 or",
        "3 load through that migration; the trials table (CSV, Parquet) keeps the schema-3 names as its columns",
        "(its `schema_version` column says 3: the names it uses). Schema 1 and 2 records are schema 3 with fewer",
        "fields. Fields of the trial that schema 3 did not keep (`command`, `seed`, `infer_steps`, `timeout_s`...)",
        "read as the trial's defaults in a migrated record; new groups a flat record had nothing for stay empty.",
        "",
        "| schema 3 | schema 4 | note |",
        "|---|---|---|",
    ]
    lines += [f"| `{m.old}` | `{m.new}` | {m.why} |" for m in MOVES]
    lines += [
        "",
        "## Fields added to schema 4",
        "",
        "Each optional: a record stored before it holds none (`null`, or the trial setting's default) and loads as it",
        "was (`edgebench.records.result_schema.ADDED`).",
        "",
        "| schema 4 path | what |",
        "|---|---|",
    ]
    lines += [f"| `{path}` | {why} |" for path, why in ADDED]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(mapping_table())

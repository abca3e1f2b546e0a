"""The table printed after a sweep: one row per trial, and the best configuration per model for the objective."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich import box
from rich.table import Table

from edgebench.host.cpuset import format_mask
from edgebench.markup import rich_text
from edgebench.measure.repeats import best_of, by_configuration, grouped, repeat_label, step_median_ms
from edgebench.measure.trust import inconclusive, split_disturbed
from edgebench.records.result import TrialResult
from edgebench.records.trial import configuration_key
from edgebench.report.fit import keep_whole
from edgebench.units import MIB


def _energy_per_sample_j(r: TrialResult) -> float | None:
    """Energy per training sample as the power-sensor code reports it; ``None`` where the device has no sensor."""
    value = r.energy.per_sample_j
    if value is None and r.energy.energy_j is not None and r.latency.step_ms is not None:
        value = r.energy.energy_j / (r.latency.step_ms.n * r.trial.batch_size)
    return value


def sweep_table(results: list[TrialResult], title: str) -> Table:
    """One row per trial, readable at 80 columns: no vertical rules, and a column no trial has a value for (no
    pinned frequency, no power sensor) is left out rather than squeezing the others.  What is run (model, backend,
    mode) is a column only where trials differ in it: a value every trial shares is said once, in the title
    (``every trial mobilenet_v2 mnn infer``), the defaults (torch, training) not at all.  The status comes before
    the figures, so that a table too wide for its terminal loses a figure, not the status."""
    rows = [_row(r) for r in grouped(results)]  # a configuration's repeats together, whatever order they ran in
    keep, shared = [], []
    for i, name in enumerate(_COLUMNS):
        values = {row[i] for row in rows}
        if name in _TITLE_WHEN_SHARED and len(values) <= 1:
            shared += sorted(values - {_TITLE_WHEN_SHARED[name]})
        elif name in _ALWAYS or values - {"-"}:
            keep.append(i)
    title = f"{title}: every trial {' '.join(shared)}" if shared else title
    table = Table(title=rich_text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for i in keep:
        name = _COLUMNS[i]
        table.add_column(name, justify="left" if name in ("model", "backend", "mode", "prec", "status") else "right")
    for row in rows:
        table.add_row(*(row[i] if _COLUMNS[i] == "status" else rich_text(row[i]) for i in keep))
    return keep_whole(table)


_COLUMNS = ("model", "backend", "mode", "bs", "thr", "mask", "MHz", "prec", "seq", "lora r", "rep", "status",
            "step ms", "±ci95", "samples/s", "tokens/s", "MiB", "J/sample")  # fmt: skip
#: Columns shown even when empty: they say what every row is.
_ALWAYS = ("bs", "thr", "mask", "prec", "status", "step ms")
#: Columns shown only where trials differ in them; a shared value goes in the title unless it is this default.
_TITLE_WHEN_SHARED = {"model": None, "backend": "torch", "mode": "train"}


def _row(r: TrialResult) -> list[str]:
    s = r.latency.step_ms
    energy = _energy_per_sample_j(r)
    lm = r.language_model
    return [
        r.trial.model,
        r.trial.backend,
        r.trial.mode,
        str(r.trial.batch_size),
        str(r.trial.threads or "-"),
        format_mask(r.trial.cores) if r.trial.cores else "-",
        freq_cell(r),
        r.trial.precision,
        str(r.workload.input_shape[0]) if lm is not None and r.workload.input_shape else "-",
        str(lm.setup.lora_rank) if lm is not None and lm.setup.lora_rank else "-",
        repeat_label(r) or "-",
        rich_text(r.status) if r.ok else f"[red]{rich_text(r.status)}[/red]",  # Rich markup: the one styled cell
        f"{s.mean:.2f}" if s else "-",
        f"{s.ci95:.2f}" if s and s.ci95 is not None else "-",
        f"{r.latency.throughput_sps:.1f}" if r.latency.throughput_sps is not None else "-",
        f"{lm.tokens_per_s:.0f}" if lm is not None and lm.tokens_per_s is not None else "-",
        f"{r.memory.peak_bytes / MIB:.0f}" if r.memory.peak_bytes else "-",
        f"{energy:.4g}" if energy is not None else "-",
    ]


def freq_cell(r: TrialResult) -> str:
    """The frequency the trial ran at (MHz), the asked one beside it where the policy offered another."""
    if not r.trial.freq_khz:
        return "-"
    applied = r.applied_freq_khz or r.trial.freq_khz
    asked = f" (asked {r.trial.freq_khz / 1e3:g})" if applied != r.trial.freq_khz else ""
    return f"{applied / 1e3:g}{asked}"


@dataclass(frozen=True)
class BestPick:
    """A model's best configuration for the sweep's objective, decided across repeats: ``result`` is a repeat of the
    configuration with the lowest mean score, ``clear`` whether its interval overlaps no other's, ``line`` what the
    sweep prints."""

    model: str
    result: TrialResult
    clear: bool
    line: str


def _score(objective: str) -> Callable[[TrialResult], float | None]:
    """A repeat's score: its time per sample (median step time over the batch; latency-first) or energy per sample;
    a language model's per token, so that sequence lengths compare fairly too."""

    def score(r: TrialResult) -> float | None:
        lm = r.language_model
        if lm is not None and lm.tokens_per_s:
            return lm.energy_per_token_j if objective == "energy-first" else 1.0 / lm.tokens_per_s
        if objective == "energy-first":
            return _energy_per_sample_j(r)
        return None if r.latency.step_ms is None else (step_median_ms(r) or 0.0) / r.trial.batch_size

    return score


def best_per_model(
    results: list[TrialResult], objective: str, label: Callable[[TrialResult], str] | None = None
) -> dict[str, BestPick]:
    """Per model, the configuration with the lowest time per sample (latency-first) or energy per sample
    (energy-first), per sample so that batch sizes compare fairly, decided across each configuration's repeats
    (:func:`~edgebench.measure.repeats.best_of`): clear only where its interval overlaps no other's; one repeat
    each names the lowest and says it cannot tell.  Disturbed repeats are left out; energy-first needs energy, so
    without a power sensor no configuration qualifies and the result is empty.  ``label`` names a configuration
    in the lines (the sweep's trial label with the frequency applied; by default its key)."""
    label = label or (lambda r: configuration_key(r.trial))
    score = _score(objective)
    picks: dict[str, BestPick] = {}
    for model, rs in by_model(results).items():
        unit = "token" if any(r.language_model is not None and r.language_model.tokens_per_s for r in rs) else "sample"
        what = f"energy per {unit}" if objective == "energy-first" else f"time per {unit}"
        usable, disturbed = split_disturbed([r for r in rs if r.ok and score(r) is not None])
        configurations = by_configuration(usable)
        if not configurations:
            if disturbed:  # said, never silently dropped: no pick rests on a disturbed trial
                line = f"no best for {model} ({objective}): {inconclusive(disturbed, len(disturbed))}"
                picks[model] = BestPick(model, disturbed[0], False, line)
            continue
        labels = {key: label(group[0]) for key, group in configurations.items()}
        found = best_of({labels[k]: [v for r in g if (v := score(r)) is not None] for k, g in configurations.items()},
                        what=what)  # fmt: skip
        key = next(k for k, label in labels.items() if label == found.label)
        pick = configurations[key][0]
        left = f"; {len(disturbed)} disturbed trials left out" if disturbed else ""
        where = f"{found.label}  [{pick.trial_id}]"
        if found.clear:
            line = f"best for {model} ({objective}): {where} (clear across repeats){left}"
        elif found.answer.startswith("no clear best"):
            line = f"no clear best for {model} ({objective}): {found.answer.removeprefix('no clear best: ')}{left}"
        else:
            line = (f"lowest {what} for {model} ({objective}): {where}; one repeat each cannot tell it clearly best "
                    f"(--repeats 3 or more){left}")  # fmt: skip
        picks[model] = BestPick(model, pick, found.clear, line)
    return picks


def by_model(results: list[TrialResult]) -> dict[str, list[TrialResult]]:
    out: dict[str, list[TrialResult]] = {}
    for r in results:
        out.setdefault(r.trial.model, []).append(r)
    return out

"""The device's traced trials in a store, as observations the predictor learns from."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from edgebench.errors import UsageError
from edgebench.measure.trust import disturbances
from edgebench.predict.observations import Observation, observation_of, with_plan
from edgebench.records.result import TrialResult


@dataclass(frozen=True)
class Selection:
    """Which stored trials describe the device: one target, backend and mode, a core set if asked, and one device
    by its identity (``device``: its host, and ``[replayed TREE]`` for a copied tree's trials; None: this host's own
    where it has trials, else the one device stored)."""

    target: str = "local"
    backend: str = "torch"
    mode: str = "train"
    cores: tuple[int, ...] | None = None
    device: str | None = None

    def holds(self, result: TrialResult, *, trace: str) -> bool:
        """Whether ``result`` is a finished fp32 trial of this selection, recorded with ``trace``; a language model's
        trial only as its own graph trains (full fine-tuning, fp32 weights, no checkpointing): LoRA's wrappers, int8
        layers and recomputed blocks are another graph than the one the predictor counts."""
        trial = result.trial
        if (trial.finetune, trial.frozen_weights, trial.checkpointing) != ("full", "fp32", "none"):
            return False
        return (
            result.status == "ok"
            and trial.trace == trace
            and result.target == self.target
            and trial.backend == self.backend
            and trial.mode == self.mode
            and trial.precision == "fp32"
            and (self.cores is None or tuple(trial.cores or ()) == self.cores)
        )


def quietest(observations: list[Observation]) -> tuple[list[Observation], list[str]]:
    """One trial per configuration: the one other processes disturbed least, and one line saying how many
    repeated trials were passed over.

    Why: a configuration traced again is usually traced again because the first trial was disturbed; learning
    from both would teach the models the other processes' load.  The least disturbed is the one whose worker
    had the largest share of its core (:func:`~edgebench.predict.observations.cpu_share`), then the one others
    used the cores least during; a tie keeps the later.
    """

    def quiet(o: Observation) -> tuple[bool, float, float]:
        return (o.cpu_share is not None, o.cpu_share or 0.0, -(o.busy_pct or 0.0))

    best: dict[object, Observation] = {}
    for obs in observations:
        key = replace(obs.graph.config, freq_khz=None)  # the sampled clock differs run to run
        kept = best.get(key)
        if kept is None or quiet(obs) >= quiet(kept):
            best[key] = obs
    kept_ids = {o.trial_id for o in best.values()}
    repeats = [o for o in observations if o.trial_id not in kept_ids]
    passed = []
    if repeats:
        configs = {(o.graph.config.model, o.graph.config.batch_size) for o in repeats}
        passed.append(
            f"{len(repeats)} repeated trial(s) of {len(configs)} configuration(s): each configuration's least "
            "disturbed trial is learned from (its worker had the largest share of its core)"
        )
    return [o for o in observations if o.trial_id in kept_ids], passed


def one_device(results: list[TrialResult], selection: Selection) -> tuple[list[TrialResult], list[str]]:
    """The trials of one device, by its identity (host and sensor source: a replayed tree's trials are another
    device's constant files run on this host, and never mix with the host's own), and a line on those passed over.

    The device is ``selection.device``; else this host's own trials (target ``local``) where there are any, else
    the one device whose sensors were live; several, or only replayed trials, are a one-line error naming them."""
    import socket

    by_device: dict[str, list[TrialResult]] = {}
    for r in results:
        by_device.setdefault(r.device.identity, []).append(r)
    if not by_device:
        return [], []
    chosen = selection.device
    if chosen is None:
        live = [d for d, rs in by_device.items() if not rs[0].device.replayed]
        here = socket.gethostname()
        if selection.target == "local" and here in live:
            chosen = here
        elif len(live) == 1:
            chosen = live[0]
        else:
            counts = ", ".join(f"{d} ({len(rs)})" for d, rs in by_device.items())
            why = "only a replayed tree's trials (its sensors were constant, its steps ran on this host)" if not live \
                else "trials of several devices"  # fmt: skip
            raise UsageError("--device", f"the store has {why}: {counts}; name the device to learn from")
    if chosen not in by_device:
        known = ", ".join(by_device)
        raise UsageError("--device", f"no selected trials of {chosen!r}; the store's devices: {known}")
    passed = [f"{len(rs)} trial(s) of {d}: another device than {chosen}" for d, rs in by_device.items() if d != chosen]
    return by_device[chosen], passed


def load_observations(store_path: Path | None, selection: Selection) -> tuple[list[Observation], list[str]]:
    """The selected layer-traced trials that finished, and a line for each one passed over (and why)."""
    from edgebench.store.sqlite import Store, default_store_path
    from edgebench.store.trials import StoredTrial, finished_of

    path = store_path or default_store_path()
    if not Path(path).exists():
        raise UsageError("--store", f"{path} does not exist; give the store the device's traced trials are in")
    found: list[Observation] = []
    skipped: list[str] = []
    with Store(path, read_only=True) as store:
        selected = [r for r in store.trials() if selection.holds(r, trace="layers")]
        selected, others = one_device(selected, selection)
        skipped += others
        for result in selected:
            if why := disturbances(result):  # a busy device's layer times would teach the models its load
                skipped.append(f"trial {result.trial_id} left out: disturbed ({'; '.join(why)})")
                continue
            try:
                found.append(observation_of(StoredTrial.of(finished_of(store, result))))
            except ValueError as exc:
                skipped.append(str(exc))
    found, repeats = quietest(found)
    skipped += repeats
    if selection.backend == "torch":  # the conv kernels are PyTorch's choice; other runtimes choose their own
        found = [with_plan(o) for o in found]
    if not found:
        cores = f" on cores {','.join(map(str, selection.cores))}" if selection.cores else ""
        raise UsageError(
            "--store",
            f"no finished {selection.mode} trials traced with --trace layers on target {selection.target} "
            f"({selection.backend}{cores}) in {path}; record some with `edgebench run --model M --batch-size B "
            f"--mode {selection.mode} --trace layers`",
        )
    return found, skipped

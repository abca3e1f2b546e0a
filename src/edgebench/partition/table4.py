"""DNNTune's Table 4: per device, mobile-only, cloud-only, the best mobile-cloud split, the saving and the point.

The paper prints, for one model over one network and each device, the device's cost running everything
(mobile-only), sending the input (cloud-only), the best partition (mobile-cloud), the energy saving of that choice
relative to mobile-only, and the partition point.  Here each device's row is one partition analysis (its own
stored layer-traced trial, :mod:`edgebench.partition.analysis`), so the rows compare devices on the same network
and server.  The saving says where its device energy came from: ``measured`` (a power sensor), ``estimated`` (the
utilization model, ``--estimate-energy``); the radio's energy is always Huang et al.'s model, and a latency table's
saving is of measured device times.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import ConfigDict, Field

from edgebench.measure.repeats import configuration_interval
from edgebench.partition.analysis import PartitionAnalysis
from edgebench.partition.solver import Objective
from edgebench.records.model import Record


class Table4Row(Record):
    model_config = ConfigDict(frozen=True)

    device: str
    trial_id: str
    mobile_only: float
    cloud_only: float
    #: The best of every way of running (a split, or an end when no split beats it), DNNTune's mobile-cloud.
    mobile_cloud: float
    #: ``(mobile_only - mobile_cloud) / mobile_only`` in percent; 0 when mobile-only is the best; None where the
    #: device's figure is 0 (a power that never rose above idle: no saving can be stated relative to it).
    saving_pct: float | None
    #: The last layer run on the device at the best point (``mobile only`` / ``cloud only`` at the ends).
    partition_point: str
    #: ``measured`` or ``estimated`` (energy), ``measured`` (latency): what the device column rests on.
    basis: str
    source: str
    #: The saving over the repeats of the trial's configuration (each a fresh worker process, disturbed ones left
    #: out): their count, and the 95% t interval of the mean saving where there are two or more (then
    #: ``saving_pct`` is that mean).  One repeat: no interval, a saving one process cannot vouch for.
    repeats: int = 1
    saving_low_pct: float | None = None
    saving_high_pct: float | None = None
    #: Where the repeats do not all pick one partition point: how many picked each (else None).
    points_picked: dict[str, int] | None = None
    #: Why the row's trial is disturbed (busy, two modes...), where the device has no undisturbed one: the row is
    #: shown, and its saving and point decide nothing.
    disturbed: str | None = None


class Table4(Record):
    model_config = ConfigDict(frozen=True)

    model: str
    network: str
    objective: Objective
    #: ``ms`` (latency) or ``J`` (energy).
    unit: str
    rows: list[Table4Row]
    cloud_source: str
    notes: list[str] = Field(default_factory=list)


def basis_of(analysis: PartitionAnalysis) -> str:
    """What the device figures rest on: ``measured`` or ``estimated`` (from the energy source's own label)."""
    if analysis.objective == "latency":
        return "measured"
    source = analysis.energy_source or ""
    return "measured" if source.startswith("measured") else "estimated"


def _saving(analysis: PartitionAnalysis) -> float | None:
    objective = analysis.objective
    mobile, best = analysis.mobile_only.value(objective), analysis.best.value(objective)
    return None if mobile is None or best is None or mobile <= 0 else (mobile - best) / mobile * 100


def _point(analysis: PartitionAnalysis) -> str:
    point = analysis.best
    return {"mobile-only": "mobile only", "cloud-only": "cloud only"}.get(point.kind, point.layer)


def row_of(
    device: str, trial_id: str, analysis: PartitionAnalysis, repeats: Sequence[PartitionAnalysis] = ()
) -> Table4Row:
    """One device's row from its trial's analysis; ``repeats``: the analyses of each undisturbed repeat of the
    trial's configuration (its own included), whose savings give the row's interval and whose picks must agree."""
    objective = analysis.objective
    mobile, cloud, best = (p.value(objective) for p in (analysis.mobile_only, analysis.cloud_only, analysis.best))
    if mobile is None or cloud is None or best is None:
        raise ValueError(f"{device}: trial {trial_id} has no {objective} figure at every point")
    saving, low, high = _saving(analysis), None, None
    savings = [v for a in repeats if (v := _saving(a)) is not None]
    interval = configuration_interval(savings) if len(savings) >= 2 else None
    if interval is not None:
        saving, low, high = interval.estimate, interval.low, interval.high
    picked = Counter(_point(a) for a in repeats)
    source = analysis.mobile_source if objective == "latency" else (analysis.energy_source or "")
    return Table4Row(device=device, trial_id=trial_id, mobile_only=mobile, cloud_only=cloud, mobile_cloud=best,
                     saving_pct=saving, partition_point=_point(analysis), basis=basis_of(analysis), source=source,
                     repeats=max(1, len(savings)), saving_low_pct=low, saving_high_pct=high,
                     points_picked=dict(picked) if len(picked) > 1 else None)  # fmt: skip


def table4(
    analyses: list[tuple[str, str, PartitionAnalysis]],
    notes: list[str] | None = None,
    repeats: dict[str, list[PartitionAnalysis]] | None = None,
) -> Table4:
    """The table of ``(device label, trial id, analysis)``, one row each, in the order given; ``repeats``: by
    device, the analyses of each undisturbed repeat of its trial's configuration."""
    if not analyses:
        raise ValueError("no device to tabulate")
    first = analyses[0][2]
    rows = [row_of(device, trial_id, a, (repeats or {}).get(device, ())) for device, trial_id, a in analyses]
    notes = list(notes or [])
    for row in rows:
        if row.points_picked:
            picks = ", ".join(f"{p} in {n}" for p, n in sorted(row.points_picked.items(), key=lambda x: -x[1]))
            notes.append(f"{row.device}: no clear best partition point: its {row.repeats} repeats picked {picks}")
        elif row.repeats == 1:
            notes.append(f"{row.device}: one repeat: its saving and point come from one process, which run-to-run "
                         "variance can move (--repeats 3 on the traced trial gives an interval)")  # fmt: skip
        if row.saving_pct is None:
            notes.append(
                f"warning: {row.device}: its device {first.objective} is 0 (power never above its idle baseline: a "
                "copied sensor tree, or a sensor too coarse for the pass), so no saving is stated for it"
            )
    return Table4(
        model=first.model,
        network=first.network.name,
        objective=first.objective,
        unit="ms" if first.objective == "latency" else "J",
        rows=rows,
        cloud_source=first.cloud_source,
        notes=notes,
    )

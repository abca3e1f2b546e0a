"""A configuration's repeats as ``run --repeats`` and ``show`` print them: each repeat's own figures beside the
configuration's interval over all of them, and the spread between repeats beside the spread within one."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from edgebench.measure.repeats import ConfigurationSummary
from edgebench.measure.trust import disturbances
from edgebench.records.result import TrialResult
from edgebench.report.fit import keep_whole


def repeat_line(result: TrialResult) -> str:
    """``repeat 2/5: ok, median 6.21 ms (mean 6.30 ± 0.12 over 61 steps)  [id]`` as each repeat ends."""
    where = f"repeat {result.repeat.index + 1}/{result.repeat.planned}" if result.repeat else "trial"
    s = result.latency.step_ms
    if not result.ok:
        return f"{where}: {result.status}: {result.reason}  [{result.trial_id}]"
    figures = (
        f", median {s.median:.3g} ms (mean {s.mean:.3g} ± {s.ci95:.2g} over {s.n} steps)" if s and s.median else ""
    )
    flagged = disturbances(result)
    return (
        f"{where}: ok{figures}" + (f"; disturbed: {'; '.join(flagged)}" if flagged else "") + f"  [{result.trial_id}]"
    )


def configuration_line(summary: ConfigurationSummary) -> str:
    """The configuration over its repeats: ``median step 6.18 ms (the mean of 5 repeats' medians), 95% interval
    [5.19, 7.17] (t interval over 5 repeats); between repeats cv 12.9%, within a repeat cv 6.0%``, or why no
    interval is given."""
    n = len(summary.values)
    if summary.interval is None:
        head = (f"median step {summary.values[0]:.3g} ms from one usable repeat: no interval between processes"
                if n == 1 else "no usable repeat")  # fmt: skip
    else:
        i = summary.interval
        head = (f"median step {i.estimate:.3g} ms (the mean of {i.n} repeats' medians), 95% interval "
                f"[{i.low:.3g}, {i.high:.3g}] ({i.method})")  # fmt: skip
    spread = []
    if summary.between_pct is not None:
        spread.append(f"between repeats cv {summary.between_pct:.1f}%")
    if summary.within_pct is not None:
        spread.append(f"within a repeat cv {summary.within_pct:.1f}% (median of the repeats')")
    return head + ("; " + ", ".join(spread) if spread else "")


def repeats_table(summary: ConfigurationSummary, title: str) -> Table:
    """One row per repeat: its trial, median and mean step time with its own (step-level) interval, cv, status."""
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name, justify in (("repeat", "right"), ("trial", "left"), ("median ms", "right"), ("mean ± ci95 ms", "right"),
                          ("cv %", "right"), ("status", "left")):  # fmt: skip
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for r in summary.results:
        s = r.latency.step_ms
        flagged = "; ".join(disturbances(r))
        status = r.status if r.ok else f"[red]{r.status}[/red]"
        table.add_row(
            str(r.repeat.index + 1 if r.repeat else 1),
            r.trial_id,
            f"{s.median:.3f}" if s and s.median is not None else "-",
            f"{s.mean:.3f} ± {s.ci95:.3f}" if s and s.ci95 is not None else "-",
            f"{100 * s.cv:.1f}" if s and s.cv is not None else "-",
            status + (f" (disturbed: {flagged})" if flagged else ""),
        )
    return keep_whole(table)


def configuration_json(summary: ConfigurationSummary) -> dict[str, Any]:
    """The configuration's figures over its repeats, as ``--json`` prints them."""
    i = summary.interval
    return {
        "config_key": summary.config_key,
        "repeats": len(summary.results),
        "usable_repeats": len(summary.values),
        "repeat_median_step_ms": summary.values,
        "median_step_ms": i.estimate if i else (summary.values[0] if summary.values else None),
        "ci95_low_ms": i.low if i else None,
        "ci95_high_ms": i.high if i else None,
        "interval_method": i.method if i else None,
        "between_repeats_cv_pct": summary.between_pct,
        "within_repeat_cv_pct": summary.within_pct,
        "disturbed": [r.trial_id for r in summary.disturbed],
    }

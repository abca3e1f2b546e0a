"""A study's verdicts as a terminal table, as JSON for scripts, and as an offline HTML report.

The HTML is the report's own machinery (:func:`edgebench.report.html.render_html`): a table of verdicts with their
evidence, then one section per observation with the published finding beside the figure redrawn from the user's
trials, and a sentence in place of a figure the device could not measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edgebench.markup import rich_text
from edgebench.measure.trust import inconclusive, left_out_note, split_disturbed
from edgebench.records.result import TrialResult
from edgebench.report.content import ReportContent, Section, Table
from edgebench.study.decide import replayed
from edgebench.study.records import Evidence, StudyReport, Verdict
from edgebench.study.studies import Study

STYLE = {"holds": "green", "does not hold": "red", "inconclusive": "yellow", "cannot be checked here": "dim"}


def short_line(e: Evidence) -> str:
    """The terminal's form: the interval against its threshold (the test and trials are in --json and --html)."""
    side = {"above": ">", "below": "<", "within": "within +/-"}[e.direction]
    lead = "(not deciding) " if not e.decides else ""
    return (
        f"{lead}{e.quantity}: {e.estimate:.3g} [{e.ci_low:.3g}, {e.ci_high:.3g}] {side} {e.threshold:.3g}: "
        f"{e.outcome} (n={e.n})"
    )


def table(report: StudyReport) -> Any:
    """The rich table ``study`` prints: observation, verdict, evidence (or the reason)."""
    from rich.table import Table as RichTable

    t = RichTable(title=rich_text(f"{report.title}: {report.trials_ok} of {report.trials} trials ok on this device"),
                  title_justify="left", show_lines=True)  # fmt: skip
    t.add_column("obs.", no_wrap=True)
    t.add_column("finding", max_width=30)
    t.add_column("verdict", max_width=14)
    t.add_column("evidence: estimate [95% interval] against the threshold (measured; --json has tests, trials)",
                 ratio=1)  # fmt: skip
    for v in report.verdicts:
        body = [v.reason] if not v.evidence else [short_line(e) for e in v.evidence]
        body += [f"note: {n}" for n in v.notes]
        style = STYLE[v.outcome]
        verdict = f"[{style}]{rich_text(v.outcome)}[/{style}]"
        t.add_row(rich_text(v.observation.id), rich_text(v.observation.title), verdict, rich_text("\n".join(body)))
    return t


def make_report(
    study: Study, results: Sequence[TrialResult], *, sweep_id: str | None, store: str | None, device: str,
    notes: Sequence[str] = (), db: Any = None,
) -> StudyReport:  # fmt: skip
    return StudyReport(
        study=study.name,
        title=study.title,
        source=study.source,
        sweep_id=sweep_id,
        store=store,
        device=device,
        trials=len(results),
        trials_ok=sum(1 for r in results if r.ok),
        verdicts=[replayed(v, results) for v in undisturbed_verdicts(study, results, db)],
        notes=list(notes),
    )


DECIDED = ("holds", "does not hold")


def undisturbed_verdicts(study: Study, results: Sequence[TrialResult], db: Any = None) -> list[Verdict]:
    """Every observation judged without its disturbed trials (:func:`~edgebench.measure.trust.disturbances`).

    A verdict the undisturbed trials still decide (holds, does not hold) stands, with a note naming the trials left
    out; one they no longer decide, where the disturbed trials would have taken part, becomes ``inconclusive: k of n
    trials disturbed (why)``: a busy device never turns into a verdict, nor into a silent "cannot be checked".  One
    that every trial together cannot check either keeps that reason: what the undisturbed trials lack (two models,
    a sampled core; all of them when none is left) is not why."""
    ok = [r for r in results if r.ok]
    usable, disturbed = split_disturbed(ok)
    verdicts = study.check(usable, store=db)
    if not disturbed:
        return verdicts
    out = []
    for kept, would in zip(verdicts, study.check(ok, store=db), strict=True):
        used = {i for e in would.evidence for i in e.trial_ids}
        if kept.outcome not in DECIDED and would.outcome == "cannot be checked here":
            out.append(would)  # what every trial lacks, disturbed or not (the undisturbed alone may be none at all)
            continue
        mine = [r for r in disturbed if r.trial_id in used]
        if not mine:
            out.append(kept)
        elif kept.outcome in DECIDED:
            note = left_out_note(mine, len(used))
            out.append(kept.model_copy(update={"notes": [*kept.notes, note]}))
        else:
            said = f"with the disturbed trials it would have read: {would.reason}"
            out.append(Verdict(observation=kept.observation, outcome="inconclusive",
                               reason=inconclusive(mine, len(used)), notes=[*kept.notes, said]))  # fmt: skip
    return out


def html_content(study: Study, report: StudyReport, results: list[TrialResult], db: Any) -> ReportContent:
    rows: list[list[str | float | None]] = []
    for v in report.verdicts:
        shown = "; ".join(short_line(e) for e in v.evidence if e.decides) or v.reason
        rows.append([v.observation.id, v.observation.title, v.outcome, shown])
    sections = [
        Section(
            f"Verdicts ({study.source})",
            [
                Table(
                    "study-verdicts",
                    "Each observation on this device",
                    ["obs.", "finding", "verdict", "evidence"],
                    rows,
                    note="Evidence is measured, never estimated or predicted; an interval straddling its "
                    "threshold is inconclusive.",
                )
            ],
            text=f"Device: {report.device}.",
        )
    ]
    for v in report.verdicts:
        sections.append(_observation_section(study, v, results, db))
    return ReportContent(title=f"Study {study.name}: {study.title}", results=results, sections=sections,
                         notes=list(report.notes))  # fmt: skip


def _observation_section(study: Study, v: Verdict, results: list[TrialResult], db: Any) -> Section:
    o = v.observation
    text = (f"{o.words} Published ({o.figure}): {o.published}. On this device: {v.outcome}. "
            + ("" if v.evidence else v.reason))  # fmt: skip
    views: list[Any] = [maker(results, db) for maker in study.figures.get(o.id, [])]
    if v.evidence:
        views.append(_evidence_table(o.id, v))
    return Section(f"{o.id}: {o.title} — {v.outcome}", views, text=text)


def _evidence_table(oid: str, v: Verdict) -> Table:
    """Every interval behind a verdict, with its test, n, threshold and the trials it came from."""
    columns = ["quantity", "estimate", "CI low", "CI high", "test", "n", "threshold", "outcome", "decides", "trials"]
    rows: list[list[str | float | None]] = [
        [e.quantity, e.estimate, e.ci_low, e.ci_high, e.test, float(e.n), f"{e.direction} {e.threshold:.3g}",
         e.outcome, "yes" if e.decides else "no", ", ".join(e.trial_ids)]
        for e in v.evidence
    ]  # fmt: skip
    return Table(f"study-{oid}-evidence", f"{oid}: evidence (measured)", columns, rows, note="; ".join(v.notes))

"""The terminal views of the workflows' records whose code lives above ``report/``, with the part whose records they
show: a trial's short label (``sweep.plan``), a sweep's progress bar (``sweep.progress``), a study's table of
verdicts (``study.report``).  Named here so that a caller prints through the workflows; each is the part's own
function, imported when it is called, so a command that does not show it does not load it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from edgebench.records.trial import Trial
    from edgebench.study.records import StudyReport
    from edgebench.sweep.progress import RichReporter


def trial_label(trial: Trial, applied_khz: int | None = None) -> str:
    """``lenet b8 t2 cpu0-1 1708.8MHz fp16``: a trial as a sweep's lines name it (a stored one's frequency as
    applied, ``result.applied_freq_khz``, with the asked one beside it where they differ)."""
    from edgebench.sweep.plan import trial_label as label

    return label(trial, applied_khz)


def sweep_progress(console: Console | None = None) -> RichReporter:
    """A sweep's progress on a terminal (a context manager): a bar with the trial in progress and the ETA, a line per
    finished trial above it.  Hand it to :func:`edgebench.workflows.sweep.run_sweep` as its ``reporter``."""
    from edgebench.sweep.progress import RichReporter

    return RichReporter(console)


def verdict_table(report: StudyReport) -> Any:
    """The rich table ``study`` prints: each observation, its verdict, and the evidence or the reason."""
    from edgebench.study.report import table

    return table(report)

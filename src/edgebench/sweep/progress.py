"""The sweep's progress on a terminal: a rich bar with the trial in progress, its count and the ETA.

One line per finished trial is printed above the bar, so the log of a sweep stays readable when the output is a
file (rich draws no live bar there, the lines remain).
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from edgebench.markup import rich_text
from edgebench.records.result import TrialResult
from edgebench.sweep.plan import Plan, PlannedTrial


def result_line(result: TrialResult) -> str:
    """``ok  12.31 ± 0.20 ms/step  650.1 samples/s`` or the failure and its reason (Rich markup)."""
    if not result.ok:
        return f"[red]{rich_text(result.status)}[/red]: {rich_text(result.reason)}"
    s = result.latency.step_ms
    line = f"ok  {s.mean:.2f} ± {s.ci95:.2f} ms/step" if s and s.ci95 is not None else "ok"
    if result.latency.throughput_sps is not None:
        line += f"  {result.latency.throughput_sps:.1f} samples/s"
    if result.trial.target_ci_pct is not None and result.stopped_by:
        line += f"  ({rich_text(result.stopped_by)})"
    return line


class RichReporter:
    """The sweep's reporter on a Rich console: every text it is handed (labels, notes, reasons) is shown as it is."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console()
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
        )
        self._task: TaskID | None = None
        self._total = 0
        self._current = ""

    def __enter__(self) -> RichReporter:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def begin(self, plan: Plan, todo: list[PlannedTrial], skipped: int) -> None:
        already = f", {skipped} already stored" if skipped else ""
        self.console.print(f"sweep [bold]{rich_text(plan.sweep_id)}[/bold]: {len(todo)} trials to run{already}")
        self._total += len(todo)  # several sweeps at once (a fleet running a targets axis) share one bar
        if self._task is None:
            self._task = self.progress.add_task("starting", total=self._total)
        else:
            self.progress.update(self._task, total=self._total)

    def trial_started(self, planned: PlannedTrial, index: int) -> None:
        self._current = planned.label
        self._update(planned.label)

    def trial_finished(self, planned: PlannedTrial, result: TrialResult) -> None:
        line = f"  {rich_text(f'{planned.label:<32}')} {result_line(result)}  [dim]{rich_text(result.trial_id)}[/dim]"
        self.console.print(line, soft_wrap=True)
        if self._task is not None:
            self.progress.advance(self._task)

    def status(self, text: str) -> None:
        self._update(text)

    def note(self, text: str) -> None:
        self.console.print(f"[dim]{rich_text(text)}[/dim]", soft_wrap=True)

    def _update(self, text: str) -> None:
        if self._task is not None:
            self.progress.update(self._task, description=rich_text(text))

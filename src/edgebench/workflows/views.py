"""The terminal views of the workflows' records whose code lives above ``report/`` (with the part whose records they
show), named here so that a caller prints through the workflows: a trial's short label, a sweep's progress bar, a
study's table of verdicts.  Each is the part's own function, not a copy."""

from __future__ import annotations

from edgebench.study.report import table as verdict_table
from edgebench.sweep.plan import trial_label
from edgebench.sweep.progress import RichReporter as SweepProgress

__all__ = ["SweepProgress", "trial_label", "verdict_table"]

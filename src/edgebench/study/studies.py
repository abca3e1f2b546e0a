"""The studies by name: what ``edgebench study NAME`` runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edgebench.study.plan import StudyPlan
from edgebench.study.records import Observation, Verdict


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    source: str
    observations: tuple[Observation, ...]
    #: ``check(results, store=None)``: every observation's verdict (a check reading series uses the store).
    check: Callable[..., list[Verdict]]
    plan: Callable[..., StudyPlan]
    #: Observation id -> the view of the report that is its counterpart (see :mod:`edgebench.study.figures`).
    figures: dict[str, Any]


def get_study(name: str) -> Study:
    if name == "tx2":
        from edgebench.study import tx2 as m
    elif name == "dnntune":
        from edgebench.study import dnntune as m  # type: ignore[no-redef]
    elif name == "mnn-suite":
        from edgebench.study import mnn_suite as m  # type: ignore[no-redef]
    else:
        raise KeyError(name)
    return Study(name, m.TITLE, m.SOURCE, m.OBSERVATIONS, m.check, m.plan, m.FIGURES)


NAMES = ("tx2", "dnntune", "mnn-suite")

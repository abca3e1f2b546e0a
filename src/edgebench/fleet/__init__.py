"""Executors: how a planned sweep's trials reach devices.  ``local`` runs them one after another on this machine;
``ray`` spreads them over the devices a Ray cluster's hosts advertise (``edgebench fleet join``)."""

from __future__ import annotations

from edgebench.fleet.job import SweepJob
from edgebench.registry import EXECUTORS

__all__ = ["SweepJob", "open_executor"]


def open_executor(name: str, *, address: str | None = None) -> object:
    """The executor a user named (``--executor``), connected to ``address`` where it has one."""
    return EXECUTORS.load(name)(address=address)

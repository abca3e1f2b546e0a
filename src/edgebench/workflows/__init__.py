"""Every multi-step use case of edgebench as a plain function over typed records: the Python API, which the
``edgebench`` command wraps (it reads flags, calls one of these, prints).  ``docs/guide/python-api.md`` lists them.

A workflow never prints and never exits: it takes a request record (or plain values), returns records, hands the
notes and progress it has to tell to a ``notify(line)`` callback (and results as they come to an ``on_...``
callback where a caller shows them before the end), and refuses bad input with
:class:`~edgebench.errors.UsageError` (``field: what to do``) before any trial runs.

The names below are imported on first use, so ``import edgebench.workflows`` costs nothing of what they need.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Each public name and the module that defines it.
_API = {
    "TrialRequest": "trial", "TrialRun": "trial", "run_trial": "trial",
    "PlanOptions": "plans", "PlanRun": "plans", "keyed": "plans", "run_plan": "plans",
    "SweepRequest": "sweep", "PlannedSweep": "sweep", "SweepRun": "sweep", "plan_sweep": "sweep",
    "run_sweep": "sweep", "sweep_each_target": "sweep",
    "FeasibilityRequest": "feasibility", "FeasibilityTable": "feasibility", "run_feasibility": "feasibility",
    "FrameworksRequest": "frameworks", "FrameworksTable": "frameworks", "run_frameworks": "frameworks",
    "PartitionRequest": "partition", "analyse_partition": "partition", "table4": "partition",
    "StudyRequest": "study", "PlannedStudy": "study", "StudyOutcome": "study", "plan_study": "study",
    "run_study": "study",
    "PredictRequest": "predict", "Predictions": "predict", "predict_steps": "predict", "validate_predictor": "predict",
    "ExportRequest": "exchange", "Exported": "exchange", "ImportedFile": "exchange", "export_trials": "exchange",
    "import_files": "exchange", "import_mnn_suite": "exchange",
    "Comparison": "compare", "compare_stored": "compare",
    "TrialFilter": "browse", "list_trials": "browse", "stored_trial": "browse",
    "LayersRequest": "layers", "StepCounters": "layers", "layer_table": "layers", "TraceRequest": "layers",
    "TraceWritten": "layers", "write_trace": "layers",
    "PeakRequest": "peak", "PeakNotMeasured": "peak", "device_peak": "peak", "peak_for_trial": "peak",
    "ReportRequest": "reports", "ReportWritten": "reports", "write_report": "reports", "PlotRequest": "reports",
    "write_plot": "reports",
    "MonitorRequest": "monitor", "monitor_here": "monitor", "monitor_remote": "monitor",
    "Inventory": "device", "sensor_inventory": "device", "Snapshot": "device", "snapshot": "device",
    "system_checks": "device", "system_tune": "device", "system_reset": "device",
    "Listing": "models", "describe_models": "models",
    "trial_label": "views", "sweep_progress": "views", "verdict_table": "views",
    "JoinRequest": "fleet", "Joined": "fleet", "FleetStatus": "fleet", "join_fleet": "fleet", "fleet_status": "fleet",
}  # fmt: skip

__all__ = [*_API, "NotStored"]


def __getattr__(name: str) -> Any:
    if name == "NotStored":  # a trial ran but its store refused it: the record is in the file the message names
        from edgebench.store.rescue import NotStored

        return NotStored
    if name not in _API:
        raise AttributeError(f"module 'edgebench.workflows' has no attribute {name!r}")
    return getattr(importlib.import_module(f"edgebench.workflows.{_API[name]}"), name)

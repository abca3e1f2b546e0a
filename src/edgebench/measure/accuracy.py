"""Time to accuracy from a worker's events: when held-out accuracy first reached the target, and at what cost."""

from __future__ import annotations

from typing import Any

from edgebench.result import AccuracyPoint
from edgebench.trial import Trial


def accuracy_fields(trial: Trial, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The result's accuracy fields (empty without ``until_accuracy``); works on a killed trial's events too."""
    if trial.until_accuracy is None:
        return {}
    steps = [e for e in events if e["event"] == "step" and e["phase"] in ("warmup", "train")]
    evals = [e for e in events if e["event"] == "eval"]
    fields: dict[str, Any] = {"target_accuracy": trial.until_accuracy, "reached_accuracy": False}
    if not steps or not evals:
        return fields
    t0 = steps[0]["start_ns"]
    warmup = sum(1 for s in steps if s["phase"] == "warmup")
    fields["accuracy_curve"] = [
        AccuracyPoint(step=warmup + e["step"], accuracy=e["accuracy"], elapsed_s=(e["end_ns"] - t0) / 1e9)
        for e in evals
    ]
    fields["final_accuracy"] = evals[-1]["accuracy"]
    fields["eval_time_s"] = sum(e["end_ns"] - e["start_ns"] for e in evals) / 1e9
    reached = next((e for e in evals if e["accuracy"] >= trial.until_accuracy), None)
    if reached is not None:
        steps_taken = warmup + reached["step"]
        fields.update(
            reached_accuracy=True,
            time_to_accuracy_s=(reached["end_ns"] - t0) / 1e9,
            steps_to_accuracy=steps_taken,
            samples_to_accuracy=steps_taken * trial.batch_size,
        )
    return fields

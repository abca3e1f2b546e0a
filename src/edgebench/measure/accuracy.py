"""Time to accuracy from a worker's events: when held-out accuracy first reached the target, and at what cost."""

from __future__ import annotations

from edgebench.measure.energy import idle_window
from edgebench.measure.power import device_energy
from edgebench.records.events import Eval, EventsLike, Step, as_events
from edgebench.records.result import Accuracy, AccuracyPoint
from edgebench.records.trial import Trial
from edgebench.sensors.samples import Samples


def _training(events: EventsLike) -> tuple[list[Step], list[Eval]]:
    """The warm-up and training steps, and the evaluations, of a worker's events."""
    events = as_events(events)
    steps = [e for e in events if isinstance(e, Step) and e.phase in ("warmup", "train")]
    return steps, [e for e in events if isinstance(e, Eval)]


def accuracy_span_ns(trial: Trial, events: EventsLike) -> tuple[int, int] | None:
    """From the first training step to the end of the evaluation that reached the target; None if none did."""
    steps, evals = _training(events)
    reached = next((e for e in evals if trial.until_accuracy and e.accuracy >= trial.until_accuracy), None)
    return (steps[0].start_ns, reached.end_ns) if steps and reached else None


def energy_to_accuracy_j(trial: Trial, events: EventsLike, samples: Samples) -> float | None:
    """Energy the device drew over the time to accuracy, idle-subtracted like ``energy_j``; None without power."""
    span = accuracy_span_ns(trial, events)
    figures = device_energy(samples, *span, idle_window(events)) if span else None
    return figures.active_j if figures else None


def accuracy_group(trial: Trial, events: EventsLike) -> Accuracy | None:
    """The result's accuracy (None without ``until_accuracy``), without its energy, which needs the samples;
    works on a killed trial's events too."""
    if trial.until_accuracy is None:
        return None
    steps, evals = _training(events)
    if not steps or not evals:
        return Accuracy(reached=False)
    t0 = steps[0].start_ns
    warmup = sum(1 for s in steps if s.phase == "warmup")
    curve = [AccuracyPoint(step=warmup + e.step, accuracy=e.accuracy, elapsed_s=(e.end_ns - t0) / 1e9) for e in evals]
    found = Accuracy(
        reached=False,
        final=evals[-1].accuracy,
        eval_time_s=sum(e.end_ns - e.start_ns for e in evals) / 1e9,
        curve=curve,
    )
    reached = next((e for e in evals if e.accuracy >= trial.until_accuracy), None)
    if reached is None:
        return found
    steps_taken = warmup + reached.step
    return found.model_copy(
        update={
            "reached": True,
            "time_s": (reached.end_ns - t0) / 1e9,
            "steps": steps_taken,
            "samples": steps_taken * trial.batch_size,
        }
    )

"""The training steps a workload can name, as plain data: what each one is and which real datasets it trains on.

A workload's ``task`` is one of these names; each backend maps the name to its own implementation (the torch
backend's :data:`edgebench.backends.torch.tasks.TASKS`).  Keeping what a task accepts here lets a trial's
``data`` be validated without importing the backend.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskSpec:
    """What a training step does, and the real datasets (``DATASETS`` names) it can draw its batches from."""

    description: str
    datasets: tuple[str, ...] = ()
    #: Whether the step also trains on a text file the user names (``--data notes.txt``).
    text_files: bool = False


TASKS: dict[str, TaskSpec] = {
    "classification": TaskSpec("cross-entropy on logits", ("mnist",)),
    "language_model": TaskSpec("next-token cross-entropy over a window (teacher forcing)", ("shakespeare",)),
    "masked_lm": TaskSpec("masked language modelling (BERT pre-training)"),
    "segmentation": TaskSpec("per-pixel cross-entropy"),
    "speech": TaskSpec("CTC over per-step symbol log-probabilities"),
    "seq2seq": TaskSpec("teacher-forced sequence to sequence"),
    "gan": TaskSpec("one discriminator, then one generator update"),
    "dqn": TaskSpec("TD update on a replay batch"),
    "custom": TaskSpec("the user's module and loss on a synthetic batch"),
    "causal_lm": TaskSpec(
        "a decoder-only LM's next-token cross-entropy over byte-level windows, full or LoRA; generation timed after",
        ("shakespeare",),
        text_files=True,
    ),
    "text_classification": TaskSpec("cross-entropy of an encoder's [CLS] class, full or LoRA", ("speakers",)),
}


def task_datasets(task: str) -> tuple[str, ...]:
    """The real datasets ``task`` trains on (none for a task this table does not know)."""
    spec = TASKS.get(task)
    return spec.datasets if spec else ()

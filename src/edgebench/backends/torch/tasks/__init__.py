"""The torch training step of each task name (:data:`edgebench.workloads.tasks.TASKS`), imported when chosen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from edgebench.registry import Registry

if TYPE_CHECKING:
    from edgebench.backends.torch.tasks.base import TrainingSession
    from edgebench.workloads.lm import LMSettings
    from edgebench.workloads.spec import Workload

TASKS = Registry(
    "task",
    {
        "classification": "edgebench.backends.torch.tasks.classification:ClassificationTask",
        "language_model": "edgebench.backends.torch.tasks.language_model:LanguageModelTask",
        "masked_lm": "edgebench.backends.torch.tasks.masked_lm:MaskedLMTask",
        "segmentation": "edgebench.backends.torch.tasks.segmentation:SegmentationTask",
        "speech": "edgebench.backends.torch.tasks.speech:CTCTask",
        "seq2seq": "edgebench.backends.torch.tasks.seq2seq:Seq2SeqTask",
        "gan": "edgebench.backends.torch.tasks.gan:GANTask",
        "dqn": "edgebench.backends.torch.tasks.dqn:DQNTask",
        "custom": "edgebench.backends.torch.tasks.custom:CustomTask",
        "causal_lm": "edgebench.backends.torch.tasks.causal_lm:CausalLMTask",
        "text_classification": "edgebench.backends.torch.tasks.text_classification:TextClassificationTask",
    },
)


def task_session(
    workload: Workload,
    batch_size: int,
    *,
    input_shape: tuple[int, ...],
    num_classes: int,
    device: str,
    seed: int,
    data: str | None = None,
    lm: LMSettings | None = None,
) -> TrainingSession:
    """The workload's task as a torch session: model, optimizer and a batch on ``device``, ready to step; a
    ``data`` set the task cannot train on is a ``ValueError`` naming the ones it can."""
    from edgebench.backends.torch.tasks.base import SessionInputs

    task = TASKS.load(workload.task)(workload)
    task.check_data(data)
    return task.session(SessionInputs(batch_size, input_shape, num_classes, device, seed, data, lm))


def trial_task(trial: Any, workload: Workload) -> tuple[int | None, Any]:
    """``workload``'s torch task at ``trial``'s settings (batch, input, classes, seed, data; its preset's where the
    trial leaves them open) and the classes it has: the reference model a backend that converts from torch (MNN,
    ExecuTorch) builds and checks against, the same one the torch trial would train."""
    preset = workload.preset(trial.preset) if trial.preset else None
    num_classes = trial.num_classes or (preset.num_classes if preset else None) or workload.num_classes
    task = workload.session(
        trial.batch_size,
        input_shape=trial.input_shape or (preset.input_shape if preset else None),
        num_classes=num_classes,
        seed=trial.seed,
        data=trial.data,
        backend="torch",
    )
    return getattr(task, "num_classes", None) or num_classes, task

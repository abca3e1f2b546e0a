"""Language modelling: predict every next token of a window (teacher forcing), cross-entropy over all positions.

With ``data="shakespeare"`` each step trains on a batch of random windows of the shipped text and
``evaluate()`` gives the next-character accuracy on the held-out part; otherwise the tokens are synthetic.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from edgebench.backends.torch.data.synthetic import token_batch
from edgebench.backends.torch.tasks.base import LossSession, Task

EVAL_WINDOWS = 64


class LanguageModelSession(LossSession):
    def __init__(
        self,
        model: nn.Module,
        task: Task,
        tokens: torch.Tensor,
        text: tuple[torch.Tensor, torch.Tensor] | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(model, task.workload.optimizer)
        self.tokens = tokens  # (batch, window + 1)
        self.text, self.generator = text, generator

    def _windows(self, source: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
        return source[starts.unsqueeze(1) + torch.arange(self.tokens.shape[1], device=source.device)]

    def loss(self) -> torch.Tensor:
        if self.text is not None:
            train = self.text[0]
            starts = torch.randint(
                0, len(train) - self.tokens.shape[1], (self.tokens.shape[0],), generator=self.generator
            )
            self.tokens = self._windows(train, starts.to(train.device))
        logits = self.model(self.tokens[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), self.tokens[:, 1:].reshape(-1))

    @torch.no_grad()
    def infer_step(self) -> None:
        self.model(self.tokens[:, :-1])

    @torch.no_grad()
    def evaluate(self) -> float:
        """Next-token accuracy over evenly spaced windows of the held-out text, in eval mode."""
        if self.text is None:
            raise ValueError("evaluate() needs real data (data='shakespeare')")
        test = self.text[1]
        span = self.tokens.shape[1]
        starts = torch.linspace(0, len(test) - span - 1, EVAL_WINDOWS).long().to(test.device)
        windows = self._windows(test, starts)
        was_training = self.model.training
        self.model.eval()
        predicted = self.model(windows[:, :-1]).argmax(dim=-1)
        self.model.train(was_training)
        return float((predicted == windows[:, 1:]).float().mean())


class LanguageModelTask(Task):
    def session(
        self,
        batch_size: int,
        *,
        input_shape: tuple[int, ...],
        num_classes: int,
        device: str,
        seed: int,
        data: str | None = None,
    ) -> LanguageModelSession:
        self.check_data(data)
        generator = torch.Generator().manual_seed(seed)
        window = input_shape[0]
        if data is None:
            model = self.build(num_classes, input_shape, device, seed)
            tokens = token_batch(batch_size, (window + 1,), num_classes, generator)
            return LanguageModelSession(model, self, tokens.to(device))
        from edgebench.registry import DATASETS

        text = DATASETS.load(data).load()
        model = self.build(text.num_classes, input_shape, device, seed)
        train, test = text.train.to(device), text.test.to(device)
        session = LanguageModelSession(model, self, train[: window + 1].repeat(batch_size, 1), (train, test), generator)
        session.num_classes, session.input_shape = text.num_classes, input_shape  # type: ignore[attr-defined]
        return session

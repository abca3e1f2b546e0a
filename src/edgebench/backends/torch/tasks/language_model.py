"""Language modelling: predict every next token of a window (teacher forcing), cross-entropy over all positions.

With ``data="shakespeare"`` each step trains on a batch of random windows of the shipped text and
``evaluate()`` gives the next-character accuracy on the held-out part; otherwise the tokens are synthetic.
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn

from edgebench.backends.torch.data.synthetic import token_batch
from edgebench.backends.torch.tasks.base import SessionInputs, Task, TokenSession

EVAL_WINDOWS = 64


class LanguageModelSession(TokenSession):
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
        return super().loss()

    def forward(self) -> torch.Tensor:
        return self.model(self.tokens[:, :-1])  # type: ignore[no-any-return]

    def labels(self) -> torch.Tensor:
        return self.tokens[:, 1:]

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
    def session(self, inputs: SessionInputs) -> LanguageModelSession:
        generator, device, batch_size = inputs.generator(), inputs.device, inputs.batch_size
        window = inputs.input_shape[0]
        if inputs.data is None:
            model = self.build(inputs)
            tokens = token_batch(batch_size, (window + 1,), inputs.num_classes, generator)
            return LanguageModelSession(model, self, tokens.to(device))
        from edgebench.registry import DATASETS

        text = DATASETS.load(inputs.data).load()
        model = self.build(replace(inputs, num_classes=text.num_classes))
        train, test = text.train.to(device), text.test.to(device)
        session = LanguageModelSession(model, self, train[: window + 1].repeat(batch_size, 1), (train, test), generator)
        session.num_classes, session.input_shape = text.num_classes, inputs.input_shape  # type: ignore[attr-defined]
        return session

"""An encoder's classification step: cross-entropy of the pooled ``[CLS]`` output's class, in full or with LoRA.

With ``data="speakers"`` each step trains on a batch of Macbeth's speeches labelled by speaker, and ``evaluate()``
gives the accuracy on the held-out 20%; otherwise the tokens and labels are synthetic.  From random weights on 244
speeches the encoder learns next to nothing (the spike measured the majority class's 0.48, ``docs/guide/
language-models.md``): its accuracy says so against the majority line it reports; its speed and memory stand.
"""

from __future__ import annotations

from dataclasses import replace

import torch
import torch.nn.functional as F
from torch import nn

from edgebench.backends.torch.data.batches import EpochSampler
from edgebench.backends.torch.data.synthetic import token_batch
from edgebench.backends.torch.tasks.adapt import adapt, setup_of, trainable_parameters
from edgebench.backends.torch.tasks.base import SessionInputs, Task, make_optimizer
from edgebench.data.text import BYTE_VOCAB, PAD, SpeechData
from edgebench.records.lm import LMSetup
from edgebench.workloads.lm import LMSettings, optimizer_for
from edgebench.workloads.spec import Workload


class TextClassificationSession:
    def __init__(
        self,
        model: nn.Module,
        workload: Workload,
        tokens: torch.Tensor,
        labels: torch.Tensor,
        setup: LMSetup,
        settings: LMSettings,
        data: SpeechData | None = None,
        sampler: EpochSampler | None = None,
    ) -> None:
        self.model, self.tokens, self.labels = model, tokens, labels
        self.language_model = setup
        params = trainable_parameters(model)
        self.optimizer, self.scheduler = make_optimizer(params, optimizer_for(workload, settings))
        self.data, self.sampler = data, sampler

    def _logits(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.model(tokens, tokens == PAD)  # type: ignore[no-any-return]

    def train_step(self) -> torch.Tensor:
        if self.sampler is not None and self.data is not None:
            index = self.sampler.next()
            device = self.tokens.device
            self.tokens, self.labels = (
                self.data.train_tokens[index].to(device),
                self.data.train_labels[index].to(device),
            )
        self.optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(self._logits(self.tokens), self.labels)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    @torch.no_grad()
    def infer_step(self) -> None:
        self._logits(self.tokens)

    @torch.no_grad()
    def evaluate(self) -> float:
        """Held-out accuracy, in eval mode (dropout off)."""
        if self.data is None:
            raise ValueError("evaluate() needs real data (data='speakers')")
        was_training = self.model.training
        self.model.eval()
        device = self.tokens.device
        predicted = self._logits(self.data.test_tokens.to(device)).argmax(-1)
        self.model.train(was_training)
        return float((predicted == self.data.test_labels.to(device)).float().mean())


class TextClassificationTask(Task):
    def session(self, inputs: SessionInputs) -> TextClassificationSession:
        settings = inputs.lm or LMSettings()
        generator, device = inputs.generator(), inputs.device
        length = inputs.input_shape[0]
        data = None
        if inputs.data is not None and device != "meta":
            from edgebench.registry import DATASETS

            data = DATASETS.load(inputs.data).load(length=length, seed=inputs.seed)
            inputs = replace(inputs, num_classes=data.num_classes)
        model = self.build(inputs)
        adapted = adapt(model, settings)
        setup = setup_of(
            adapted,
            settings,
            tokens_per_step=inputs.batch_size * length,
            tokenizer=f"bytes ({BYTE_VOCAB})",
        )
        if data is None:
            tokens = token_batch(inputs.batch_size, (length,), 256, generator)
            labels = torch.randint(0, inputs.num_classes, (inputs.batch_size,), generator=generator)
            return TextClassificationSession(
                adapted.model, self.workload, tokens.to(device), labels.to(device), setup, settings
            )
        sampler = EpochSampler(len(data.train_labels), inputs.batch_size, generator)
        index = sampler.next()
        session = TextClassificationSession(
            adapted.model,
            self.workload,
            data.train_tokens[index].to(device),
            data.train_labels[index].to(device),
            setup,
            settings,
            data,
            sampler,
        )
        session.num_classes, session.input_shape = data.num_classes, (length,)  # type: ignore[attr-defined]
        return session

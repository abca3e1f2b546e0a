"""Deep Q-learning (Mnih et al. 2015): a TD update on a batch drawn from a replay memory.

``loss = Huber(Q(s, a), r + gamma * max_a' Q_target(s', a') * (1 - done))`` with the target network a frozen
copy, refreshed every 10,000 steps as in the paper.  The replay memory holds uint8 frames, as a real agent's
does; each step samples a batch from it and scales the frames to [0, 1].  It holds 1,000 transitions
(56 MB at 4x84x84) rather than the paper's million, which no edge device keeps in memory.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from edgebench.backends.torch.tasks.base import LossSession, SessionInputs, Task

GAMMA = 0.99
TARGET_UPDATE_STEPS = 10_000
REPLAY_SIZE = 1000


class DQNSession(LossSession):
    def __init__(self, model: nn.Module, task: Task, memory: dict[str, torch.Tensor], batch_size: int, seed: int):
        super().__init__(model, task.workload.optimizer)
        self.target = copy.deepcopy(model).requires_grad_(False)
        self.memory, self.batch_size = memory, batch_size
        self.steps = 0
        device = memory["action"].device
        self.sampler = torch.Generator(device="cpu").manual_seed(seed)
        self.device = device

    def _batch(self) -> dict[str, torch.Tensor]:
        size = self.memory["action"].shape[0]
        index = torch.randint(0, size, (self.batch_size,), generator=self.sampler).to(self.device)
        batch = {k: v.index_select(0, index) for k, v in self.memory.items()}
        batch["state"] = batch["state"].float() / 255.0
        batch["next_state"] = batch["next_state"].float() / 255.0
        return batch

    def loss(self) -> torch.Tensor:
        b = self._batch()
        q = self.model(b["state"]).gather(1, b["action"].unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            best_next = self.target(b["next_state"]).max(dim=1).values
            target = b["reward"] + GAMMA * best_next * (1.0 - b["done"])
        return F.smooth_l1_loss(q, target)

    def train_step(self) -> torch.Tensor:
        loss = super().train_step()
        self.steps += 1
        if self.steps % TARGET_UPDATE_STEPS == 0:
            self.target.load_state_dict(self.model.state_dict())
        return loss

    @torch.no_grad()
    def infer_step(self) -> None:
        """Pick actions for a batch of states (the acting side of the agent)."""
        self.model(self._batch()["state"]).argmax(dim=1)


class DQNTask(Task):
    def session(self, inputs: SessionInputs) -> DQNSession:
        model, g = self.build(inputs), inputs.generator()
        batch_size, input_shape, num_classes = inputs.batch_size, inputs.input_shape, inputs.num_classes
        size = max(REPLAY_SIZE, batch_size)
        memory = {
            "state": torch.randint(0, 256, (size, *input_shape), generator=g, dtype=torch.uint8),
            "next_state": torch.randint(0, 256, (size, *input_shape), generator=g, dtype=torch.uint8),
            "action": torch.randint(0, num_classes, (size,), generator=g),
            "reward": torch.randint(-1, 2, (size,), generator=g).float(),
            "done": (torch.rand(size, generator=g) < 0.01).float(),
        }
        return DQNSession(model, self, {k: v.to(inputs.device) for k, v in memory.items()}, batch_size, inputs.seed)

"""GAN training (DCGAN): each step is one discriminator update, then one generator update.

The discriminator learns to score real images 1 and generated ones 0 (the generator's output detached);
the generator then learns to make the discriminator score its images 1 (the non-saturating loss).  Fresh noise
is drawn every step, as in the algorithm; the "real" images are a fixed synthetic batch in [-1, 1].
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from edgebench.backends.torch.tasks.base import SessionInputs, Task, make_optimizer


class GANSession:
    def __init__(self, model: nn.Module, task: Task, real: torch.Tensor, seed: int) -> None:
        self.model = model
        self.generator: nn.Module = model.generator  # type: ignore[assignment]
        self.discriminator: nn.Module = model.discriminator  # type: ignore[assignment]
        settings = task.workload.optimizer
        self.g_optimizer, _ = make_optimizer(self.generator.parameters(), settings)
        self.d_optimizer, _ = make_optimizer(self.discriminator.parameters(), settings)
        self.real = real
        self.ones = torch.ones(real.shape[0], device=real.device)
        self.zeros = torch.zeros(real.shape[0], device=real.device)
        self.latent: int = self.generator.latent  # type: ignore[assignment]
        self.noise = torch.Generator(device=real.device if real.device.type == "cuda" else "cpu").manual_seed(seed)

    def _z(self) -> torch.Tensor:
        if self.real.device.type == "meta":
            return torch.empty(self.real.shape[0], self.latent, device="meta")
        return torch.randn(self.real.shape[0], self.latent, generator=self.noise, device=self.noise.device).to(
            self.real.device
        )

    def train_step(self) -> torch.Tensor:
        fake = self.generator(self._z())
        self.d_optimizer.zero_grad(set_to_none=True)
        d_loss = F.binary_cross_entropy_with_logits(self.discriminator(self.real), self.ones)
        d_loss = d_loss + F.binary_cross_entropy_with_logits(self.discriminator(fake.detach()), self.zeros)
        d_loss.backward()
        self.d_optimizer.step()
        self.g_optimizer.zero_grad(set_to_none=True)
        g_loss = F.binary_cross_entropy_with_logits(self.discriminator(fake), self.ones)
        g_loss.backward()
        self.g_optimizer.step()
        return (d_loss + g_loss).detach()

    @torch.no_grad()
    def infer_step(self) -> None:
        """Generate a batch of images."""
        self.generator(self._z())


class GANTask(Task):
    def session(self, inputs: SessionInputs) -> GANSession:
        model, generator = self.build(inputs), inputs.generator()
        real = torch.tanh(torch.randn((inputs.batch_size, *inputs.input_shape), generator=generator))
        return GANSession(model, self, real.to(inputs.device), inputs.seed)

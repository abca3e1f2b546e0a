"""A decoder-only language model's step: next-token cross-entropy over byte-level windows, in full or with LoRA;
its held-out loss; and greedy generation with the KV cache, timed for time to first token and decode speed.

Data: without ``data`` the windows are synthetic (uniform token ids, generated once); with it (``shakespeare`` or a
text file) each step trains on a batch of random windows of the text's training part, and :meth:`held_out` scores
32 fixed windows of its held-out 10% in nats per token and bits per byte (one token per byte).

Perplexity that falls from a random initialization first learns byte frequencies, which says nothing of a
fine-tune.  So ``pretrain_steps`` trains the base in full on the first half of the training text first (its own
phase, cached by configuration and text, never timed as the fine-tune), and the fine-tune then trains on the second
half, which the base never saw; the docs' rule for "perplexity falls" reads the held-out curve against the base's own
start and the text's unigram line (:mod:`edgebench.measure.lm`).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import asdict, replace
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from edgebench.backends.torch.data.synthetic import token_batch
from edgebench.backends.torch.tasks.adapt import adapt, setup_of, trainable_parameters
from edgebench.backends.torch.tasks.base import SessionInputs, Task, make_optimizer
from edgebench.data.text import BYTE_VOCAB, UNIFORM_BITS_PER_BYTE, ByteText, byte_text
from edgebench.records.lm import LMSetup, LMText, Pretraining
from edgebench.workloads.lm import LMSettings, LMWorkload, optimizer_for
from edgebench.zoo.lm import DecoderLM, KVCache
from edgebench.zoo.lora import unwrap

#: Held-out windows scored per evaluation (evenly spaced over the held-out text).
EVAL_WINDOWS = 32


def _windows(source: torch.Tensor, starts: torch.Tensor, length: int) -> torch.Tensor:
    return source[starts.unsqueeze(1) + torch.arange(length, device=source.device)]


class CausalLMSession:
    """The model (LoRA-wrapped or not), its optimizer over what trains, its batch, its text, its generator."""

    def __init__(
        self,
        adapted: nn.Module,
        workload: LMWorkload,
        inputs: SessionInputs,
        settings: LMSettings,
        text: ByteText | None,
        setup: LMSetup,
    ) -> None:
        self.model = adapted
        self.decoder: DecoderLM = unwrap(adapted)  # type: ignore[assignment]
        self.settings, self.text, self.language_model = settings, text, setup
        self.device, self.batch_size = inputs.device, inputs.batch_size
        self.window = inputs.input_shape[0]
        self.generator = inputs.generator()
        self.num_classes, self.input_shape = self.decoder.shape.vocab, (self.window,)
        params = trainable_parameters(adapted)
        self.optimizer, self.scheduler = (
            make_optimizer(params, optimizer_for(workload, settings)) if params else (None, None)
        )
        if text is None:
            tokens = token_batch(inputs.batch_size, (self.window + 1,), self.num_classes, self.generator)
        else:
            tokens = text.train[: self.window + 1].repeat(inputs.batch_size, 1)
        self.tokens = tokens.to(self.device)
        #: The KV cache of the last generation (kept so that memory by category can count it).
        self.kv_cache: KVCache | None = None
        self._prompt_source = text.test if text is not None else None

    # -- training -------------------------------------------------------------------------------------------------

    def loss(self) -> torch.Tensor:
        if self.text is not None:
            train = self.text.train
            starts = torch.randint(0, len(train) - self.window - 1, (self.batch_size,), generator=self.generator)
            self.tokens = _windows(train, starts, self.window + 1).to(self.device)
        logits = self.model(self.tokens[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), self.tokens[:, 1:].reshape(-1))

    def train_step(self) -> torch.Tensor:
        if self.optimizer is None:
            raise ValueError("nothing trains: every weight is frozen")
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss()
        loss.backward()
        self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        return loss.detach()

    @torch.no_grad()
    def infer_step(self) -> None:
        """One forward pass over the batch's windows (every position's logits), as a training step's forward."""
        self.model(self.tokens[:, :-1])

    # -- held-out loss ------------------------------------------------------------------------------------------

    @torch.no_grad()
    def held_out(self) -> dict[str, float]:
        """Cross-entropy (nats per token, bits per byte) and next-byte accuracy over :data:`EVAL_WINDOWS` fixed
        windows of the held-out text, in eval mode."""
        if self.text is None:
            raise ValueError("held-out loss needs real text (--data shakespeare or a text file)")
        test = self.text.test
        span = self.window + 1
        starts = torch.linspace(0, len(test) - span - 1, EVAL_WINDOWS).long()
        windows = _windows(test, starts, span).to(self.device)
        was_training = self.model.training
        self.model.eval()
        nats = correct = 0.0
        for chunk in windows.split(max(self.batch_size, 1)):
            logits = self.model(chunk[:, :-1])
            nats += float(
                F.cross_entropy(logits.reshape(-1, logits.shape[-1]), chunk[:, 1:].reshape(-1), reduction="sum")
            )
            correct += float((logits.argmax(-1) == chunk[:, 1:]).sum())
        self.model.train(was_training)
        count = windows[:, 1:].numel()
        loss = nats / count
        return {"loss_nats_per_token": loss, "bits_per_byte": loss / math.log(2), "accuracy": correct / count}

    def evaluate(self) -> float:
        """Held-out next-byte accuracy (the time-to-accuracy rule's figure)."""
        return self.held_out()["accuracy"]

    # -- generation ---------------------------------------------------------------------------------------------

    def _prompt(self, context: int) -> torch.Tensor:
        if self._prompt_source is not None and len(self._prompt_source) > 0:
            repeats = -(-context // len(self._prompt_source))
            ids = self._prompt_source.repeat(repeats)[:context].clone()  # its own storage: the input batch
        else:
            ids = token_batch(1, (context,), min(self.num_classes, 256), torch.Generator().manual_seed(context))[0]
        return ids.unsqueeze(0).to(self.device)

    @torch.no_grad()
    def generate(self, context: int, new_tokens: int, sync: Any = None) -> dict[str, int]:
        """Greedy generation, batch 1: a prompt of ``context`` tokens (the held-out text's first, or synthetic) in one
        pass to the first token, then ``new_tokens - 1`` one at a time; returns the clock readings, the tokens and
        the cache's bytes.  The cache is allocated before the clock starts, for ``context + new_tokens`` positions."""
        prompt = self._prompt(context)
        self.kv_cache = None  # the last generation's cache goes before the next is allocated
        cache = self.decoder.new_cache(1, context + new_tokens)
        self.kv_cache = cache
        done = sync or (lambda: None)
        start = time.perf_counter_ns()
        token = self.model(prompt, cache, 0, True)[:, -1:].argmax(-1)
        done()
        first = time.perf_counter_ns()
        position = context
        for _ in range(new_tokens - 1):
            token = self.model(token, cache, position, True)[:, -1:].argmax(-1)
            position += 1
        done()
        end = time.perf_counter_ns()
        return {
            "start_ns": start,
            "first_token_ns": first,
            "end_ns": end,
            "new_tokens": new_tokens,
            "kv_cache_bytes": cache.nbytes,
        }


class CausalLMTask(Task):
    workload: LMWorkload

    def session(self, inputs: SessionInputs) -> CausalLMSession:
        settings = inputs.lm or LMSettings()
        text = None
        if inputs.data is not None and inputs.device != "meta":
            text = byte_text(inputs.data, pretraining=settings.pretrain_steps > 0)
            inputs = replace(inputs, num_classes=max(inputs.num_classes, BYTE_VOCAB))
        model: DecoderLM = self.build(inputs)  # type: ignore[assignment]
        longest = max(settings.contexts, default=0) + settings.decode_tokens
        if inputs.device != "meta" and settings.contexts:
            model.ensure_positions(max(inputs.input_shape[0] + 1, longest))
        pretraining = None
        if text is not None and settings.pretrain_steps:
            pretraining = pretrain(model, self.workload, inputs, text, settings.pretrain_steps)
        adapted = adapt(model, settings)
        setup = setup_of(
            adapted,
            settings,
            tokens_per_step=inputs.batch_size * inputs.input_shape[0],
            tokenizer=f"bytes ({BYTE_VOCAB})" if text is not None else f"synthetic ids ({inputs.num_classes})",
            shape_only=self.workload.shape_only,
            text=None if text is None else _text_record(text),
            pretraining=pretraining,
            contexts=list(settings.contexts),
            decode_tokens=settings.decode_tokens,
        )
        return CausalLMSession(adapted.model, self.workload, inputs, settings, text, setup)


def _text_record(text: ByteText) -> LMText:
    return LMText(
        name=text.name,
        nbytes=text.nbytes,
        sha256=text.sha256,
        train_bytes=len(text.train),
        test_bytes=len(text.test),
        pretrain_bytes=0 if text.pretrain is None else len(text.pretrain),
        unigram_bits_per_byte=text.unigram_bits_per_byte,
        uniform_bits_per_byte=UNIFORM_BITS_PER_BYTE,
    )


def pretrain(model: nn.Module, workload: LMWorkload, inputs: SessionInputs, text: ByteText, steps: int) -> Pretraining:
    """Train ``model`` in full for ``steps`` on the text's pretraining half, or load the same base from the cache
    (keyed by the workload, its vocabulary, seed, steps, window, batch, optimizer, the text's digest and the code)."""
    from edgebench.graph.cache import cache_dir, fingerprint
    from edgebench.host.files import write_with

    assert text.pretrain is not None
    window = inputs.input_shape[0]
    key_fields = {
        "model": workload.name,
        "vocab": inputs.num_classes,
        "seed": inputs.seed,
        "steps": steps,
        "window": window,
        "batch": inputs.batch_size,
        "optimizer": asdict(workload.optimizer),
        "text": text.sha256,
        "code": fingerprint(),
    }
    key = hashlib.sha256(json.dumps(key_fields, sort_keys=True).encode()).hexdigest()[:20]
    path = cache_dir("lm-bases") / f"{workload.name}-{steps}steps-{key}.pt"
    start = time.perf_counter()
    if path.exists():
        try:
            model.load_state_dict(torch.load(path, map_location=inputs.device, weights_only=True))
            return Pretraining(steps=steps, seconds=time.perf_counter() - start, from_cache=True)
        except (RuntimeError, OSError, EOFError):
            pass  # a damaged file: train again
    optimizer, _ = make_optimizer(model.parameters(), workload.optimizer)
    generator = torch.Generator().manual_seed(inputs.seed + 1)
    source = text.pretrain
    losses = []
    model.train()
    for _ in range(steps):
        starts = torch.randint(0, len(source) - window - 1, (inputs.batch_size,), generator=generator)
        batch = _windows(source, starts, window + 1).to(inputs.device)
        optimizer.zero_grad(set_to_none=True)
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    optimizer.zero_grad(set_to_none=True)
    del optimizer
    seconds = time.perf_counter() - start
    path.parent.mkdir(parents=True, exist_ok=True)
    write_with(path, lambda p: torch.save(model.state_dict(), p))
    return Pretraining(steps=steps, seconds=seconds, from_cache=False, loss_first=losses[0], loss_last=losses[-1])

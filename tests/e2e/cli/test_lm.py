"""``edgebench run`` of a language model with the field's libraries (peft's LoRA on a torchao int8 base): the command
itself is the point, since peft, transformers and torchao print on import; ``--json`` stays one JSON object."""

from __future__ import annotations

import json


def test_peft_and_torchao_leave_json_output_one_object(cli):
    proc = cli("run", "--model", "lm_1m", "--finetune", "lora", "--lora-impl", "peft", "--frozen-weights",
               "torchao-int8", "--batch-size", "2", "--input-shape", "16", "--steps", "2", "--warmup", "1",
               "--infer-steps", "0", "--contexts", "none", "--idle", "0", "--threads", "1", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = json.loads(proc.stdout)  # the whole of stdout: nothing printed around it
    lm = record["language_model"]["setup"]
    assert (lm["lora_impl"], lm["frozen_weights"], lm["lora_layers"]) == ("peft", "torchao-int8", 28)
    assert "Failed to load" not in proc.stderr  # torchao's CUDA-extension lines are silenced

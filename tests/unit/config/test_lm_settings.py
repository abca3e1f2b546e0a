"""The language-model settings are refused in one line where they cannot apply: on a model that is not a language
model, LoRA's settings without LoRA, a context past the model's window, a text file too short, another runtime."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from edgebench.cli import main
from edgebench.config.trial import make_trial


def refused(**values) -> tuple[str, str]:
    with pytest.raises(ValidationError) as caught:
        make_trial(**values)
    error = caught.value.errors()[0]
    message = str(error["ctx"]["error"])
    if error["loc"]:  # checked against the workload (config/trial.py)
        return str(error["loc"][0]), message
    field, _, why = message.partition(": ")  # the record's own check across fields names the field first
    return field, why


@pytest.mark.parametrize(
    ("values", "field", "words"),
    [
        ({"model": "lenet", "finetune": "lora"}, "finetune", "lenet is not a language model"),
        ({"model": "lm_1m", "lora_rank": 4}, "lora_rank", "add --finetune lora"),
        ({"model": "lm_1m", "finetune": "lora", "lora_targets": ("qkv",)}, "lora_targets", "no linear layer qkv"),
        ({"model": "lm_1m", "contexts": (4000,)}, "contexts", "context window of 2048"),
        ({"model": "lm_1m", "frozen_weights": "int8"}, "frozen_weights", "add --finetune lora"),
        ({"model": "bert_tiny", "contexts": (64,)}, "contexts", "bert_tiny is an encoder"),
        ({"model": "lm_1m", "until_bits_per_byte": 4.0}, "until_bits_per_byte", "needs held-out text"),
        ({"model": "lm_1m", "pretrain_steps": 5}, "pretrain_steps", "add --data"),
        ({"model": "lm_1m", "mode": "infer", "backend": "onnxruntime"}, "backend", "KV cache as graph inputs"),
        ({"model": "lm_1m", "input_shape": (16, 16)}, "input_shape", "its sequence length"),
    ],
)
def test_a_language_model_setting_that_cannot_apply_is_refused_at_its_field(values, field, words):
    where, message = refused(**values)
    assert where == field and words in message


def test_a_text_file_is_resolved_with_its_digest_and_a_short_one_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("x" * 2000)
    trial = make_trial(model="lm_1m", data=str(text), input_shape=(32,))
    assert trial.data == str(text.resolve()) and len(trial.data_sha256) == 16
    where, message = refused(model="lm_1m", data=str(text), input_shape=(512,))
    assert where == "data" and "need at least 5140" in message
    where, message = refused(model="lenet", data=str(text))
    assert where == "data" and "does not train on a text file" in message
    assert refused(model="lm_1m", data=str(tmp_path / "missing.txt"))[0] == "data"


def test_the_command_line_says_it_in_one_line(capsys):
    assert main(["run", "--no-store", "--model", "resnet50", "--lora-rank", "4"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("edgebench: error: --lora-rank:")

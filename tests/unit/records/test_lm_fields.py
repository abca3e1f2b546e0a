"""The fields schema 4 gained for language models and the MLCommons proposals: each one declared where the docs'
table says, and a record stored before them loads as it was."""

from __future__ import annotations

from edgebench.records.lm import LanguageModel
from edgebench.records.memory import MemoryByCategory
from edgebench.records.result import MeasuredEnergy, TrialResult
from edgebench.records.result_schema import ADDED, load_result
from edgebench.records.trial import Trial


def _exists(path: str) -> bool:
    model = TrialResult
    for part in path.split("."):
        fields = model.model_fields
        if part not in fields:
            return False
        annotation = fields[part].annotation
        model = next((a for a in (annotation, *getattr(annotation, "__args__", ())) if isinstance(a, type)
                      and hasattr(a, "model_fields")), None)  # fmt: skip
    return True


def test_every_added_field_is_a_field_of_the_result():
    for paths, _ in ADDED:
        for path in paths.split(", "):
            assert _exists(path), path
    assert {"ttft_ms", "decode_tokens_per_s", "kv_cache_bytes"} <= set(
        LanguageModel.model_fields["generation"].annotation.__args__[0].__args__[0].model_fields
    )


def test_a_record_stored_before_the_new_fields_loads_with_them_empty():
    categories = {"params_bytes": 4, "peak_bytes": 100}
    stored = {"schema_version": 4, "trial_id": "t", "status": "ok", "trial": {"model": "lenet"},
              "energy": {"kind": "measured"}, "memory": {"by_category": categories}}  # fmt: skip
    r = load_result(stored)
    assert r.language_model is None and r.energy == MeasuredEnergy()
    assert r.memory.by_category == MemoryByCategory(params_bytes=4, peak_bytes=100)
    assert r.memory.by_category.other_bytes == 96  # nothing new counted in a record that never measured it
    assert r.trial.finetune == Trial().finetune == "full" and r.trial.contexts is None

"""What ``predict`` is asked, checked before the store is read: the mode, threads, batch sizes, and which of
predict, validate and suggest the options belong to (the predictions themselves: tests/unit/predict, e2e/predict)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.errors import UsageError
from edgebench.workflows.predict import PredictRequest, input_shape, predict_steps, validate_predictor


@pytest.mark.parametrize(
    ("given", "flag"),
    [({"mode": "serve"}, "--mode"), ({"threads": (0,)}, "--threads"), ({"plot": Path("v.png")}, "--plot"),
     ({"suggest": 0}, "--suggest"), ({"models": ()}, "--model"), ({"batch_sizes": ()}, "--batch-size"),
     ({"batch_sizes": (0,)}, "--batch-size"), ({"input_shape": "3xbig"}, "--input-shape"),
     ({"cores": "some"}, "--cores")],
)  # fmt: skip
def test_a_bad_prediction_request_names_its_flag(tmp_path, given, flag):
    request = PredictRequest(**{"models": ("lenet",), "batch_sizes": (8,), **given, "store": tmp_path / "absent"})
    with pytest.raises(UsageError) as caught:
        predict_steps(request)
    assert caught.value.field == flag


def test_validation_takes_neither_suggestions_nor_a_model():
    with pytest.raises(UsageError) as caught:
        validate_predictor(PredictRequest(suggest=3))
    assert caught.value.field == "--suggest"


def test_an_input_shape_is_text_or_a_shape():
    assert input_shape("3x64x64") == (3, 64, 64)
    assert input_shape((1, 28, 28)) == (1, 28, 28)
    assert input_shape(None) is None

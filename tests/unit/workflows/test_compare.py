"""The fields that pair two groups of trials in a comparison (the comparisons themselves: tests/unit/report)."""

from __future__ import annotations

import pytest

from edgebench.errors import UsageError
from edgebench.report.compare import DEVICE_MATCH_FIELDS, MATCH_FIELDS
from edgebench.workflows.compare import compare_stored, match_fields


def test_match_fields_as_text_or_names_and_the_defaults():
    assert match_fields("model, batch_size", device=False) == ("model", "batch_size")
    assert match_fields(["model", "cores"], device=True) == ("model", "cores")
    assert match_fields(None, device=False) == MATCH_FIELDS
    assert match_fields(None, device=True) == DEVICE_MATCH_FIELDS


@pytest.mark.parametrize("match", ["model,colour", ",", ""])
def test_a_field_that_pairs_nothing_is_refused(match):
    with pytest.raises(UsageError) as caught:
        match_fields(match, device=False)
    assert caught.value.field == "--match"


def test_comparing_in_a_store_that_does_not_exist_creates_none(tmp_path):
    with pytest.raises(UsageError) as caught:
        compare_stored("a", "b", store=tmp_path / "absent.sqlite")
    assert caught.value.field == "--store" and "edgebench sweep" in caught.value.message
    assert not (tmp_path / "absent.sqlite").exists()

"""The partition analysis's request checked as its flags are: each bad value refused with its flag named, before a
store is read or a trial runs (the analyses themselves run in tests/e2e/cli/test_partition.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.errors import UsageError
from edgebench.registry import UnknownName
from edgebench.workflows.partition import PartitionRequest, analyse_partition, table4


@pytest.mark.parametrize(
    ("given", "flag"),
    [({"objective": "speed"}, "--objective"), ({"mode": "serve"}, "--mode"),
     ({"cloud_speedup": 0.0}, "--cloud-speedup"),
     ({"cloud_speedup": 4.0, "cloud_trial": "abc"}, "--cloud-trial"), ({"transfer_dtype": "fp8"}, "--transfer-dtype"),
     ({"batch_size": 0}, "--batch-size"), ({"depth": 0}, "--depth"), ({"steps": 0}, "--steps"),
     ({"warmup": -1}, "--warmup"), ({"sweep_bandwidth": "fast"}, "--sweep-bandwidth"), ({"network": "5g"}, "--network"),
     ({"plot": Path("cuts.svg")}, "--plot"),
     ({"input_shape": "3x32x32"}, "--input-shape"), ({"predicted": True, "trial": "abc"}, "--trial"),
     ({"predicted": True, "objective": "energy"}, "--objective")],
)  # fmt: skip
def test_a_bad_request_names_its_flag_before_anything_is_read(tmp_path, given, flag):
    store = tmp_path / "absent.sqlite"
    with pytest.raises(UsageError) as caught:
        analyse_partition(PartitionRequest(**{"model": "lenet", **given, "store": store}))
    assert caught.value.field == flag
    assert not store.exists()


def test_an_unknown_model_is_the_registry_s_one_line_error(tmp_path):
    with pytest.raises(UnknownName, match="unknown model 'no_such_model'; choose one of: lenet"):
        analyse_partition(PartitionRequest(model="no_such_model", store=tmp_path / "absent.sqlite"))


def test_table4_tabulates_measured_trials_of_each_device(tmp_path):
    with pytest.raises(UsageError) as caught:
        table4(PartitionRequest(model="lenet", predicted=True, store=tmp_path / "s.sqlite"))
    assert caught.value.field == "--predicted"
    with pytest.raises(UsageError) as caught:
        table4(PartitionRequest(model="lenet", trial="abc", store=tmp_path / "s.sqlite"))
    assert caught.value.field == "--trial"
    with pytest.raises(UsageError) as caught:  # nothing stored: says which trial each device needs
        table4(PartitionRequest(model="lenet", store=tmp_path / "s.sqlite"))
    assert caught.value.field == "--table4" and "--trace layers" in caught.value.message

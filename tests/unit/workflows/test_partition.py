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


def test_the_device_is_its_identity_a_replayed_tree_is_never_this_hosts(tmp_path):
    """`partition` picks the newest traced trial of the device: this host with its own sensors, or the named
    target; a trial read through a copied tree (--sysfs-root) is another device's (its energy the tree's constant
    power), however new.  Table 4 names it so."""
    import socket

    from edgebench.records.result import TraceSummary
    from edgebench.store import Store
    from edgebench.workflows.partition import _device_label, _newest_trial
    from tests.factories import result, save

    traced = TraceSummary(granularity="layers", spans=10, labels=5, covered_pct=90.0)
    here = {"hostname": socket.gethostname(), "sysfs_root": "/", "sensor_source": "live"}
    tree = {"hostname": socket.gethostname(), "sysfs_root": "/x/tests/fixtures/sysfs/jetson_tx2",
            "sensor_source": "replayed"}  # fmt: skip
    store = tmp_path / "s.sqlite"
    made = {}
    with Store(store) as db:
        for trial_id, env, target in (("20260101-000001-live0001", here, "local"),
                                      ("20260101-000002-tree0002", tree, "local"),
                                      ("20260101-000003-ssh00003", {"hostname": "orin"}, "ssh://orin")):  # fmt: skip
            r = result(trial_id, [5.0, 5.1], env=env).model_copy(update={"trace_summary": traced, "target": target})
            save(db, r, [5.0, 5.1])
            made[trial_id] = r
    replayed = made["20260101-000002-tree0002"]
    assert _newest_trial(store, "lenet", None, None, "train") == "20260101-000001-live0001"
    assert _newest_trial(store, "lenet", None, None, "train", "ssh://orin") == "20260101-000003-ssh00003"
    assert _newest_trial(store, "lenet", None, None, "train", "adb://phone") is None  # none of it: one is run
    assert _device_label(replayed) == f"{socket.gethostname()} [replayed jetson_tx2]"

"""``--mode infer`` and ``--precision int8`` on the torch backend, and how both are declared and refused.  The end-to-
end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/backends/torch/test_infer_mode.py.
"""

from __future__ import annotations

import pytest

from edgebench.records.events import measured_steps, parse_events, steps_of
from edgebench.store import Store


@pytest.fixture(scope="module")
def module_cli(cli_factory):
    return cli_factory("infer-store")


@pytest.fixture(scope="module")
def store(module_cli):
    return module_cli.store_path


def run_json(cli, *args):
    return cli.json("run", "--json", *args, timeout=600)


@pytest.fixture(scope="module")
def inferred(module_cli):
    return run_json(module_cli, "-m", "lenet", "-b", "4", "--mode", "infer", "--steps", "4", "--warmup", "2")


def test_an_inference_trial_times_forward_passes_only(store, inferred):
    assert inferred["status"] == "ok" and inferred["trial"]["mode"] == "infer"
    assert (
        inferred["latency"]["step_ms"] == inferred["latency"]["infer_ms"] and inferred["latency"]["step_ms"]["n"] == 4
    )
    assert inferred["loss"] is None  # no training step ran
    assert inferred["memory"]["peak_bytes"] == inferred["memory"]["infer_peak_bytes"]
    with Store(store) as db:
        events = parse_events(db.series(inferred["trial_id"], "events"))
    assert len(steps_of(events, "infer_warmup")) == 2 and len(steps_of(events, "infer")) == 4
    assert not steps_of(events, "train") and not steps_of(events, "warmup")
    assert measured_steps(events) == steps_of(events, "infer")

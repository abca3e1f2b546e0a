"""Time to accuracy in-process: the shipped MNIST split and play text, the stop rule, the accuracy fields and
energy to accuracy from events.  The trials run by the command are in tests/e2e/cli/test_accuracy.py.
"""

import pytest
import torch

from edgebench.agents.python.stopping import UntilAccuracy
from edgebench.data.mnist import MNIST
from edgebench.data.text import SHAKESPEARE
from edgebench.measure.accuracy import accuracy_group
from edgebench.records.trial import Trial
from edgebench.workloads import get_workload


def test_mnist_split_is_fixed_stratified_and_real():
    data = MNIST.load()
    assert data.train_x.shape == (4000, 1, 28, 28) and data.test_x.shape == (1000, 1, 28, 28)
    assert torch.bincount(data.test_y).tolist() == [100] * 10
    again = MNIST.load()
    assert torch.equal(data.test_y, again.test_y) and torch.equal(data.test_x, again.test_x)
    assert abs(float(data.train_x.mean())) < 0.1  # standardised


def test_shipped_text_is_the_public_domain_play():
    text = SHAKESPEARE.read()
    assert 50_000 < len(text) < 1_000_000 and "MACBETH" in text and "Gutenberg" not in text
    data = SHAKESPEARE.load()
    assert len(data.alphabet) == len(set(text)) and len(data.test) == pytest.approx(0.1 * len(text), abs=2)


def test_rule_evaluates_every_n_steps_and_stops_at_the_target():
    scores = iter([0.3, 0.6, 0.9])
    seen = []
    rule = UntilAccuracy(0.85, lambda: next(scores), every=2, on_eval=lambda **e: seen.append(e))
    stops = [rule.check([1.0] * n) for n in range(7)]
    assert stops[:6] == [None] * 6 and stops[6].startswith("accuracy: 0.9000 >= 0.85 after 6 steps")
    assert [e["step"] for e in seen] == [2, 4, 6] and all(e["end_ns"] >= e["start_ns"] for e in seen)


def test_rule_gives_up_at_max_steps():
    rule = UntilAccuracy(0.99, lambda: 0.5, every=10, max_steps=3)
    assert rule.check([1.0] * 2) is None
    assert rule.check([1.0] * 3).startswith("max steps: 3 steps without reaching accuracy 0.99 (best 0.5000)")


def test_accuracy_fields_from_events():
    trial = Trial(model="lenet", data="mnist", until_accuracy=0.9, batch_size=4)
    ms = 1_000_000
    events = [
        {"event": "step", "phase": "warmup", "index": 0, "start_ns": 0, "end_ns": 10 * ms},
        *(
            {"event": "step", "phase": "train", "index": i - 1, "start_ns": i * 10 * ms, "end_ns": (i + 1) * 10 * ms}
            for i in range(1, 5)
        ),
        {"event": "eval", "step": 2, "accuracy": 0.5, "start_ns": 30 * ms, "end_ns": 35 * ms},
        {"event": "eval", "step": 4, "accuracy": 0.92, "start_ns": 55 * ms, "end_ns": 60 * ms},
    ]
    f = accuracy_group(trial, events)
    assert f.reached and f.steps == 5 and f.samples == 20
    assert f.time_s == pytest.approx(0.060) and f.eval_time_s == pytest.approx(0.010)
    assert f.energy_j is None  # left None until a power sensor exists: never invented
    assert [p.step for p in f.curve] == [3, 5]
    assert accuracy_group(trial, events[:-1]).reached is False


def test_char_model_learns_from_the_text():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    session = get_workload("char_cnn").session(8, input_shape=(32,), data="shakespeare")
    assert session.num_classes == len(SHAKESPEARE.load().alphabet)
    before = session.evaluate()
    for _ in range(30):
        session.train_step()
    assert session.evaluate() > before and session.model.training


def test_energy_to_accuracy_spans_first_step_to_the_reaching_evaluation():
    """10 W from the first step (1 s) until the evaluation that reached the target ends (4 s); 2 W idle before."""
    import numpy as np

    from edgebench.measure.accuracy import energy_to_accuracy_j
    from edgebench.records.sampling import SamplerMeta
    from edgebench.sensors.base import PowerChannel
    from edgebench.sensors.samples import Samples

    s = 1_000_000_000
    channel = PowerChannel("VDD_IN", "jetson_power", "total", power_column="vdd_in_power_mw")
    meta = SamplerMeta(interval_ms=500.0, columns=["vdd_in_power_mw"], sensors=[], unavailable={},
                       power_channels=[channel.__dict__])  # fmt: skip
    t = np.arange(0, 5.5, 0.5)
    power_mw = np.where((t >= 1) & (t <= 4), 10_000.0, 2_000.0)
    samples = Samples((t * s).astype(np.int64), {"vdd_in_power_mw": power_mw}, meta)
    trial = Trial(model="lenet", data="mnist", until_accuracy=0.9, batch_size=4)
    events = [
        {"event": "idle", "start_ns": 0, "end_ns": int(0.5 * s), "seconds": 0.5},
        {"event": "step", "phase": "warmup", "index": 0, "start_ns": 1 * s, "end_ns": int(1.5 * s)},
        {"event": "step", "phase": "train", "index": 0, "start_ns": int(1.5 * s), "end_ns": 3 * s},
        {"event": "eval", "step": 1, "accuracy": 0.95, "start_ns": 3 * s, "end_ns": 4 * s},
    ]
    # gross 3 s x 10 W = 30 J, minus the 2 W idle baseline over the same 3 s
    assert energy_to_accuracy_j(trial, events, samples) == pytest.approx(30.0 - 6.0)
    assert energy_to_accuracy_j(trial, events[:-1], samples) is None  # the target was never reached

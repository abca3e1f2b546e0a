"""The held-out loss rule: scored every N measured steps and when the phase ends, or until a target bits per byte."""

from __future__ import annotations

from edgebench.agents.python.stopping import HeldOutLoss, train_rule
from edgebench.records.trial import Trial


def scores(values):
    it = iter(values)
    return lambda: {"bits_per_byte": next(it), "loss_nats_per_token": 1.0, "accuracy": 0.5}


def run(rule, limit=50):
    durations: list[float] = []
    while (reason := rule.check(durations)) is None and len(durations) < limit:
        durations.append(1.0)
    return reason, len(durations)


def test_without_a_target_it_scores_every_n_steps_and_at_the_end_of_the_fixed_steps():
    seen = []
    rule = train_rule(
        Trial(model="lm_1m", data="shakespeare", steps=7, eval_every=3),
        held_out=scores([5.0, 4.0, 3.0]),
        on_eval=lambda **e: seen.append(e["step"]),
    )
    reason, n = run(rule)
    assert (reason, n) == ("fixed: 7 steps", 7) and seen == [3, 6, 7]


def test_with_a_target_it_stops_once_reached_and_the_unigram_target_is_the_text_s():
    trial = Trial(model="lm_1m", data="shakespeare", until_bits_per_byte="unigram", eval_every=2)
    rule = train_rule(trial, held_out=scores([6.0, 4.9, 4.7]), unigram_bits_per_byte=4.8)
    reason, n = run(rule)
    assert n == 6 and reason == "bits per byte: 4.700 <= 4.800 after 6 steps"
    capped = HeldOutLoss(scores([9.0, 9.0]), 2, target=1.0, max_steps=3)
    reason, n = run(capped)
    assert n == 3 and reason.startswith("max steps: 3 steps without reaching 1.000")

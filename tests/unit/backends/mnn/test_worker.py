"""The MNN worker measures MNN alone: torch builds and exports the model in a child process, and the worker, which
never imports torch, trains on the same batch at every step as the torch trial does.  Also: where the trial's cores
reach MNN (its ``CPU_CORE_IDS`` hint) and where only the process affinity applies.
"""

from __future__ import annotations


def test_orders_cover_the_steps_a_trial_may_take():
    from edgebench.backends.mnn.prepare import UNBOUNDED_EPOCHS
    from edgebench.backends.prepare_child import steps_drawn
    from edgebench.records.trial import Trial

    base = {"model": "lenet", "backend": "mnn", "data": "mnist", "warmup": 3}
    assert steps_drawn(Trial(**base, steps=20)) == 23
    assert steps_drawn(Trial(**base, target_ci_pct=2.0)) == 3 + 2000
    assert steps_drawn(Trial(**base, until_accuracy=0.9, max_steps=500)) == 503
    assert steps_drawn(Trial(**base, until_accuracy=0.9)) is None and UNBOUNDED_EPOCHS >= 50


# -- cores ------------------------------------------------------------------------------------------------------


def test_cpu_groups_are_read_from_mnns_import_lines():
    from edgebench.backends.mnn.runtime import cpu_groups

    text = (
        "CPU Group: [ 0  1  2  3 ], 300000 - 1804800\nCPU Group: [ 4  5  6 ], 710400 - 2419200\n"
        "CPU Group: [ 7 ], 844800 - 2841600\nThe device supports: i8sdot:1, fp16:1, i8mm: 0, sve2: 0, sme2: 0\n"
    )
    assert cpu_groups(text) == [[0, 1, 2, 3], [4, 5, 6], [7]]
    assert cpu_groups("The device supports: i8sdot:0, fp16:0, i8mm: 0, sve2: 0, sme2: 0\n") == []


def test_core_hint_says_what_decides_where_mnns_threads_run():
    from edgebench.backends.mnn.runtime import core_hint

    phone = [[0, 1, 2, 3], [4, 5, 6], [7]]
    assert core_hint((5, 4), phone, "infer") == (
        [4, 5],
        "CPU_CORE_IDS hint [4, 5] (Interpreter.setSessionHint) and process affinity",
    )
    hint, note = core_hint((3, 4), phone, "infer")  # MNN never mixes clusters: it drops the hint
    assert hint == [3, 4] and note.startswith("process affinity") and "spanning" in note
    hint, note = core_hint((0,), [], "infer")
    assert hint == [0] and note.startswith("process affinity") and "cpufreq" in note
    assert core_hint((4, 5), phone, "train")[0] is None and "no core hint" in core_hint((4, 5), phone, "train")[1]
    assert core_hint(None, phone, "infer") == (None, "process affinity (the trial names no cores)")

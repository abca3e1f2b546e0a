"""One finished-trial record: the store, the rescue file and the fleet's reply carry the same thing, and a stored trial
can be measured again.  The end-to-end half: what runs the real command, a real worker or another process; the rest
is in tests/unit/records/test_finished_trial.py.
"""

from __future__ import annotations

import json

from edgebench.store import Store
from tests.factories import finished


def test_show_remeasure_measures_a_stored_trial_again_and_refuses_one_without_its_run(cli, tmp_path):
    """`show --remeasure`: the stored trial's figures as this edgebench measures its kept events and samples."""
    proc = cli("run", "--steps", "3", "--warmup", "1", "--infer-steps", "0", "--json")
    assert proc.returncode == 0, proc.stderr
    stored = json.loads(proc.stdout)
    again = cli("show", stored["trial_id"][:15], "--remeasure", "--json")
    assert again.returncode == 0, again.stderr
    remeasured = json.loads(again.stdout)
    assert remeasured["trial_id"] == stored["trial_id"]
    assert remeasured["latency"]["step_ms"] == stored["latency"]["step_ms"]
    assert remeasured["cpu"]["process_pct"] == stored["cpu"]["process_pct"]
    with Store(cli.store_path) as store:  # a trial stored before the record kept its run
        store.save(finished().result)
    old = cli("show", finished().trial_id, "--remeasure")
    assert old.returncode == 2 and len(old.stderr.strip().splitlines()) == 1
    assert "--remeasure: trial" in old.stderr and "cannot be measured again" in old.stderr

"""A trial run in-process through the workflow (the launch path's real worker and sampler, on the fake backend):
its result stored (or rescued) before it is handed over, so that what the caller does with it cannot lose it; with
``no_store``, kept nowhere.  The command around it is
tested in tests/e2e/cli/test_run.py."""

from __future__ import annotations

from edgebench.store import Store
from edgebench.workflows.trial import TrialRequest, run_trial

SETTINGS = {"model": "lenet", "backend": "fake", "steps": 3, "warmup": 1, "infer_steps": 0, "idle_s": 0}


def test_the_result_is_stored_before_it_is_handed_over(tmp_path):
    store = tmp_path / "store.sqlite"
    seen = []

    def on_result(result) -> None:
        with Store(store, read_only=True) as db:
            seen.append((result.trial_id, db.trial_ids("")))

    run = run_trial(TrialRequest({**SETTINGS, "threads": 1}, store=store), on_result=on_result)
    assert run.result.ok and run.result.trial.threads == 1
    assert seen == [(run.result.trial_id, [run.result.trial_id])]  # already kept when the caller saw it
    assert run.store == store and not run.spans_not_kept
    with Store(store, read_only=True) as db:
        assert db.get(run.result.trial_id).trial_id == run.result.trial_id


def test_no_store_keeps_nothing_and_tells_nothing_it_need_not(tmp_path):
    lines: list[str] = []
    run = run_trial(TrialRequest(SETTINGS, store=tmp_path / "store.sqlite", no_store=True), notify=lines.append)
    assert run.result.ok and run.store is None
    assert not (tmp_path / "store.sqlite").exists()
    assert not [line for line in lines if line.startswith("edgebench: warning")]

"""The fake backend (``--backend fake``): a real plugin whose steps take a set time and may fail at a set step,
importing no framework, so the sweep's resume and failure paths run end to end in seconds.  Where a test is about a
framework (torch, MNN, ONNX Runtime) it keeps running that framework; this is for what surrounds a backend.  The
end-to-end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/backends/fake/test_fake.py.
"""

from __future__ import annotations

import signal

from edgebench.backends.fake.session import FAIL_AT_ENV, STEP_MS_ENV
from edgebench.store import Store
from tests.sweeping import start_sweep, stored_keys, wait_for

#: A 2 x 3 grid of fake trials: 4 measured steps of 30 ms after 1 warm-up, no idle baseline, no inference passes.
GRID = """\
models: [lenet, squeezenet]
batch_sizes: [1, 2, 4]
backend: fake
steps: 4
warmup: 1
infer_steps: 0
idle: 0
"""


def test_a_sweep_interrupted_killed_failing_and_resumed_stores_every_trial_once(tmp_path, cli, monkeypatch):
    """The resume path of test_cli_sweep, on fake trials: Ctrl-C, then SIGKILL, then failing trials retried."""
    monkeypatch.setenv(STEP_MS_ENV, "30")
    config = tmp_path / "grid.yaml"
    config.write_text(GRID)
    store = cli.store_path

    proc = start_sweep(cli, str(config))  # Ctrl-C after two trials: exit 130, both kept
    wait_for(store, 2, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    first = stored_keys(store)
    assert 2 <= len(first) < 6

    proc = start_sweep(cli, str(config), "--resume")  # one more, then SIGKILL: no cleanup runs
    wait_for(store, len(first) + 1, proc)
    proc.kill()
    proc.communicate(timeout=60)
    second = stored_keys(store)
    assert second[: len(first)] == first

    monkeypatch.setenv(FAIL_AT_ENV, "3")  # the rest crash at their third measured step
    proc = cli("sweep", str(config), "--resume")
    failed = 6 - len(second)
    assert proc.returncode == 1, proc.stderr  # trials failed: stored with their reason, and said so
    assert proc.stderr == f"edgebench: error: {failed} of {failed} trials failed (stored with their reason)\n"
    assert f"{len(second)} already stored" in proc.stdout
    keys = stored_keys(store)
    assert keys[: len(second)] == second and len(keys) == len(set(keys)) == 6
    with Store(store) as db:
        crashed = [r for r in db.trials() if not r.ok]
    assert len(crashed) == 6 - len(second) and all(r.status == "crashed" for r in crashed)
    assert all("fails at step 3" in r.reason for r in crashed)

    monkeypatch.delenv(FAIL_AT_ENV)  # retried: only the failed ones run again, and now pass
    proc = cli("sweep", str(config), "--resume", "--retry-failed")
    assert proc.returncode == 0, proc.stderr
    with Store(store) as db:
        (sweep_id,) = db.sweep_ids()
        latest = db.query(sweep_id=sweep_id)
    ok = [r for r in latest if r.ok]  # the crashed records stay, as what happened; each key now has an ok one
    assert len(latest) == 6 + failed and len(ok) == 6 and all(r.trial.backend == "fake" for r in ok)
    assert {(r.trial.model, r.trial.batch_size) for r in ok} == {
        (m, b) for m in ("lenet", "squeezenet") for b in (1, 2, 4)
    }
    assert all(r.latency.measured_steps == 4 and r.latency.step_ms.median >= 30 for r in ok)

"""The MNN worker measures MNN alone: torch builds and exports the model in a child process, and the worker, which
never imports torch, trains on the same batch at every step as the torch trial does.  Also: where the trial's cores
reach MNN (its ``CPU_CORE_IDS`` hint) and where only the process affinity applies.  The end-to-end half: what runs
the real command, a real worker or another process; the rest is in tests/unit/backends/mnn/test_worker.py.
"""

from __future__ import annotations

import json

from tests.conftest import require_mnn


def test_a_run_records_that_its_worker_had_no_torch(cli):
    require_mnn()
    run = cli("run", "--backend", "mnn", "--model", "lenet", "--steps", "2", "--warmup", "1", "-b", "4", "--json")
    assert run.returncode == 0, run.stderr[-2000:]
    record = json.loads(run.stdout)
    env = record["device"]["extra"]
    assert env["mnn_worker_imported_torch"] is False and "child process" in env["mnn_prepared_in"]
    cold = record["cold_start"]  # the load is the trainable module's, not the child's conversion
    assert cold["model_load_what"].startswith("mnn: the converted graph") and cold["model_load_s"] > 0
    assert cold["first_step_mode"] == "train" and cold["first_step_counted_as"] == "warmup"

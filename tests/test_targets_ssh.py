"""Remote targets over a real OpenSSH server on 127.0.0.1 (started by the tests): edgebench's own trials run by the
far side's agent, the device's files read and written through the shell, a dropped connection mid-trial."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from edgebench.errors import UsageError
from edgebench.runner.launch import run_trial
from edgebench.targets import open_target
from edgebench.targets.named import TargetConfig
from edgebench.trial import Trial
from tests.sshd import sshd  # noqa: F401  (the session fixture)

FIXTURES = Path(__file__).parent / "fixtures" / "sysfs"


def _open(server, tmp_path: Path, **extra):
    config = TargetConfig(name="board", **server.target_config(tmp_path / "work", **extra))
    return open_target("board", named={"board": config})


def _tiny(**extra) -> Trial:
    return Trial(model="lenet", batch_size=4, steps=3, warmup=1, infer_steps=0, idle_s=0, **extra)


def test_trial_runs_on_the_far_side_through_its_agent(sshd, tmp_path):  # noqa: F811
    target = _open(sshd, tmp_path)
    run = run_trial(_tiny(), target=target)
    assert run.result.ok, run.result.reason
    assert run.result.target == "board"
    assert run.result.steps == 3
    assert run.samples_csv  # the far side's sampler ran
    assert not list((tmp_path / "work").glob("session-*"))  # the session folder is gone on the device


def test_unreachable_and_refused_are_one_line(sshd, tmp_path):  # noqa: F811
    with pytest.raises(UsageError, match="cannot reach"):
        open_target("ssh://127.0.0.1:1", named={})
    config = TargetConfig(name="b", **{**sshd.target_config(tmp_path), "ssh_options": ["IdentityFile=/dev/null"]})
    # the right key is still offered by the config file, so refuse through a user the server does not know
    refused = config.model_copy(update={"url": "ssh://nosuchuser@edgebench-test-board"})
    with pytest.raises(UsageError, match="refused the key"):
        open_target("b", named={"b": refused})

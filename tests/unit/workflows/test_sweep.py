"""A sweep planned before it runs (what ``--dry-run`` prints), the targets axis, and the command that resumes it."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from edgebench.errors import UsageError
from edgebench.workflows.sweep import SweepRequest, axis_sweep_name, plan_sweep


def test_a_sweep_of_overrides_is_planned_on_this_machine():
    planned = plan_sweep(SweepRequest(overrides=("models=[lenet]", "batch_sizes=[1,2]", "backend=fake", "steps=2")))
    assert planned.each_target == []
    [leg] = planned.legs
    assert leg.target == "local"
    assert [p.trial.batch_size for p in leg.plan.trials] == [1, 2]
    assert {p.trial.backend for p in leg.plan.trials} == {"fake"}
    assert planned.device is not None and planned.target_field == "--target"


def test_target_ci_is_an_override_and_the_resume_command_keeps_every_one():
    overrides = ("models=[lenet]", "batch_sizes=[1, 2]")
    request = SweepRequest(Path("my sweep.yaml"), overrides, target_ci="2%", store=Path("/tmp/s.sqlite"),
                           executor="ray", address="auto", target="ssh://pi", root=True)  # fmt: skip
    assert request.all_overrides == ["models=[lenet]", "batch_sizes=[1, 2]", "target_ci=2%"]
    words = shlex.split(request.resume_command())
    assert words[:3] == ["edgebench", "sweep", "my sweep.yaml"]
    assert words.count("--set") == 2 and "batch_sizes=[1, 2]" in words
    for flag, value in (("--target-ci", "2%"), ("--store", "/tmp/s.sqlite"), ("--executor", "ray"),
                        ("--address", "auto"), ("--target", "ssh://pi")):  # fmt: skip
        assert words[words.index(flag) + 1] == value
    assert words[-2:] == ["--root", "--resume"]


def test_a_targets_axis_on_this_machine_is_one_sweep_process_per_target():
    planned = plan_sweep(SweepRequest(overrides=("models=[lenet]", "targets=[local, ssh://pi]", "name=two")))
    assert planned.legs == [] and planned.each_target == ["local", "ssh://pi"]
    assert axis_sweep_name("two", "ssh://pi") == "two-ssh_pi"


def test_an_unknown_executor_is_refused_before_the_configuration_is_read():
    with pytest.raises(UsageError) as caught:
        plan_sweep(SweepRequest(Path("/no/such/file.yaml"), executor="slurm"))
    assert caught.value.field == "--executor"


def test_a_planning_error_names_the_key_as_the_user_wrote_it():
    with pytest.raises(UsageError) as caught:
        plan_sweep(SweepRequest(overrides=("models=[lenet]", "cores=[0x100]")))
    assert caught.value.field.startswith("--set cores")

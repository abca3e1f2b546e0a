"""``feasibility`` and ``frameworks`` are plans run through the launch path: they take the device as ``run`` and
``sweep`` do (target, core roles, frequency, timeout from the settings' declaration), cool down and resume."""

from __future__ import annotations

import re

import pytest

from edgebench.cli.plans import PlanFlags
from edgebench.errors import UsageError
from edgebench.host.sysfs import SysFS
from edgebench.store import Store
from tests.conftest import json_out


class PhoneTarget:
    """The Meizu 16T's tree (4 little + 3 big + 1 prime core), every core usable: only what planning reads."""

    name = "phone"

    def __init__(self, root) -> None:
        self.root = root

    def sysfs(self) -> SysFS:
        return SysFS(self.root)

    def allowed_cores(self) -> tuple[int, ...]:
        return tuple(range(8))


def flags(**given) -> PlanFlags:
    values = dict(target=None, root=False, cores=None, frequency=None, threads=None, timeout=None, cooldown=None,
                  resume=False, store=None, no_store=False)  # fmt: skip
    return PlanFlags(**{**values, **given})


def test_core_roles_frequency_and_timeout_read_as_run_reads_them(sysfs_tree):
    phone = PhoneTarget(sysfs_tree("sm8150_meizu16t"))
    assert flags(cores="big").trial_values(phone)["cores"] == (4, 5, 6, 7)
    assert flags(cores="little").trial_values(phone)["cores"] == (0, 1, 2, 3)
    assert flags(cores="f0").trial_values(phone)["cores_mask"] == "f0"
    assert flags(cores="all").trial_values(phone) == {"cores": None}
    values = flags(frequency="1.7GHz", threads="2", timeout="5m").trial_values(phone)
    assert values == {"freq_khz": 1_700_000, "threads": 2, "timeout_s": 300.0}


@pytest.mark.parametrize(
    ("given", "flag"),
    [({"cores": "medium"}, "--cores"), ({"frequency": "all"}, "--frequency"), ({"timeout": "soon"}, "--timeout"),
     ({"threads": "many"}, "--threads")],
)  # fmt: skip
def test_bad_shared_flags_name_the_flag(sysfs_tree, given, flag):
    with pytest.raises(UsageError) as caught:
        flags(**given).trial_values(PhoneTarget(sysfs_tree("sm8150_meizu16t")))
    assert caught.value.field == flag


def _default_timeout(cli, command):
    proc = cli(command, "--help")
    text = re.sub(r"\s+", " ", proc.stdout)
    return re.search(r"--timeout <str> .*?\[default: ([^\]]+)\]", text).group(1)


def test_every_command_has_the_same_timeout_default(cli):
    assert _default_timeout(cli, "feasibility") == _default_timeout(cli, "frameworks") == _default_timeout(cli, "run")


def test_feasibility_takes_the_target_and_cores_flags(cli):
    proc = cli("feasibility", "-m", "lenet", "--memory-budget", "1GiB", "--target", "nosuch-device")
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --target: "), proc.stderr
    proc = cli("frameworks", "--models", "lenet", "--cores", "medium")
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --cores: "), proc.stderr
    proc = cli("feasibility", "-m", "lenet", "--memory-budget", "1GiB", "--cooldown", "warm")
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --cooldown: "), proc.stderr
    proc = cli("frameworks", "--models", "lenet", "--resume", "--no-store")
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --resume: "), proc.stderr


FEASIBILITY = ("feasibility", "-m", "lenet", "--memory-budget", "1GiB", "--batch-sizes", "1,2", "--target", "local",
               "--cores", "all", "--cooldown", "0.1s", "--json")  # fmt: skip


def test_feasibility_is_a_plan_that_resumes(cli):
    first = cli(*FEASIBILITY)
    assert first.returncode == 0, first.stderr
    assert [c["status"] for c in json_out(first)["models"][0]["cells"]] == ["ok", "ok"]
    with Store(cli.store_path) as store:
        (sweep_id,) = store.sweep_ids()
        assert sweep_id.startswith("feasibility-") and len(store.trials()) == 2
    again = cli(*FEASIBILITY, "--resume")  # nothing left to run: the table comes from the store
    assert again.returncode == 0, again.stderr
    assert "2 trials already stored" in again.stderr
    assert json_out(again)["models"] == json_out(first)["models"]
    with Store(cli.store_path) as store:
        assert len(store.trials()) == 2 and store.sweep_ids() == [sweep_id]
    fresh = cli(*FEASIBILITY)  # without --resume: a new run of the same plan, measured again
    assert fresh.returncode == 0, fresh.stderr
    with Store(cli.store_path) as store:
        assert len(store.trials()) == 4 and len(store.sweep_ids()) == 2


def test_frameworks_is_a_plan_that_resumes(cli):
    args = ("frameworks", "--models", "lenet", "--backends", "torch,tflite", "--precisions", "fp32", "--steps", "2",
            "--warmup", "0", "--cores", "all", "--json")  # fmt: skip
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    cells = {c["backend"]: c for c in json_out(first)["cells"]}
    assert (
        cells["torch"]["trial_id"]
        and cells["tflite"]["reason"] == "tflite is not a registered backend of this edgebench"
    )
    again = cli(*args, "--resume")
    assert again.returncode == 0, again.stderr
    assert {c["backend"]: c["trial_id"] for c in json_out(again)["cells"]}["torch"] == cells["torch"]["trial_id"]
    with Store(cli.store_path) as store:
        assert len(store.trials()) == 1


def test_frameworks_without_a_store_keeps_nothing(cli, tmp_path):
    args = ("frameworks", "--models", "lenet", "--backends", "torch", "--precisions", "fp32", "--steps", "1",
            "--warmup", "0", "--no-store", "--json")  # fmt: skip
    proc = cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert json_out(proc)["cells"][0]["trial_id"]
    assert not cli.store_path.exists()

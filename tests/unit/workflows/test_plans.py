"""The plan options of ``feasibility``, ``frameworks`` and the studies as a plan reads them on a fixture tree: core
roles, frequencies, timeouts, and bad flags named.  The plans run by the commands are in tests/e2e/cli/test_plans.py.
"""

from __future__ import annotations

import pytest

from edgebench.errors import UsageError
from edgebench.host.sysfs import SysFS
from edgebench.workflows.plans import PlanOptions


class PhoneTarget:
    """The Meizu 16T's tree (4 little + 3 big + 1 prime core), every core usable: only what planning reads."""

    name = "phone"

    def __init__(self, root) -> None:
        self.root = root

    def sysfs(self) -> SysFS:
        return SysFS(self.root)

    def allowed_cores(self) -> tuple[int, ...]:
        return tuple(range(8))


def flags(**given) -> PlanOptions:
    values = dict(target=None, root=False, cores=None, frequency=None, threads=None, timeout=None, cooldown=None,
                  resume=False, store=None, no_store=False)  # fmt: skip
    return PlanOptions(**{**values, **given})


def test_core_roles_frequency_and_timeout_read_as_run_reads_them(sysfs_tree):
    phone = PhoneTarget(sysfs_tree("sm8150_meizu16t"))
    assert flags(cores="big").trial_values(phone)["cores"] == (4, 5, 6, 7)
    assert flags(cores="little").trial_values(phone)["cores"] == (0, 1, 2, 3)
    assert flags(cores="f0").trial_values(phone)["cores_mask"] == "f0"
    assert flags(cores="all").trial_values(phone) == {"cores": None}
    values = flags(frequency="1.7GHz", threads="2", timeout="5m").trial_values(phone)
    assert values == {"freq_khz": 1_700_000, "threads": 2, "timeout_s": 300.0}
    assert flags(repeats="5").trial_values(phone) == {"repeats": 5}
    assert flags(repeats="auto").trial_values(phone) == {"repeats": "auto"}


@pytest.mark.parametrize(
    ("given", "flag"),
    [({"cores": "medium"}, "--cores"), ({"frequency": "all"}, "--frequency"), ({"timeout": "soon"}, "--timeout"),
     ({"threads": "many"}, "--threads"), ({"repeats": "0"}, "--repeats"), ({"repeats": "lots"}, "--repeats")],
)  # fmt: skip
def test_bad_shared_flags_name_the_flag(sysfs_tree, given, flag):
    with pytest.raises(UsageError) as caught:
        flags(**given).trial_values(PhoneTarget(sysfs_tree("sm8150_meizu16t")))
    assert caught.value.field == flag


def test_feasibility_refuses_repeats_before_anything_runs(tmp_path):
    """Whether a batch fits the memory budget is one trial's answer; its plan runs batch sizes in order."""
    from edgebench.workflows.feasibility import FeasibilityRequest, run_feasibility

    request = FeasibilityRequest(memory_budget="1GiB", models=["lenet"], batch_sizes="1",
                                 options=flags(repeats="3", store=tmp_path / "s.sqlite"))  # fmt: skip
    with pytest.raises(UsageError) as caught:
        run_feasibility(request)
    assert caught.value.field == "--repeats" and not (tmp_path / "s.sqlite").exists()

"""A trial's request checked before anything runs: settings read as the flags are, the device's core roles, and the
placement refused on a device that lacks it (trials that run: tests/e2e/workflows/test_trial.py)."""

from __future__ import annotations

import pytest

from edgebench.errors import UsageError
from edgebench.workflows.common import placed
from edgebench.workflows.feasibility import batch_sizes
from edgebench.workflows.trial import TrialRequest, run_trial


@pytest.mark.parametrize(
    ("settings", "flag"),
    [({"model": "no_such_model"}, "--model"), ({"freq_khz": "all"}, "--frequency"), ({"steps": 0}, "--steps"),
     ({"cores": (0, 999)}, "--cores"), ({"backend": "mace"}, "--backend")],
)  # fmt: skip
def test_a_bad_setting_is_refused_before_the_store_is_opened(tmp_path, settings, flag):
    store = tmp_path / "store.sqlite"
    with pytest.raises(UsageError) as caught:
        run_trial(TrialRequest({"backend": "fake", **settings}, store=store))
    assert caught.value.field == flag
    assert not store.exists()


class TwoClusters:
    """A device of two cpufreq clusters, as ``placed`` asks of it."""

    def __init__(self, root) -> None:
        from edgebench.host.sysfs import SysFS

        self._sysfs = SysFS(root)

    def sysfs(self):
        return self._sysfs

    def allowed_cores(self) -> tuple[int, ...]:
        return tuple(range(8))


def test_a_core_role_is_the_device_s_cluster(sysfs_tree):
    phone = TwoClusters(sysfs_tree("sm8150_meizu16t"))
    assert placed({"cores": "little", "model": "lenet"}, phone) == {"cores": (0, 1, 2, 3), "model": "lenet"}


def test_batch_sizes_are_sorted_distinct_and_whole():
    assert batch_sizes("8, 1,2,8") == (1, 2, 8)
    for text in ("1,two", "0,1", ","):
        with pytest.raises(ValueError):
            batch_sizes(text)

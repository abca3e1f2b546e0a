"""The device's peaks as `layers` and `peak` keep them: a figure measured on a busy device is stored flagged and
measured again when next asked for, the best of each ceiling kept; the micro-benchmark itself is stubbed here."""

from __future__ import annotations

import socket

from edgebench.backends.torch import peak as torch_peak
from edgebench.backends.torch.peak import DevicePeak, best_of
from edgebench.host.environment import allowed_cores
from edgebench.workflows.peak import peak_for_trial, trial_peak_key
from tests.factories import result


class Peaks:
    """The store's two calls the peaks use."""

    def __init__(self) -> None:
        self.kept: dict[str, dict] = {}

    def device_peak(self, key: str) -> dict | None:
        return self.kept.get(key)

    def save_device_peak(self, peak: dict) -> None:
        self.kept[peak["key"]] = peak


def figure(copy_gbps: float, busy: str | None) -> DevicePeak:
    return DevicePeak(key="k", hostname=socket.gethostname(), cpu_model=None, cores="0", threads=1, torch="t",
                      gemm_gflops=50.0, gemm_size=512, copy_gbps=copy_gbps, copy_bytes=1, measured_at="now",
                      run_queue_wait_pct=60.0 if busy else 1.0, busy=busy)  # fmt: skip


def test_a_busy_peak_is_flagged_measured_again_and_replaced_by_a_quiet_one(monkeypatch):
    """Recorded: `layers` measured the peak on a busy machine and stored 3.6 GB/s copy bandwidth for good (`peak
    --refresh` later: 96.7 GB/s), so every block read memory-bound."""
    measured = [figure(3.6, "device busy: its threads waited for a CPU 60% of the time they were runnable"),
                figure(96.7, None)]  # fmt: skip
    monkeypatch.setattr(torch_peak, "measure", lambda cores, threads: measured.pop(0))
    core = sorted(allowed_cores())[0]
    r = result("20260101-000001-aaaa0001", [5.0, 5.1], cores=(core,), threads=1,
               env={"hostname": socket.gethostname()})  # fmt: skip
    store, said = Peaks(), []
    first = peak_for_trial(store, r, notify=said.append)
    assert first["copy_gbps"] == 3.6 and first["busy"] and store.kept[trial_peak_key(r)]["busy"]
    assert any("measured on a busy device" in line and "--refresh" in line for line in said)
    again = peak_for_trial(store, r, notify=said.append)  # flagged: measured again, not reused for good
    assert again["copy_gbps"] == 96.7 and again["busy"] is None and not measured
    assert peak_for_trial(store, r) == again  # quiet: reused


def test_of_two_busy_measurements_each_ceiling_is_the_higher():
    stored = {**figure(3.6, "busy").to_dict(), "gemm_gflops": 80.0}
    kept = best_of(stored, figure(20.0, "busy").to_dict())
    assert (kept["gemm_gflops"], kept["copy_gbps"], kept["busy"]) == (80.0, 20.0, "busy")

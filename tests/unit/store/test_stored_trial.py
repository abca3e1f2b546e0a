"""A stored trial reads back with everything the views need: samples with their power channels and labels."""

import numpy as np
import pytest

from edgebench.errors import UsageError
from edgebench.records.finished import FinishedTrial
from edgebench.records.result import TrialResult, stored_trial
from edgebench.records.sampling import SamplerMeta
from edgebench.sensors.base import PowerChannel
from edgebench.store import Store
from edgebench.store.trials import load_trial, power_series

VDD_IN = PowerChannel("VDD_IN", "jetson_power", "total", power_column="vdd_in_power_mw")


def stored(tmp_path, with_meta: bool):
    meta = SamplerMeta(interval_ms=10, columns=["vdd_in_power_mw", "temp_cpu_mc"], sensors=["jetson_power"],
                       unavailable={}, labels={"temp_cpu_mc": "CPU-therm (thermal_zone1)"},
                       power_channels=[VDD_IN.__dict__])  # fmt: skip
    trial = stored_trial({"model": "lenet", "batch_size": 2, "threads": 1, "cores": [0], "steps": 1, "warmup": 0})
    result = TrialResult(trial_id="20260101-000000-abcd", status="ok", trial=trial)
    csv = "t_ns,vdd_in_power_mw,temp_cpu_mc\n0,4000,41000\n10000000,6000,41500\n"
    run = FinishedTrial(result=result, events=[{"event": "ready", "pid": 1}], samples_csv=csv,
                        sampler_meta=meta if with_meta else None)  # fmt: skip
    with Store(tmp_path / "s.sqlite") as store:
        store.save(result, run.series())
    return load_trial(tmp_path / "s.sqlite", "20260101")


def test_samples_come_back_with_their_power_channels_and_labels(tmp_path):
    trial = stored(tmp_path, with_meta=True)
    assert trial.samples.labels == {"temp_cpu_mc": "CPU-therm (thermal_zone1)"}
    power = power_series(trial, None)
    assert "VDD_IN" in power.source and np.allclose(power.watts, [4.0, 6.0])
    assert power_series(trial, "VDD_IN").watts.tolist() == [4.0, 6.0]
    with pytest.raises(UsageError, match="channels: VDD_IN"):
        power_series(trial, "VDD_GPU")


def test_a_trial_stored_without_meta_has_no_power_rather_than_a_guess(tmp_path):
    trial = stored(tmp_path, with_meta=False)
    assert power_series(trial, None) is None

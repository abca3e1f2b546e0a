"""Android's thermal status from ``dumpsys thermalservice``, parsed from AOSP's dump format (the fixture follows
``ThermalManagerService.dump`` and ``android.os.Temperature.toString`` line for line)."""

from __future__ import annotations

from edgebench.measure.hygiene import warning_line
from edgebench.records.result import Hygiene
from edgebench.sensors.android_thermal import parse_thermalservice, status_name
from tests.paths import FIXTURES

DUMP = (FIXTURES / "android" / "thermalservice_moderate.txt").read_text()


def test_the_status_and_the_hals_current_temperatures_are_read():
    parsed = parse_thermalservice(DUMP)
    assert parsed is not None and parsed.status == 2 and status_name(2) == "moderate"
    # the HAL's current readings, not the cached ones (which hold only the sensors that changed status)
    assert parsed.temperatures_c == {"BIG": 68.5, "LITTLE": 55.1, "battery": 33.0, "VIRTUAL-SKIN": 41.2}


def test_no_status_is_never_read_as_none_throttling():
    before_hal = DUMP.replace("Thermal Status: 2", "Thermal Status: -2147483648")  # Integer.MIN_VALUE, HAL not ready
    parsed = parse_thermalservice(before_hal)
    assert parsed is not None and parsed.status is None
    assert parse_thermalservice("Can't find service: thermalservice\n") is None  # before Android 10
    assert parse_thermalservice("") is None


def test_moderate_or_worse_at_either_end_is_a_warning_light_is_not():
    assert warning_line(Hygiene(thermal_status_start=1, thermal_status_end=1), []) is None
    line = warning_line(Hygiene(thermal_status_start=0, thermal_status_end=3), [])
    assert line == "the phone reported thermal status 3 (severe) at the trial's end: it throttles"

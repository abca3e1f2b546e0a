"""The thermal status an Android phone reports: ``dumpsys thermalservice`` (Android 10 and later).

Android's ThermalManagerService keeps one status for the whole device, the most severe of its thermal HAL's
sensors, and the framework (and apps through ``PowerManager.getCurrentThermalStatus``) throttles on it.  Its dump
prints it as ``Thermal Status: N`` (AOSP ``ThermalManagerService.java``, ``dump``), followed by the HAL's readings
as ``Temperature{mValue=38.5, mType=0, mName=cpu0, mStatus=0}`` (``android.os.Temperature.toString``).  The codes
are ``PowerManager.THERMAL_STATUS_*``: 0 none, 1 light, 2 moderate, 3 severe, 4 critical, 5 emergency, 6 shutdown.
Before the HAL is connected the service holds ``Integer.MIN_VALUE`` (no status); a phone older than Android 10 has
no such service (``Can't find service: thermalservice``).  Either reads as None here, never as 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: ``PowerManager.THERMAL_STATUS_*``, by code.
STATUS_NAMES = ("none", "light", "moderate", "severe", "critical", "emergency", "shutdown")
#: From this status on the platform throttles noticeably ("moderate: UX is not largely impacted", the first level
#: at which Android's own guidance tells apps to cut their work).
THROTTLING_STATUS = 2
#: Where a device's shell runs it: the command and the longest it may take (a busy phone's system_server).
COMMAND = "dumpsys thermalservice"
TIMEOUT_S = 20.0

#: Where the launcher puts the two readings in the bundle's environment (the trial's start and end), for measuring.
ENV_START = "android_thermal_status_start"
ENV_END = "android_thermal_status_end"

_STATUS = re.compile(r"^Thermal Status: (-?\d+)\s*$", re.MULTILINE)
_TEMPERATURE = re.compile(r"Temperature\{mValue=([-\d.eE]+|NaN), mType=(-?\d+), mName=([^,]*), mStatus=(-?\d+)\}")


@dataclass(frozen=True)
class ThermalService:
    """One dump: the device's status (None: not reported) and the HAL's current temperatures (°C) by sensor."""

    status: int | None
    temperatures_c: dict[str, float] = field(default_factory=dict)


def status_name(status: int) -> str:
    return STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else f"code {status}"


def parse_thermalservice(text: str) -> ThermalService | None:
    """The dump's status and the HAL's current temperatures; None where the text is not a thermal service's dump
    (no ``Thermal Status:`` line: an old phone, a refused permission)."""
    found = _STATUS.search(text)
    if found is None:
        return None
    code = int(found.group(1))
    status = code if 0 <= code < len(STATUS_NAMES) else None
    current = text.split("Current temperatures from HAL:", 1)
    section = current[1].split("Current cooling devices", 1)[0] if len(current) == 2 else text
    temperatures = {m.group(3): float(m.group(1)) for m in _TEMPERATURE.finditer(section) if m.group(1) != "NaN"}
    return ThermalService(status=status, temperatures_c=temperatures)

"""Battery and USB power of phones (and laptop batteries) from ``/sys/class/power_supply``.

What the MNN-based suite read on Android, with units and signs made the same on every vendor:

* Units.  ``current_now`` is in uA and ``voltage_now`` in uV by the kernel's ABI, but some vendor kernels report mA
  and mV.  A voltage below 100 000 cannot be uV for a battery (0.1 V), so it is read as mV.  A current is read as
  mA when, with the battery discharging at start-up, it is below 10 000: no phone running a benchmark draws less
  than 10 mA, nor 10 A.  ``power_now`` (laptops) is in uW.
* Sign.  Drivers disagree (negative while discharging, positive while discharging, or never negative; see the
  kernel's power-supply ABI), so the raw sign is ignored.  The direction comes from ``status``: ``Discharging``
  means current leaves the battery, ``Charging`` that it enters; for ``Full``, ``Not charging`` or ``Unknown`` it
  enters when an external supply is online and leaves otherwise.  ``battery_current_ua`` and ``battery_power_mw``
  are positive when the battery feeds the device.
* Charging.  With USB or a charger online the battery's readings are the charge current, not what the device uses.
  The device then draws ``usb_power_mw`` (the USB input, ``input_current_now`` x ``voltage_now``) plus
  ``battery_power_mw`` (negative while charging).  Where the USB input cannot be read, ``device_power_mw`` is left
  empty instead of guessed, and ``external_power_online`` says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import Availability, PowerChannel, Reading, Sensor, Source, int_or_none, missing, readable

_SUPPLY = "/sys/class/power_supply"
_MA_BELOW = 10_000
_MV_BELOW = 100_000


@dataclass(frozen=True)
class Supplies:
    battery: str | None
    #: ``online`` files of every external supply (USB, Mains, Wireless)
    external_online: tuple[str, ...]
    #: the USB supply whose input can be read, with its current and voltage files
    usb: tuple[str, str, str] | None


def find_supplies(sysfs: SysFS) -> Supplies:
    batteries, external, usb = [], [], None
    for supply in sysfs.glob(f"{_SUPPLY}/*"):
        kind = sysfs.read_str(f"{supply}/type") or ""
        if kind == "Battery":
            readable = sysfs.exists(f"{supply}/current_now") or sysfs.exists(f"{supply}/power_now")
            if readable and sysfs.exists(f"{supply}/voltage_now"):
                batteries.append(supply)
            continue
        if not sysfs.exists(f"{supply}/online"):
            continue
        external.append(f"{supply}/online")
        current = next(
            (f"{supply}/{f}" for f in ("input_current_now", "current_now") if sysfs.exists(f"{supply}/{f}")), None
        )
        if usb is None and kind.startswith("USB") and current and sysfs.exists(f"{supply}/voltage_now"):
            usb = (f"{supply}/online", current, f"{supply}/voltage_now")
    # Android names its gauge "battery"; laptops BAT0, BAT1.
    battery = next((b for b in batteries if b.endswith("/battery")), batteries[0] if batteries else None)
    return Supplies(battery, tuple(external), usb)


def _direction(status: str, external_online: bool) -> int:
    """+1 when current leaves the battery (it feeds the device), -1 when it enters (charging)."""
    if status == "Discharging":
        return 1
    if status == "Charging":
        return -1
    return -1 if external_online else 1


def _uv(value: int | None) -> int | None:
    if value is None:
        return None
    value = abs(value)
    return value * 1000 if 0 < value < _MV_BELOW else value


class PowerSupplySensor(Sensor):
    """Battery voltage, current and power, USB input power, and the device's power draw; see the module doc."""

    name = "power_supply"
    # Polled at the trial's period like every power sensor: a trial shorter than a slower period would get no power
    # reading inside its window.  Fuel gauges refresh a few times a second, so consecutive rows may repeat a value;
    # each read is an I2C/SPMI transfer, whose cost the sampler's own CPU share (``sampler.cpu_pct_of_core``, and a
    # measurement note past 10% of a core) reports on the device.
    min_period_ms = 0.0

    def __init__(self, sysfs: SysFS, *, pid: int | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self.supplies = Supplies(None, (), None)
        self._paths: list[str] = []
        self._current_scale = 1
        self._has: dict[str, bool] = {}

    def available(self) -> Availability:
        supplies = find_supplies(self.sysfs)
        if supplies.battery is None:
            return missing(f"no battery with current_now/voltage_now under {_SUPPLY} (not a phone or laptop)")
        return readable(self.sysfs, f"{supplies.battery}/voltage_now", "run as root (adb root on a phone)")

    def open(self) -> tuple[str, ...]:
        self.supplies = s = find_supplies(self.sysfs)
        bat = s.battery
        assert bat is not None, "open() needs available()"
        self._has = {
            "current": self.sysfs.exists(f"{bat}/current_now"),
            "power": self.sysfs.exists(f"{bat}/power_now"),
            "temp": self.sysfs.exists(f"{bat}/temp"),
            "charge": self.sysfs.exists(f"{bat}/charge_counter"),
            "usb": s.usb is not None,
        }
        self._paths = [f"{bat}/status", f"{bat}/voltage_now"]
        self._paths += [f"{bat}/current_now"] if self._has["current"] else []
        self._paths += [f"{bat}/power_now"] if self._has["power"] else []
        self._paths += [f"{bat}/temp"] if self._has["temp"] else []
        self._paths += [f"{bat}/charge_counter"] if self._has["charge"] else []
        self._paths += list(s.external_online)
        self._paths += list(s.usb[1:]) if s.usb else []
        self._current_scale = 1
        if self._has["current"] and self.sysfs.read_str(f"{bat}/status") == "Discharging":
            raw = abs(self.sysfs.read_int(f"{bat}/current_now") or 0)
            self._current_scale = 1000 if 0 < raw < _MA_BELOW else 1
        columns = ["battery_charging", "external_power_online", "battery_voltage_uv", "battery_current_ua"]
        columns += ["battery_power_mw"]
        columns += ["usb_voltage_uv", "usb_current_ua", "usb_power_mw"] if s.usb else []
        columns += ["device_power_mw"]
        columns += ["temp_power_supply_battery_mc"] if self._has["temp"] else []
        columns += ["battery_charge_counter_uah"] if self._has["charge"] else []
        return tuple(columns)

    def sources(self) -> list[Source]:
        return [Source(p, 32) for p in self._paths]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        values = iter(blobs)
        status_blob = next(values)
        status = status_blob.decode(errors="replace").strip() if status_blob else ""
        voltage_uv = _uv(int_or_none(next(values)))
        current = int_or_none(next(values)) if self._has["current"] else None
        power_uw = int_or_none(next(values)) if self._has["power"] else None
        temp_dc = int_or_none(next(values)) if self._has["temp"] else None
        charge_uah = int_or_none(next(values)) if self._has["charge"] else None
        online = [int_or_none(next(values)) for _ in self.supplies.external_online]
        usb_current = int_or_none(next(values)) if self._has["usb"] else None
        usb_voltage = _uv(int_or_none(next(values))) if self._has["usb"] else None

        external = any(o == 1 for o in online)
        sign = _direction(status, external)
        current_ua = None if current is None else sign * abs(current) * self._current_scale
        if power_uw is not None:
            battery_mw: int | None = sign * round(abs(power_uw) / 1000)
        elif current_ua is not None and voltage_uv is not None:
            battery_mw = round(current_ua * voltage_uv / 1e9)
        else:
            battery_mw = None
        out: Reading = [int(status == "Charging"), int(external), voltage_uv, current_ua, battery_mw]
        usb_mw = None
        if self._has["usb"]:
            assert self.supplies.usb is not None
            usb_index = self.supplies.external_online.index(self.supplies.usb[0])
            usb_on = online[usb_index] == 1
            usb_ua = None if usb_current is None else abs(usb_current) if usb_on else 0
            if usb_ua is not None and usb_voltage is not None:
                usb_mw = round(usb_ua * usb_voltage / 1e9)
            out += [usb_voltage, usb_ua, usb_mw]
            other_online = any(o == 1 for i, o in enumerate(online) if i != usb_index)
        else:
            other_online = external
        if not external:
            device_mw = battery_mw
        elif usb_mw is not None and battery_mw is not None and not other_online:
            device_mw = battery_mw + usb_mw
        else:
            device_mw = None  # a charger whose input cannot be read: the battery alone says nothing
        out.append(device_mw)
        if self._has["temp"]:
            out.append(None if temp_dc is None else temp_dc * 100)
        if self._has["charge"]:
            out.append(charge_uah)
        return out

    def labels(self) -> dict[str, str]:
        labels = {"battery_power_mw": "battery (+ = feeding the device)", "device_power_mw": "device (battery + USB)"}
        if self._has.get("temp"):
            labels["temp_power_supply_battery_mc"] = "battery (power_supply)"
        if self._has.get("charge"):
            labels["battery_charge_counter_uah"] = "battery charge left (fuel gauge's coulomb counter)"
        return labels

    def power_channels(self) -> list[PowerChannel]:
        channels = [
            PowerChannel("device", self.name, "total", power_column="device_power_mw"),
            PowerChannel("battery", self.name, "sub", power_column="battery_power_mw"),
        ]
        if self._has.get("usb"):
            channels.append(PowerChannel("usb input", self.name, "sub", power_column="usb_power_mw"))
        return channels

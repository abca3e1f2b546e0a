"""What makes this device noisy for benchmarking, and setting it quiet and back (``edgebench system``).

As ``pyperf system show/tune/reset`` does on a workstation: the cpufreq governor of every policy (anything but
``performance`` lets the clock follow the load), turbo/boost (the clock then depends on temperature and on how
many cores are busy), other load (the load average against the cores), the thermal state, and whether frequency
scaling is there to control at all.  ``tune`` (root) sets every policy's governor to ``performance`` and turns
boost off, saving what it found to a state file first; ``reset`` puts that state back and removes the file.
Everything goes through :class:`SysFS`, so a copied device tree is read and tuned as the device would be.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UsageError
from edgebench.host.cpu import freq_policies
from edgebench.host.cpuset import format_cpu_list
from edgebench.host.files import write_text_replacing
from edgebench.host.frequency import checked_state, policy_dir, read_state, restore_state, running_as_root
from edgebench.host.sysfs import SysFS

#: The state file's name inside a folder given as ``--state``.
STATE_NAME = "system-tune.json"

#: Boost switches, with the value that means "boost on": acpi-cpufreq/cpufreq-dt and intel_pstate (inverted).
BOOST_FILES = (("/sys/devices/system/cpu/cpufreq/boost", "1"), ("/sys/devices/system/cpu/intel_pstate/no_turbo", "0"))
#: The load average per core above which other work is said to disturb a benchmark.
BUSY_LOAD_PER_CORE = 0.5


@dataclass(frozen=True)
class Check:
    """One thing that can make benchmarks noisy: what it is now, and what to do (None: nothing to do)."""

    name: str
    state: str
    advice: str | None = None


def boost_file(sysfs: SysFS) -> tuple[str, str] | None:
    """The boost switch this device has and the value meaning "on"; None where it has none."""
    return next(((path, on) for path, on in BOOST_FILES if sysfs.exists(path)), None)


def checks(sysfs: SysFS, online_cores: int) -> list[Check]:
    """What makes this device noisy (``online_cores``: the cores the load average is shared by)."""
    out: list[Check] = []
    policies = freq_policies(sysfs)
    if not policies:
        out.append(Check("frequency scaling", "unknown: no cpufreq policies (a VM, a container, or no driver)",
                         "the clock cannot be read or held; compare trials on this device only with care"))  # fmt: skip
    for p in policies:
        name = f"governor {p.name} (cpu {format_cpu_list(list(p.cores))})"
        if p.governor == "performance" or p.governor == "userspace":
            out.append(Check(name, p.governor))
        else:
            out.append(Check(name, p.governor or "unknown", "the clock follows the load; `edgebench system tune`"))
    boost = boost_file(sysfs)
    if boost is not None:
        value = sysfs.read_str(boost[0])
        on = value == boost[1]
        state = f"{'on' if on else 'off'} ({boost[0]} = {value})"
        out.append(Check("turbo/boost", state, "the clock depends on temperature and busy cores" if on else None))
    elif policies:
        out.append(Check("turbo/boost", "no boost switch"))
    load = sysfs.read_str("/proc/loadavg")
    if load:
        one = float(load.split()[0])
        busy = one > BUSY_LOAD_PER_CORE * max(online_cores, 1)
        advice = "other work competes for the cores: stop it, or give the trial cores it does not use" if busy else None
        out.append(Check("other load", f"load average {one:.2f} on {online_cores} cores", advice))
    else:
        out.append(Check("other load", "unknown: no /proc/loadavg"))
    return out


def _state_dict(sysfs: SysFS) -> dict[str, object]:
    boost = boost_file(sysfs)
    return {
        "root": str(sysfs.root),
        "policies": [asdict(read_state(sysfs, policy_dir(sysfs, p))) for p in freq_policies(sysfs)],
        "boost": [boost[0], sysfs.read_str(boost[0])] if boost else None,
    }


def state_file(path: Path) -> Path:
    """Where the state goes: ``path``, or :data:`STATE_NAME` inside it when it is a folder (``--state DIR`` said it
    saved the state and saved nothing, so ``system reset`` then failed)."""
    return path / STATE_NAME if path.is_dir() else path


def read_saved(sysfs: SysFS, path: Path) -> tuple[list[Any], tuple[str, str] | None]:
    """The policies and the boost switch a state file holds, each checked against this device before anything is
    written (:func:`~edgebench.host.frequency.checked_state`); anything else is one line naming ``--state``."""
    try:
        saved = json.loads(path.read_bytes()) if path.stat().st_size <= 1 << 20 else None
        if not isinstance(saved, dict) or not isinstance(saved.get("policies"), list):
            raise ValueError("not a state `edgebench system tune` saved")
        states = [checked_state(sysfs, fields) for fields in saved["policies"]]
        boost = saved.get("boost")
        if boost is not None:
            if not (isinstance(boost, list) and len(boost) == 2 and boost[0] in dict(BOOST_FILES)):
                raise ValueError("its boost switch is not one edgebench sets")
            if boost[1] not in ("0", "1", None):
                raise ValueError(f"its boost value {str(boost[1])[:20]!r} is not 0 or 1")
    except (OSError, ValueError, RecursionError) as exc:
        raise UsageError("--state", f"{path} cannot be put back ({exc}); move it aside, set the governors by hand "
                                    "or with `edgebench system tune` again") from None  # fmt: skip
    return states, (boost[0], boost[1]) if boost and boost[1] is not None else None


def _require_root(is_root: Callable[[], bool], what: str) -> None:
    if not is_root():
        raise UsageError("system", f"{what} writes cpufreq settings and needs root; run it with sudo")


def tune(sysfs: SysFS, state_path: Path, *, is_root: Callable[[], bool] = running_as_root) -> list[str]:
    """Every policy to ``performance`` and boost off, the state found first saved to ``state_path``; returns what
    was changed.  A state file already there (a tune not yet reset) is kept: it holds the device's own state."""
    _require_root(is_root, "system tune")
    state_path = state_file(state_path)
    policies = freq_policies(sysfs)
    boost = boost_file(sysfs)
    if not policies and boost is None:
        raise UsageError("system", "this device has no cpufreq policies and no boost switch: nothing to tune")
    if state_path.exists():
        read_saved(sysfs, state_path)  # the device's own state, kept; it must be one reset can put back
    else:  # written whole before the first change: a tune killed half-way is still reset
        state_path.parent.mkdir(parents=True, exist_ok=True)
        write_text_replacing(state_path, json.dumps(_state_dict(sysfs), indent=2) + "\n")
    changed = []
    for p in policies:
        path = policy_dir(sysfs, p)
        governors = (sysfs.read_str(f"{path}/scaling_available_governors") or "").split()
        if "performance" in governors and p.governor != "performance":
            sysfs.write_text(f"{path}/scaling_governor", "performance")
            changed.append(f"{p.name}: governor {p.governor} -> performance")
    if boost is not None:
        off = "0" if boost[1] == "1" else "1"
        if sysfs.read_str(boost[0]) != off:
            sysfs.write_text(boost[0], off)
            changed.append(f"boost off ({boost[0]} = {off})")
    return changed


def reset(sysfs: SysFS, state_path: Path, *, is_root: Callable[[], bool] = running_as_root) -> list[str]:
    """Put back what :func:`tune` saved (all of it checked first: a damaged file writes nothing), then remove the
    state file; returns what was restored."""
    state_path = state_file(state_path)
    if not state_path.exists():
        raise UsageError("--state", f"{state_path} does not exist: `edgebench system tune` has not changed anything")
    _require_root(is_root, "system reset")
    states, boost = read_saved(sysfs, state_path)
    restored = []
    for state in states:
        restore_state(sysfs, state)
        restored.append(f"{state.path.rsplit('/', 1)[-1]}: governor {state.governor}")
    if boost is not None:
        sysfs.write_text(*boost)
        restored.append(f"boost {boost[0]} = {boost[1]}")
    state_path.unlink()
    return restored

"""Pinning CPU frequencies through cpufreq, and putting every policy back the way it was.

Two ways to hold a policy at one frequency, as on the devices the MNN-based suite ran on:

* the ``userspace`` governor plus ``scaling_setspeed`` (the suite's way), limits opened to the hardware range so
  the requested speed is not clamped;
* where that governor or file is missing (``intel_pstate``, many vendor kernels): ``scaling_min_freq`` and
  ``scaling_max_freq`` both set to the frequency, the governor left alone.

Every policy is handled, not cpu0's alone (a defect of that suite).  :class:`FrequencyControl` records each
policy's governor and limits before the first write and restores them when its ``with`` block ends, however it
ends: normally, on an exception, on Ctrl-C, on SIGTERM (which the sweep turns into an exception).  SIGKILL cannot
be caught, so the recorded state is also written to a journal file first; the next ``FrequencyControl`` on the
same tree finds it and restores that state before doing anything else.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType

from edgebench.errors import UsageError
from edgebench.host.cpu import FreqPolicy, freq_policies
from edgebench.host.cpuset import format_cpu_list
from edgebench.host.sysfs import SysFS

_CPU = "/sys/devices/system/cpu"
FIELD = "frequencies"


def running_as_root() -> bool:
    return os.geteuid() == 0


def policy_dir(sysfs: SysFS, policy: FreqPolicy) -> str:
    """Device path of a policy's folder: ``cpufreq/policyN`` or, on older kernels, ``cpuN/cpufreq``."""
    path = f"{_CPU}/cpufreq/{policy.name}"
    return path if sysfs.exists(path) else f"{_CPU}/cpu{policy.cores[0]}/cpufreq"


def policies_for(policies: Iterable[FreqPolicy], cores: Iterable[int] | None) -> list[FreqPolicy]:
    """The policies that clock any of ``cores`` (all of them when ``cores`` is None)."""
    wanted = None if cores is None else set(cores)
    return [p for p in policies if wanted is None or wanted & set(p.cores)]


def available_khz(policy: FreqPolicy) -> tuple[int, ...]:
    """Frequencies a policy offers; ``(min, max)`` of its limits where the driver lists none (intel_pstate)."""
    if policy.available_khz:
        return policy.available_khz
    bounds = {f for f in (policy.min_khz, policy.cpuinfo_max_khz or policy.max_khz) if f}
    return tuple(sorted(bounds))


def frequencies_for(sysfs: SysFS, cores: Iterable[int] | None) -> tuple[int, ...]:
    """``all`` for a core set: every frequency any policy clocking those cores offers, ascending."""
    union: set[int] = set()
    for policy in policies_for(freq_policies(sysfs), cores):
        union.update(available_khz(policy))
    return tuple(sorted(union))


def nearest_khz(policy: FreqPolicy, khz: int) -> int:
    """The policy's frequency nearest ``khz``, the lower of two as near: ``1.7GHz`` on a table of 1632000 and
    1708800 kHz is 1708800 (the MNN-based suite's folder for "1.7GHz" is ``MEIZU_Freq_1708800``), not the 1632000 a
    round-down would give."""
    offered = policy.available_khz
    if not offered:  # a continuous range: clamp into the hardware limits
        low = policy.min_khz or khz
        high = policy.cpuinfo_max_khz or policy.max_khz or khz
        return min(max(khz, low), high)
    return min(offered, key=lambda f: (abs(f - khz), f))


@dataclass(frozen=True)
class PolicyState:
    """What a policy was set to before edgebench touched it."""

    path: str
    governor: str | None
    min_khz: int | None
    max_khz: int | None
    #: Only meaningful under the userspace governor; restored after the governor.
    setspeed_khz: int | None


def read_state(sysfs: SysFS, path: str) -> PolicyState:
    return PolicyState(
        path=path,
        governor=sysfs.read_str(f"{path}/scaling_governor"),
        min_khz=sysfs.read_int(f"{path}/scaling_min_freq"),
        max_khz=sysfs.read_int(f"{path}/scaling_max_freq"),
        setspeed_khz=sysfs.read_int(f"{path}/scaling_setspeed"),
    )


def write_limits(sysfs: SysFS, path: str, low_khz: int, high_khz: int) -> None:
    """Set ``[low, high]`` in an order the kernel accepts: it refuses a minimum above the current maximum."""
    current_max = sysfs.read_int(f"{path}/scaling_max_freq")
    if current_max is not None and low_khz > current_max:
        sysfs.write_text(f"{path}/scaling_max_freq", str(high_khz))
        sysfs.write_text(f"{path}/scaling_min_freq", str(low_khz))
    else:
        sysfs.write_text(f"{path}/scaling_min_freq", str(low_khz))
        sysfs.write_text(f"{path}/scaling_max_freq", str(high_khz))


def restore_state(sysfs: SysFS, state: PolicyState) -> None:
    if state.governor and sysfs.read_str(f"{state.path}/scaling_governor") != state.governor:
        sysfs.write_text(f"{state.path}/scaling_governor", state.governor)
    if state.min_khz is not None and state.max_khz is not None:
        write_limits(sysfs, state.path, state.min_khz, state.max_khz)
    if state.governor == "userspace" and state.setspeed_khz is not None:
        sysfs.write_text(f"{state.path}/scaling_setspeed", str(state.setspeed_khz))


class FrequencyControl:
    """Pins cpufreq policies for the length of a ``with`` block and restores them on every way out.

    ``is_root`` is injectable so that the refusal is testable on a machine where tests run as root.
    """

    def __init__(
        self,
        sysfs: SysFS,
        *,
        is_root: Callable[[], bool] = running_as_root,
        journal: Path | None = None,
        notify: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.sysfs = sysfs
        self.is_root = is_root
        self.journal = journal
        self.notify = notify
        self.policies = freq_policies(sysfs)
        self._saved: dict[str, PolicyState] = {}
        self._touched: set[str] = set()

    def check(self) -> None:
        """Raise a :class:`UsageError` saying what to do when frequencies cannot be set here."""
        if not self.policies:
            raise UsageError(
                FIELD,
                f"this device exposes no cpufreq policies under {self.sysfs.path(_CPU + '/cpufreq')} "
                "(a virtual machine or container); leave frequencies out",
            )
        if not self.is_root():
            how = self.sysfs.root_hint or f"running as uid {os.geteuid()}; run the sweep with sudo"
            raise UsageError(FIELD, f"setting CPU frequencies needs root ({how}), or leave frequencies out")
        for policy in self.policies:
            path = policy_dir(self.sysfs, policy)
            for name in ("scaling_governor", "scaling_min_freq", "scaling_max_freq"):
                if not self.sysfs.writable(f"{path}/{name}"):
                    target = self.sysfs.path(f"{path}/{name}")
                    raise UsageError(
                        FIELD, f"{target} is missing or not writable; leave frequencies out on this device"
                    )

    def __enter__(self) -> FrequencyControl:
        self.check()
        self._recover_journal()
        self._saved = {p.name: read_state(self.sysfs, policy_dir(self.sysfs, p)) for p in self.policies}
        self._write_journal()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.restore()

    def pin(self, cores: Iterable[int] | None, khz: int) -> dict[str, int]:
        """Hold every policy clocking ``cores`` at its offered frequency nearest ``khz``; returns what each got.

        Policies that do not clock ``cores`` go back to their recorded state, so what one trial pinned never
        leaks into the next.
        """
        if not self._saved:
            raise RuntimeError("FrequencyControl.pin outside its with block")
        chosen = policies_for(self.policies, cores)
        if not chosen:
            raise UsageError(FIELD, f"no cpufreq policy clocks cpu {format_cpu_list(list(cores or ()))}")
        self.release(keep={p.name for p in chosen})
        applied: dict[str, int] = {}
        for policy in chosen:
            path = policy_dir(self.sysfs, policy)
            target = nearest_khz(policy, khz)
            governors = (self.sysfs.read_str(f"{path}/scaling_available_governors") or "").split()
            if "userspace" in governors and self.sysfs.exists(f"{path}/scaling_setspeed"):
                self.sysfs.write_text(f"{path}/scaling_governor", "userspace")
                # open the limits to the hardware range so that the requested speed is not clamped
                low = policy.available_khz[0] if policy.available_khz else target
                high = policy.cpuinfo_max_khz or (policy.available_khz[-1] if policy.available_khz else target)
                write_limits(self.sysfs, path, min(low, target), max(high, target))
                self.sysfs.write_text(f"{path}/scaling_setspeed", str(target))
            else:
                write_limits(self.sysfs, path, target, target)
            self._touched.add(policy.name)
            applied[policy.name] = self._read_back(path, target)
        return applied

    def _read_back(self, path: str, written_khz: int) -> int:
        """What the policy holds now: its speed under ``userspace``, else its upper limit (the written value where
        neither reads back)."""
        governor = self.sysfs.read_str(f"{path}/scaling_governor")
        name = "scaling_setspeed" if governor == "userspace" else "scaling_max_freq"
        value = self.sysfs.read_str(f"{path}/{name}")
        return int(value) if value and value.strip().isdigit() else written_khz

    def release(self, keep: set[str] | frozenset[str] = frozenset()) -> None:
        """Put back every policy pinned so far except those in ``keep``; the block stays open."""
        for name in sorted(self._touched - set(keep)):
            restore_state(self.sysfs, self._saved[name])
            self._touched.discard(name)

    def restore(self) -> None:
        """Put every recorded policy back; tries them all, then raises the first failure."""
        failures: list[str] = []
        for state in self._saved.values():
            try:
                restore_state(self.sysfs, state)
            except OSError as exc:
                failures.append(f"{state.path}: {exc}")
        if failures:
            raise OSError("could not restore cpufreq settings: " + "; ".join(failures))
        self._saved = {}
        self._touched = set()
        self.sysfs.restored()
        if self.journal is not None:
            self.journal.unlink(missing_ok=True)

    def _write_journal(self) -> None:
        if self.journal is None:
            return
        record = {"sysfs_root": str(self.sysfs.root), "policies": [asdict(s) for s in self._saved.values()]}
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.journal.with_suffix(".tmp")
        tmp.write_text(json.dumps(record))
        tmp.replace(self.journal)

    def _recover_journal(self) -> None:
        """Restore what a killed run recorded and never put back (it could not catch SIGKILL)."""
        if self.journal is None or not self.journal.exists():
            return
        try:
            record = json.loads(self.journal.read_text())
        except (OSError, json.JSONDecodeError):
            return
        if record.get("sysfs_root") != str(self.sysfs.root):
            return
        for fields in record.get("policies", []):
            restore_state(self.sysfs, PolicyState(**fields))
        self.journal.unlink(missing_ok=True)
        self.notify(f"restored the cpufreq settings an interrupted sweep left behind (journal {self.journal})")

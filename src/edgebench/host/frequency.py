"""Pinning CPU frequencies through cpufreq, and putting every policy back the way it was.

Two ways to hold a policy at one frequency, as on the devices the MNN-based suite ran on:

* the ``userspace`` governor plus ``scaling_setspeed`` (the suite's way), limits opened to the hardware range so
  the requested speed is not clamped;
* where that governor or file is missing (``intel_pstate``, many vendor kernels): ``scaling_min_freq`` and
  ``scaling_max_freq`` both set to the frequency, the governor left alone.

Every policy is handled, not cpu0's alone (a defect of that suite).  :class:`FrequencyControl` records each
policy's governor and limits before the first write and restores them when its ``with`` block ends, however it
ends: normally, on an exception, on Ctrl-C, on SIGTERM (which the sweep turns into an exception).  SIGKILL cannot
be caught, so the recorded state is also written to a journal file first (:func:`default_journal`: one per device
tree, in the temporary folder, which the reboot that resets cpufreq also clears); the next edgebench command finds
the journal of a process that is gone and restores that state, saying so (:func:`restore_stale_journals`).  A
journal is data like any file: it is checked before anything in it is written to cpufreq (:func:`checked_state`:
one of the device's policies, a governor it offers, a frequency in its range), and a damaged one is set aside with
a note, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from edgebench.errors import UsageError
from edgebench.host.cpu import FreqPolicy, freq_policies
from edgebench.host.cpuset import format_cpu_list
from edgebench.host.files import write_text_replacing
from edgebench.host.lifetime import process_started, same_process_running
from edgebench.host.sysfs import SysFS
from edgebench.units import MAX_QUANTITY

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


_STATE_FIELDS = frozenset(PolicyState.__dataclass_fields__)


def checked_state(sysfs: SysFS, fields: Any) -> PolicyState:
    """A saved record of one policy (a journal's, ``system tune``'s), if it is one this device can take back: one
    of its policy folders, a governor it offers, frequencies within its hardware range.  Else a ``ValueError``
    saying what is wrong, before anything is written."""
    if not isinstance(fields, dict) or set(fields) != _STATE_FIELDS:
        raise ValueError(f"a policy record must hold exactly {', '.join(sorted(_STATE_FIELDS))}")
    policies = {policy_dir(sysfs, p): p for p in freq_policies(sysfs)}
    path = fields["path"]
    if path not in policies:
        raise ValueError(f"{str(path)[:80]!r} is not a cpufreq policy of this device")
    policy = policies[path]
    governor = fields["governor"]
    if governor is not None:
        offered = (sysfs.read_str(f"{path}/scaling_available_governors") or "").split()
        if not isinstance(governor, str) or (governor not in offered and governor != policy.governor):
            raise ValueError(f"{path}: governor {str(governor)[:40]!r} is not one this policy offers")
    # the hardware's range, not the limits now set (a pinned policy's limits are the pinned clock)
    low = sysfs.read_int(f"{path}/cpuinfo_min_freq") or min(policy.available_khz, default=1)
    high = policy.cpuinfo_max_khz or max(policy.available_khz, default=MAX_QUANTITY)
    for name in ("min_khz", "max_khz", "setspeed_khz"):
        value = fields[name]
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"{path}: {name} {str(value)[:40]!r} is outside the policy's {low}-{high} kHz")
    return PolicyState(**fields)


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
        self.journal = journal if journal is not None else default_journal(sysfs)
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
        pid = os.getpid()
        record = {"pid": pid, "started": process_started(pid), "sysfs_root": str(self.sysfs.root),
                  "policies": [asdict(s) for s in self._saved.values()]}  # fmt: skip
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        write_text_replacing(self.journal, json.dumps(record))

    def _recover_journal(self) -> None:
        """Restore what a killed run recorded and never put back (it could not catch SIGKILL); refuse while the
        run that wrote it still holds the clocks."""
        if self.journal is None or not self.journal.exists():
            return
        try:
            journal = read_journal(self.journal)
        except ValueError as exc:
            self.journal.unlink(missing_ok=True)
            self.notify(f"ignored and removed a damaged cpufreq journal {self.journal} ({exc})")
            return
        if journal.pid != os.getpid() and journal.owner_running:
            raise UsageError(
                FIELD,
                f"another edgebench (pid {journal.pid}) holds this device's CPU frequencies now (journal "
                f"{self.journal}); run this when it has ended",
            )
        if journal.sysfs_root != str(self.sysfs.root):
            return
        try:
            restore_journal(self.sysfs, journal)
        except ValueError as exc:
            self.journal.unlink(missing_ok=True)
            self.notify(f"ignored and removed a cpufreq journal this device cannot take back {self.journal} ({exc})")
            return
        self.journal.unlink(missing_ok=True)
        self.notify(f"restored the cpufreq settings an interrupted run left behind (journal {self.journal})")


#: The journals' names in the temporary folder: the user's id and a digest of the device tree's path.
_JOURNAL_PREFIX = "edgebench-cpufreq-"
#: A journal holds a few policies' settings; anything larger is not one.
_JOURNAL_MAX_BYTES = 1 << 20


def default_journal(sysfs: SysFS) -> Path | None:
    """Where pinning this device's clocks is written down: one file per device tree of this machine (a remote
    device keeps its restore script on the device instead: None)."""
    if not sysfs.is_local:
        return None
    key = hashlib.sha256(str(sysfs.root.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"{_JOURNAL_PREFIX}{os.getuid()}-{key}.json"


@dataclass(frozen=True)
class Journal:
    """What a pinning process recorded before its first write: whose it is, which tree, each policy as it was."""

    pid: int | None
    started: int | None
    sysfs_root: str
    policies: tuple[Any, ...]

    @property
    def owner_running(self) -> bool:
        return self.pid is not None and same_process_running(self.pid, self.started)


def read_journal(path: Path) -> Journal:
    """The journal at ``path``; a ``ValueError`` saying why it is not one (its policies are checked against the
    device when restored, :func:`restore_journal`)."""
    try:
        if path.stat().st_size > _JOURNAL_MAX_BYTES or not path.is_file():
            raise ValueError("not a journal file")
        record = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"unreadable: {type(exc).__name__}") from None
    if not isinstance(record, dict) or not isinstance(record.get("sysfs_root"), str):
        raise ValueError("not a journal edgebench wrote")
    policies, pid, started = record.get("policies"), record.get("pid"), record.get("started")
    if not isinstance(policies, list) or not all(isinstance(v, int | None) for v in (pid, started)):
        raise ValueError("not a journal edgebench wrote")
    return Journal(pid, started, record["sysfs_root"], tuple(policies))


def restore_journal(sysfs: SysFS, journal: Journal) -> list[str]:
    """Put back each policy the journal recorded, all of them checked first (:func:`checked_state`), so that a bad
    record writes nothing; returns the policies' folders."""
    states = [checked_state(sysfs, fields) for fields in journal.policies]
    for state in states:
        restore_state(sysfs, state)
    return [state.path for state in states]


def restore_stale_journals(notify: Callable[[str], None], folder: Path | None = None) -> None:
    """Put back what edgebench processes that are gone (SIGKILL, a power cut of the workstation only) left pinned on
    this machine's device trees, saying so for each; run when any edgebench command starts.  A damaged journal is
    removed with a note; one that cannot be applied now (not root) is kept, with a note saying how."""
    for path in sorted((folder or Path(tempfile.gettempdir())).glob(f"{_JOURNAL_PREFIX}{os.getuid()}-*.json")):
        try:
            journal = read_journal(path)
        except ValueError as exc:
            path.unlink(missing_ok=True)
            notify(f"removed a damaged cpufreq journal {path} ({exc})")
            continue
        if journal.owner_running:
            continue  # its run is still going: it restores its own
        root = Path(journal.sysfs_root)
        try:
            if not root.is_dir():
                raise ValueError(f"its device tree {str(root)[:80]} is gone")
            restored = restore_journal(SysFS(root), journal)
        except ValueError as exc:
            path.unlink(missing_ok=True)
            notify(f"removed a cpufreq journal that cannot be put back {path} ({exc})")
            continue
        except OSError as exc:
            notify(f"the cpufreq settings edgebench pid {journal.pid} left pinned could not be put back ({exc}); "
                   f"run any edgebench command as root to restore them (journal {path})")  # fmt: skip
            continue
        path.unlink(missing_ok=True)
        where = "" if root == Path("/") else f" of {root}"
        notify(f"restored the cpufreq settings{where} that edgebench pid {journal.pid} left pinned when it was "
               f"killed ({len(restored)} policies; journal {path})")  # fmt: skip

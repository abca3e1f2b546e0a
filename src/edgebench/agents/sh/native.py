"""Which sampler a ``--command`` trial's device-side script runs: the native one where it fits the device, else sh.

The native sampler (:mod:`edgebench.agents.native`) is built here for the device's ABI, read from the device
(Android's ``ro.product.cpu.abi``, which names the userland a 64-bit kernel may run in 32 bits, else ``uname -m``),
and copied into the target's work folder under its own digest (``native/<sha256>/edgebench-sampler``) unless a
copy that runs is already there, as model files are: a sweep pushes it once, and a changed build is a new copy,
never a stale one.  Where no build fits or the toolchain is missing, the sh sampler runs and the choice says why;
``--sampler native`` turns that into a one-line refusal before the trial instead.
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from edgebench.agents.native.build import ANDROID_ABIS, BINARY, MACHINE_ABIS, TARGETS, VERSION, NotBuilt, built
from edgebench.errors import UsageError

#: What ``--sampler`` may say (a trial setting; ``auto`` decides per target).
SamplerSetting = Literal["auto", "native", "sh"]


class DeviceShell(Protocol):
    """What placing the sampler on a device needs of its shell (the sh agent's ``AgentShell`` is one)."""

    def run(
        self, script: str, *, timeout_s: float | None = None, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]: ...
    def push(self, local: Path, remote: str) -> None: ...
    def workdir(self) -> str: ...


@dataclass(frozen=True)
class SamplerChoice:
    """The sampler a trial's script runs: ``native`` (``path`` on the device) or ``sh``, and why, in one line."""

    kind: Literal["native", "sh"]
    why: str
    path: str | None = None


def choose_sampler(setting: SamplerSetting, shell: DeviceShell, *, native_by_default: bool) -> SamplerChoice:
    """The sampler for a trial with ``--sampler setting`` on the device behind ``shell``.

    ``auto`` is native on a remote device (``native_by_default``) where a build fits and runs, and sh on this
    machine, whose command trials keep the sampler they had; ``native`` where none fits is a :class:`UsageError`."""
    if setting == "sh":
        return SamplerChoice("sh", "--sampler sh")
    if setting == "auto" and not native_by_default:
        return SamplerChoice("sh", "a command trial on this machine samples with sh unless --sampler native")
    try:
        abi, said = device_abi(shell)
        binary = built(abi)
        path = install(shell, binary)
    except NotBuilt as exc:
        if setting == "native":
            raise UsageError("--sampler", f"no native sampler for this device: {exc}; use --sampler sh") from None
        return SamplerChoice("sh", f"no native sampler: {exc}")
    return SamplerChoice("native", f"{TARGETS[abi]} build for the device's {said}", path)


def device_abi(shell: DeviceShell) -> tuple[str, str]:
    """edgebench's name of the device's ABI, and the device's own word for it; :class:`NotBuilt` where none fits."""
    done = shell.run(
        "uname -m; command -v getprop >/dev/null 2>&1 && getprop ro.product.cpu.abi", timeout_s=60
    )  # fmt: skip
    words = [line.strip() for line in _stdout(done).splitlines()]
    machine = words[0] if words else ""
    android = words[1] if len(words) > 1 else ""
    said = android or machine
    abi = ANDROID_ABIS.get(android) if android else MACHINE_ABIS.get(machine)
    if abi is None:
        raise NotBuilt(
            f"the device's ABI is {said or 'unknown (uname -m printed nothing)'}, and edgebench builds the native "
            f"sampler for {', '.join(TARGETS)} ({', '.join(ANDROID_ABIS)} on Android)"
        )
    return abi, said


def install(shell: DeviceShell, binary: Path) -> str:
    """The path of ``binary`` in the target's work folder, copied there unless a copy of the same size runs."""
    digest = hashlib.sha256(binary.read_bytes()).hexdigest()[:16]
    remote = f"{shell.workdir().rstrip('/')}/native/{digest}/{BINARY}"
    size = binary.stat().st_size
    if _runs(shell, remote, size) is None:
        return remote
    shell.push(binary, remote)
    why = _runs(shell, remote, size)
    if why is not None:
        raise NotBuilt(f"the copy at {remote} does not run on the device ({why})")
    return remote


def _runs(shell: DeviceShell, remote: str, size: int) -> str | None:
    """None where the device's copy has ``size`` bytes and answers ``--version``, else what it said.

    ``chmod`` first: a copy made by ``cat`` (SSH) has no execute bit, and a work folder on a ``noexec`` mount
    shows here as a copy that does not run."""
    q = shlex.quote(remote)
    done = shell.run(
        f"chmod 755 {q} 2>/dev/null; wc -c 2>/dev/null < {q} || echo none; {q} --version 2>&1", timeout_s=60
    )
    lines = [line.strip() for line in _stdout(done).splitlines()]
    if not lines or lines[0] != str(size):
        return "not copied yet" if lines[:1] == ["none"] else f"{lines[0] if lines else 'nothing'} bytes"
    said = lines[1] if len(lines) > 1 else "nothing"
    return None if said == VERSION else f"--version said {said!r}"


def _stdout(done: subprocess.CompletedProcess[bytes]) -> str:
    """What the device printed; an old phone's shell (a pty, no shell protocol) ends its lines with CR LF."""
    return done.stdout.decode(errors="replace").replace("\r", "")

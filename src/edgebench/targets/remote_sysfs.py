"""A device's ``/proc`` and ``/sys`` read and written through a shell (SSH, adb), behind the :class:`SysFS` interface.

Sensors, core roles, cool-down temperatures and frequency control take a ``SysFS``; this one keeps a local mirror
of the files edgebench reads (:mod:`edgebench.host.capture`), refreshed by one round trip when it is older than
``max_age_s``, so an inventory of a dozen sensors costs one dump, not hundreds of ``cat``.  A path outside the dump
is read on its own.  Files that exist but could not be read raise ``PermissionError`` saying so ("permission
denied: unrooted" when the target has no root), which the sensors report per sensor.

Writes (governor, limits) go through the target's root wrapper.  Before the first write to a file its old value
is appended to a restore script on the device, which a held session runs if the connection drops
(:func:`edgebench.targets.guard.restore_holder`); a clean end deletes it.
"""

from __future__ import annotations

import contextlib
import errno
import glob as _glob
import shlex
import shutil
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable
from pathlib import Path

from edgebench.host.capture import Dump, covered, dump_script, parse_dump, write_tree
from edgebench.host.sysfs import PseudoFile, SysFS, natural_key
from edgebench.targets.guard import RELEASE_LINE, STARTED_LINE, restore_holder
from edgebench.targets.shell import Shell

#: Order in which a restore script writes a policy's controls back: governor first, then limits in both orders
#: (the kernel refuses a minimum above the current maximum and the reverse), the userspace speed last.
_RESTORE_ORDER = ("scaling_governor", "scaling_max_freq", "scaling_min_freq", "scaling_setspeed")


def sh_text(shell: Shell, script: str, timeout_s: float, stdin: str | None) -> subprocess.CompletedProcess[str]:
    """``shell.run`` with text in and out (the device's files and replies are ASCII; bytes elsewhere)."""
    done = shell.run(script, timeout_s=timeout_s, stdin=None if stdin is None else stdin.encode())
    out, err = (b.decode(errors="replace") if isinstance(b, bytes) else (b or "") for b in (done.stdout, done.stderr))
    return subprocess.CompletedProcess(done.args, done.returncode, out, err)


class RemoteSysFS(SysFS):
    """The device's files: reads from a refreshed mirror (or one ``cat``), writes through the target's root."""

    root_hint = "on the device: add --root, or root: true for the target, so that adb root or su is used"
    is_local = False  # a dropped connection runs the restore script on the device (see restore_holder)

    def __init__(
        self,
        shell: Shell,
        *,
        device_root: str = "/",
        as_root: Callable[[str], str] | None = None,
        denied_reason: str = "permission denied",
        max_age_s: float = 1.0,
    ) -> None:
        self._mirror = Path(tempfile.mkdtemp(prefix="edgebench-remote-sysfs-"))
        weakref.finalize(self, shutil.rmtree, self._mirror, True)  # however the target is dropped
        super().__init__(self._mirror)
        self.shell = shell
        self.device_root = device_root.rstrip("/")
        self._as_root = as_root or (lambda script: script)
        self.denied_reason = denied_reason
        self.max_age_s = max_age_s
        self._read_at = float("-inf")
        self._denied: set[str] = set()
        self._originals: dict[str, str] = {}
        self._holder: subprocess.Popen[bytes] | None = None
        #: How the last restore watcher's client ended (negative: killed after waiting); None before any ended.
        self.holder_returncode: int | None = None

    # -- reading ---------------------------------------------------------------------------------------------

    @property
    def is_live(self) -> bool:
        return False  # /proc/<pid> of the workstation's processes is not on the device

    def dump(self) -> Dump:
        """Read every file edgebench reads on the device, in one round trip."""
        done = self.shell.run(self._as_root(dump_script(self.device_root or "/")), timeout_s=60)
        return parse_dump(done.stdout)

    def refresh(self) -> None:
        """Replace the mirror with a fresh dump."""
        dump = self.dump()
        shutil.rmtree(self._mirror, ignore_errors=True)
        self._mirror.mkdir(parents=True)
        write_tree(dump, self._mirror)
        self._denied = dump.denied
        self._read_at = time.monotonic()

    def _fresh(self) -> None:
        if time.monotonic() - self._read_at > self.max_age_s:
            self.refresh()

    def _denied_error(self, rel: str) -> PermissionError:
        return PermissionError(errno.EACCES, self.denied_reason, rel)

    def exists(self, rel: str) -> bool:
        self._fresh()
        if self.path(rel).exists() or rel in self._denied:
            return True
        if covered(rel):
            return False
        return sh_text(self.shell, f"[ -e {self._device(rel)} ]", 30, None).returncode == 0

    def read_text(self, rel: str) -> str:
        self._fresh()
        if rel in self._denied:
            raise self._denied_error(rel)
        local = self.path(rel)
        if local.is_file():
            return local.read_text(encoding="utf-8", errors="replace")
        if covered(rel):
            raise FileNotFoundError(errno.ENOENT, "no such file on the device", rel)
        done = sh_text(self.shell, self._as_root(f"cat {self._device(rel)}"), 30, None)
        if done.returncode != 0:
            err = (done.stderr or "").lower()
            if "permission denied" in err:
                raise self._denied_error(rel)
            raise FileNotFoundError(errno.ENOENT, (done.stderr or "cannot be read").strip(), rel)
        return done.stdout

    def glob(self, pattern: str) -> list[str]:
        self._fresh()
        hits = _glob.glob(str(self.path(pattern)))
        local = ["/" + str(Path(h).relative_to(self._mirror)) for h in hits]
        if local or covered(pattern + "/x") or covered(pattern):
            return sorted(set(local), key=natural_key)
        script = f'for f in {self._device(pattern, quote=False)}; do [ -e "$f" ] && echo "$f"; done; true'
        done = sh_text(self.shell, script, 30, None)
        cut = len(self.device_root)
        return sorted({line[cut:] for line in done.stdout.splitlines() if line}, key=natural_key)

    def open(self, rel: str) -> PseudoFile:
        """A mirrored file re-read through :meth:`read_text` (the device-side sampler polls; this serves the
        inventory's one reading)."""
        return _RemotePseudoFile(self, rel)  # type: ignore[return-value]

    # -- writing ---------------------------------------------------------------------------------------------

    def writable(self, rel: str) -> bool:
        return sh_text(self.shell, self._as_root(f"[ -w {self._device(rel)} ]"), 30, None).returncode == 0

    def write_text(self, rel: str, value: str) -> None:
        if rel not in self._originals:
            original = self.read_text(rel).strip()
            self._originals[rel] = original
            self._keep_restore_file()
        script = f"printf %s {shlex.quote(value)} > {self._device(rel)}"
        done = sh_text(self.shell, self._as_root(script), 30, None)
        if done.returncode != 0:
            reason = (done.stderr or "").strip() or f"exit status {done.returncode}"
            if "permission denied" in reason.lower():
                raise PermissionError(errno.EACCES, f"{self.denied_reason} ({reason})", rel)
            raise OSError(errno.EIO, reason, rel)
        local = self.path(rel)
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(value)

    def restore_script(self) -> str:
        """POSIX ``sh`` writing every file back to its value before edgebench's first write to it."""

        def order(rel: str) -> tuple[str, int]:
            name = rel.rsplit("/", 1)[-1]
            return rel.rsplit("/", 1)[0], _RESTORE_ORDER.index(name) if name in _RESTORE_ORDER else 9

        lines = []
        for rel in sorted(self._originals, key=order):
            value, target = shlex.quote(self._originals[rel]), self._device(rel)
            lines.append(f"printf %s {value} > {target} 2>/dev/null")
            if rel.endswith("scaling_min_freq"):  # the maximum again, now that the minimum no longer blocks it
                maximum = rel.replace("scaling_min_freq", "scaling_max_freq")
                if maximum in self._originals:
                    again = shlex.quote(self._originals[maximum])
                    lines.append(f"printf %s {again} > {self._device(maximum)} 2>/dev/null")
        return "\n".join(lines) + "\n"

    def _restore_file(self) -> str:
        return f"{self.shell.workdir()}/restore-{id(self):x}.sh"

    def _keep_restore_file(self) -> None:
        """Write the restore script on the device, and start the session that runs it if the connection drops."""
        path = self._restore_file()
        quoted = shlex.quote(path)
        # The script travels as a file (adb sync, ssh's cat), not on the shell's stdin: an old phone's shell (no
        # shell protocol) reads its stdin from a pty that never ends, so a `cat > FILE` there never finished.
        with tempfile.TemporaryDirectory(prefix="edgebench-restore-") as tmp:
            local = Path(tmp) / "restore.sh"
            local.write_text(self.restore_script())
            try:
                self.shell.push(local, f"{path}.tmp")
            except OSError as exc:
                raise OSError(errno.EIO, f"cannot write the restore script: {exc}", path) from None
        done = sh_text(self.shell, self._as_root(f"mv {quoted}.tmp {quoted}"), 30, None)
        if done.returncode != 0:
            raise OSError(errno.EIO, f"cannot write the restore script: {done.stderr.strip()}", path)
        if self._holder is None or self._holder.poll() is not None:
            holder = self.shell.start(self._as_root(restore_holder(path)))
            assert holder.stdout is not None
            if holder.stdout.readline().decode(errors="replace").strip() != STARTED_LINE:
                holder.kill()
                raise OSError(errno.EIO, "the device-side restore watcher did not start", path)
            self._holder = holder

    def restored(self) -> None:
        """The workstation put everything back itself: delete the restore script and end its watcher."""
        if not self._originals and self._holder is None:
            return
        sh_text(self.shell, self._as_root(f"rm -f {shlex.quote(self._restore_file())}"), 30, None)
        self._originals.clear()
        self.drop_holder()

    def drop_holder(self) -> None:
        """End the watcher session (its release line, then closing its stdin): it runs the restore script if one is
        left.  ``holder_returncode`` keeps how its client ended (negative: it had to be killed)."""
        holder, self._holder = self._holder, None
        if holder is None:
            return
        if holder.stdin is not None:
            try:  # the line ends it on an old phone, whose pty never sees the end of stdin
                holder.stdin.write(f"{RELEASE_LINE}\n".encode())
                holder.stdin.flush()
            except OSError:  # the connection is gone: the watcher has ended, or ends, by itself
                pass
            with contextlib.suppress(OSError):
                holder.stdin.close()
        try:
            holder.wait(30)
        except subprocess.TimeoutExpired:
            holder.kill()
            holder.wait()
        self.holder_returncode = holder.returncode

    def close(self) -> None:
        self.drop_holder()
        shutil.rmtree(self._mirror, ignore_errors=True)

    def _device(self, rel: str, *, quote: bool = True) -> str:
        path = self.device_root + "/" + rel.lstrip("/")
        return shlex.quote(path) if quote else path


class _RemotePseudoFile:
    """``read(size)`` of one device file through :meth:`RemoteSysFS.read_text`."""

    def __init__(self, fs: RemoteSysFS, rel: str) -> None:
        self.path = Path(rel)
        self._fs, self._rel = fs, rel
        fs.read_text(rel)  # raise now, as os.open would, when it is missing or denied

    def read(self, size: int = 65536) -> bytes:
        return self._fs.read_text(self._rel).encode()[:size]

    def close(self) -> None:
        return None

    def __enter__(self) -> _RemotePseudoFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

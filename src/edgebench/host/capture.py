"""The ``/proc`` and ``/sys`` files edgebench's sensors and host queries read, and one shell round trip that dumps them.

The list is declared once here (``tests/fixtures/capture_sysfs.sh`` lists the same patterns, and a test holds the
two together).  A remote target reads a device through :func:`dump_script`: one POSIX ``sh`` loop (``mksh``,
``ash``, ``dash``: no bash) prints every readable file with a header line, and names the ones that exist but
cannot be read, so a sensor can say "permission denied: unrooted" instead of "missing".  ``edgebench snapshot``
writes the same dump as a tree ``--sysfs-root`` accepts.
"""

from __future__ import annotations

import fnmatch
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from edgebench.host.files import inside

#: Files read by name.
CAPTURE_FILES: tuple[str, ...] = (
    "/proc/stat",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/sys/devices/system/cpu/online",
    "/sys/devices/system/cpu/present",
    "/sys/devices/system/cpu/possible",
)

#: Files found by pattern (shell globs, expanded on the device).
CAPTURE_GLOBS: tuple[str, ...] = (
    "/sys/devices/system/cpu/cpufreq/policy*/*",
    "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/*",
    "/sys/devices/system/cpu/cpu[0-9]*/topology/*",
    "/sys/class/thermal/thermal_zone*/type",
    "/sys/class/thermal/thermal_zone*/temp",
    "/sys/class/hwmon/hwmon*/name",
    "/sys/class/hwmon/hwmon*/*_input",
    "/sys/class/hwmon/hwmon*/*_label",
    "/sys/class/powercap/intel-rapl:*/name",
    "/sys/class/powercap/intel-rapl:*/energy_uj",
    "/sys/class/powercap/intel-rapl:*/max_energy_range_uj",
    "/sys/class/powercap/intel-rapl:*/intel-rapl:*/name",
    "/sys/class/powercap/intel-rapl:*/intel-rapl:*/energy_uj",
    "/sys/class/powercap/intel-rapl:*/intel-rapl:*/max_energy_range_uj",
    "/sys/class/thermal/thermal_zone*/trip_point_*_type",
    "/sys/class/thermal/thermal_zone*/trip_point_*_temp",
    "/sys/bus/i2c/drivers/ina3221x/*/iio:device*/*",
    "/sys/bus/i2c/drivers/ina3221/*/hwmon/hwmon*/*",
    "/sys/devices/gpu.0/load",
    "/sys/devices/platform/gpu.0/load",
    "/sys/devices/platform/*.gpu/load",
    "/sys/devices/platform/*.ga10b/load",
    "/sys/devices/platform/bus@0/*.gpu/load",
    "/sys/class/devfreq/*/cur_freq",
    "/sys/class/devfreq/*/max_freq",
    "/sys/class/devfreq/*/device/load",
    "/sys/class/power_supply/*/*",
)

FILE_MARK = "@@edgebench-file@@ "
DENIED_MARK = "@@edgebench-denied@@ "
END_MARK = "@@edgebench-end@@"


def covered(path: str) -> bool:
    """Whether a dump holds ``path`` when the device has it readable: absent from a dump means absent there."""
    return path in CAPTURE_FILES or any(fnmatch.fnmatchcase(path, g) for g in CAPTURE_GLOBS)


def dump_script(device_root: str = "/", paths: tuple[str, ...] | None = None) -> str:
    """POSIX ``sh`` printing each file as ``FILE_MARK path``, its bytes, a newline and ``END_MARK``.

    ``device_root`` prefixes every path (a fixture tree on a test device); the headers carry the device path
    without it.  Unreadable files get a ``DENIED_MARK`` line.  Every command is a builtin but ``cat``: a sysfs
    tree has a few hundred files, so the dump costs one fork per file and one round trip in all.
    """
    prefix = device_root.rstrip("/")
    names = paths if paths is not None else CAPTURE_FILES + CAPTURE_GLOBS
    words = " ".join((shlex.quote(prefix) if prefix else "") + _glob_word(p) for p in names)
    strip = f'p="${{f#{shlex.quote(prefix)}}}"; ' if prefix else 'p="$f"; '
    end = f'printf "\\n%s\\n" "{END_MARK}"'
    return (
        f'for f in {words}; do [ -f "$f" ] || continue; {strip}'
        f'if [ -r "$f" ]; then printf "%s\\n" "{FILE_MARK}$p"; '
        f'if cat "$f" 2>/dev/null; then {end}; else {end}; printf "%s\\n" "{DENIED_MARK}$p"; fi; '
        f'else printf "%s\\n" "{DENIED_MARK}$p"; fi; done; true'
    )


def _glob_word(pattern: str) -> str:
    """A glob pattern as a shell word: characters that the shell would treat specially (``@``, ``:``) are safe,
    only spaces would need quoting, and sysfs has none."""
    if any(c in pattern for c in " '\"$`\\;&|<>()"):
        raise ValueError(f"unsafe capture pattern {pattern!r}")
    return pattern


@dataclass
class Dump:
    """What one dump read: file contents by device path, and the paths that exist but were not readable."""

    files: dict[str, bytes] = field(default_factory=dict)
    denied: set[str] = field(default_factory=set)


def parse_dump(data: bytes) -> Dump:
    """Split a :func:`dump_script` output into files; a file cut short (connection lost) is left out."""
    dump = Dump()
    file_mark, denied_mark, end = FILE_MARK.encode(), DENIED_MARK.encode(), b"\n" + END_MARK.encode() + b"\n"
    pos = 0
    while pos < len(data):
        eol = data.find(b"\n", pos)
        if eol < 0:
            break
        line = data[pos:eol]
        if line.startswith(denied_mark):
            path = line[len(denied_mark) :].decode(errors="replace")
            dump.denied.add(path)
            dump.files.pop(path, None)  # listed, then its read failed (a write-only control)
            pos = eol + 1
            continue
        if not line.startswith(file_mark):
            pos = eol + 1
            continue
        stop = data.find(end, eol + 1)
        if stop < 0:
            break
        dump.files[line[len(file_mark) :].decode(errors="replace")] = data[eol + 1 : stop]
        pos = stop + len(end)
    return dump


def write_tree(dump: Dump, out: Path) -> int:
    """Write a dump as a ``--sysfs-root`` tree under ``out``; returns how many files it wrote.

    The paths come from the device: one that would land outside ``out`` (``..`` in it) is no file of the tree, and
    is left out."""
    written = 0
    for path, content in dump.files.items():
        try:
            target = inside(out, path.lstrip("/"))
        except ValueError:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written += 1
    return written


def write_tree_whole(dump: Dump, out: Path) -> int:
    """:func:`write_tree` into a new folder beside ``out``, renamed onto ``out`` (new or empty) when it is whole:
    nothing half-written under the name the user gave, and no folder removed that this call did not make."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".partial"))
    try:
        count = write_tree(dump, tmp)
        if out.exists():
            out.rmdir()
        tmp.replace(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return count

"""Building the native sampler (``sampler.c``) for an ABI with Zig's C compiler from pip, each build kept.

The ``ziglang`` package (the extra ``native-sampler``) is a whole cross toolchain with musl's sources in one
wheel, so ``pip install`` alone builds a static binary for every ABI in :data:`TARGETS`, whatever the machine.
The first build for an ABI takes about a minute while Zig builds musl for it (kept in Zig's own cache,
``~/.cache/zig``); later ones take a second.  Each binary is kept in the cache of derived files
(:func:`edgebench.graph.cache.cache_dir`), keyed by the source's digest, the flags, the compiler's version and the
ABI, so it is never stale and is built once per machine; a lock beside it makes concurrent builders wait for one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata, resources
from pathlib import Path

from edgebench.graph.cache import cache_dir
from edgebench.host.files import replacing

#: edgebench's name of each ABI it builds for -> Zig's target (static musl: runs on any Linux of that ABI,
#: Android included, without its C library).  ``arm`` is 32-bit ARMv7 with hardware floating point.
TARGETS = {"aarch64": "aarch64-linux-musl", "arm": "arm-linux-musleabihf", "x86_64": "x86_64-linux-musl"}
#: Android's ABI names (``ro.product.cpu.abi``) -> edgebench's.
ANDROID_ABIS = {"arm64-v8a": "aarch64", "armeabi-v7a": "arm", "x86_64": "x86_64"}
#: ``uname -m`` -> edgebench's ABI (``armv8l``: a 32-bit userland on ARMv8, which runs the ARMv7 build).
MACHINE_ABIS = {"aarch64": "aarch64", "arm64": "aarch64", "armv7l": "arm", "armv8l": "arm", "x86_64": "x86_64"}
#: Small, static, stripped; warnings are errors so that a compiler upgrade that finds a fault stops the build.
FLAGS = ("-static", "-Os", "-s", "-std=c11", "-Wall", "-Wextra", "-Werror")
#: The first line ``--version`` prints: a device's copy that answers it runs there.
VERSION = "edgebench-sampler 1"
BINARY = "edgebench-sampler"
INSTALL = "pip install 'edgebench[native-sampler]'"
#: Zig's first build for an ABI compiles musl: about a minute on an idle core, several on a busy small machine.
BUILD_TIMEOUT_S = 900.0


class NotBuilt(Exception):
    """Why there is no native sampler for an ABI here, in one line (the toolchain is missing, the build failed)."""


def source_bytes() -> bytes:
    return resources.files(__package__).joinpath("sampler.c").read_bytes()


def compiler_version() -> str | None:
    """The installed ``ziglang`` package's version, or None where it is not installed."""
    try:
        return metadata.version("ziglang")
    except metadata.PackageNotFoundError:
        return None


def build_key(abi: str, compiler: str) -> str:
    """16 hex digits over everything that decides the binary's bytes."""
    digest = hashlib.sha256(source_bytes())
    for part in (*FLAGS, TARGETS[abi], compiler):
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()[:16]


def this_machine() -> Path:
    """The native sampler built for this machine's ABI (:class:`NotBuilt` where none fits)."""
    machine = os.uname().machine
    abi = MACHINE_ABIS.get(machine)
    if abi is None:
        raise NotBuilt(f"this machine's ABI is {machine}; edgebench builds the native sampler for {', '.join(TARGETS)}")
    return built(abi)


def built(abi: str, *, build_if_missing: bool = True) -> Path:
    """The native sampler for ``abi``, built now if it is not in the cache yet; :class:`NotBuilt` says why not."""
    if abi not in TARGETS:
        raise NotBuilt(f"edgebench builds the native sampler for {', '.join(TARGETS)}, not {abi}")
    compiler = compiler_version()
    if compiler is None:
        raise NotBuilt(f"the ziglang package (Zig's C compiler, which builds it) is not installed: {INSTALL}")
    path = cache_dir("native-sampler") / f"{build_key(abi, compiler)}-{abi}" / BINARY
    if path.is_file():
        return path
    if not build_if_missing:
        raise NotBuilt(f"the native sampler for {abi} is not built yet")
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path.parent / ".lock"):
        if not path.is_file():  # another process built it while this one waited
            _compile(abi, path)
    return path


def _compile(abi: str, path: Path) -> None:
    with resources.as_file(resources.files(__package__).joinpath("sampler.c")) as source, replacing(path) as tmp:
        command = [sys.executable, "-m", "ziglang", "cc", "-target", TARGETS[abi], *FLAGS, "-o", str(tmp), str(source)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise NotBuilt(f"zig cc for {TARGETS[abi]} took over {BUILD_TIMEOUT_S:g} s") from None
        if done.returncode != 0:
            said = (done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}").splitlines()
            raise NotBuilt(f"zig cc for {TARGETS[abi]} failed: {said[0]}")
        tmp.chmod(0o755)


@contextlib.contextmanager
def _locked(lock: Path) -> Iterator[None]:
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)

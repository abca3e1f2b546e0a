"""The native sampler for the tests: each ABI built once (into the suite's cache of derived files, so the next run
and every xdist worker find it), and the arm builds run under qemu-user, as a phone or board would run them.

The first build of an ABI on a machine takes about a minute (Zig builds musl for it, in ``~/.cache/zig``); later
ones, and every later run, take none.  A missing toolchain or emulator fails the test with its install line.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from edgebench.agents.native.build import NotBuilt, built

INSTALL = "pip install 'edgebench[native-sampler]' && apt-get install -y qemu-user-static"
#: The shells devices run the sh sampler under.
SHELLS_INSTALL = "apt-get install -y mksh busybox"
#: The qemu-user emulator of each ABI this machine cannot run itself.
QEMU = {"aarch64": "qemu-aarch64-static", "arm": "qemu-arm-static"}


def native_sampler(abi: str) -> Path:
    """The native sampler built for ``abi``; a failure naming the install line where it cannot be built."""
    try:
        return built(abi)
    except NotBuilt as exc:
        pytest.fail(f"the native sampler for {abi} cannot be built: {exc} ({INSTALL})", pytrace=False)


def runnable_here(abi: str, folder: Path) -> Path:
    """A program that runs the ``abi`` build on this x86-64 machine: the build itself, or a two-line script that
    runs it under qemu-user (as binfmt_misc would, without registering anything machine-wide)."""
    binary = native_sampler(abi)
    if abi not in QEMU:
        return binary
    qemu = shutil.which(QEMU[abi])
    if qemu is None:
        pytest.fail(f"{QEMU[abi]} runs the {abi} build here: {INSTALL}", pytrace=False)
    wrapper = folder / f"edgebench-sampler-{abi}"
    wrapper.write_text(f'#!/bin/sh\nexec {qemu} {binary} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def device_shell(*argv: str) -> tuple[str, ...]:
    """A shell a device runs the script under (``mksh``, ``busybox sh``); a failure naming its install line."""
    if shutil.which(argv[0]) is None:
        pytest.fail(f"{argv[0]} is missing: {SHELLS_INSTALL}", pytrace=False)
    return argv

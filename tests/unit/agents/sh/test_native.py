"""Which sampler a ``--command`` trial runs: the device's ABI read as Android and Linux say it, the build copied once
per digest and checked to run there, and the sh loop, with the reason, wherever the native one cannot be had."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from edgebench.agents.native.build import VERSION, NotBuilt
from edgebench.agents.sh import native
from edgebench.agents.sh.native import SamplerChoice, choose_sampler, device_abi, install
from edgebench.errors import UsageError
from edgebench.records.trial import Trial
from edgebench.targets.shell import LocalShell


class Answering:
    """A device shell that answers every script with fixed output, as an old phone's pty would (CR LF)."""

    def __init__(self, stdout: str) -> None:
        self.stdout = stdout
        self.scripts: list[str] = []

    def run(self, script: str, *, timeout_s: float | None = None, stdin: bytes | None = None):
        self.scripts.append(script)
        return subprocess.CompletedProcess([script], 0, self.stdout.encode(), b"")

    def push(self, local: Path, remote: str) -> None:
        raise AssertionError("nothing is pushed before a build is chosen")

    def workdir(self) -> str:
        return "/data/local/tmp/edgebench"


@pytest.mark.parametrize(
    ("said", "abi"),
    [
        ("aarch64\r\narm64-v8a\r\n", "aarch64"),  # a phone: Android's ABI
        ("aarch64\narmeabi-v7a\n", "arm"),  # a 64-bit kernel under a 32-bit Android: the userland decides
        ("armv7l\n", "arm"),  # a Raspberry Pi OS 32-bit board: no getprop
        ("armv8l\n", "arm"),
        ("x86_64\n", "x86_64"),
        ("aarch64\n", "aarch64"),  # a Jetson
    ],
)
def test_the_abi_is_androids_where_it_says_one_else_uname(said: str, abi: str):
    assert device_abi(Answering(said))[0] == abi


@pytest.mark.parametrize("said", ["armv6l\n", "mips\n", "aarch64\nriscv64\n", ""])
def test_an_abi_without_a_build_says_which_ones_there_are(said: str):
    with pytest.raises(NotBuilt, match="builds the native sampler for aarch64, arm, x86_64"):
        device_abi(Answering(said))


def test_sh_and_a_local_auto_need_no_device_at_all():
    shell = Answering("x86_64\n")
    assert choose_sampler("sh", shell, native_by_default=True) == SamplerChoice("sh", "--sampler sh")
    local = choose_sampler("auto", shell, native_by_default=False)
    assert local.kind == "sh" and "unless --sampler native" in local.why
    assert shell.scripts == []


def test_without_the_toolchain_auto_falls_back_with_the_install_line_and_native_is_refused(monkeypatch):
    def missing(abi: str) -> Path:
        raise NotBuilt("the ziglang package (Zig's C compiler, which builds it) is not installed: pip install x")

    monkeypatch.setattr(native, "built", missing)
    choice = choose_sampler("auto", Answering("aarch64\narm64-v8a\n"), native_by_default=True)
    assert choice.kind == "sh" and choice.path is None
    assert choice.why == "no native sampler: the ziglang package (Zig's C compiler, which builds it) is not " \
        "installed: pip install x"  # fmt: skip
    with pytest.raises(UsageError, match=r"^--sampler: no native sampler for this device: the ziglang package"):
        choose_sampler("native", Answering("aarch64\n"), native_by_default=False)


def _fake_build(folder: Path, says: str = VERSION) -> Path:
    binary = folder / "edgebench-sampler"
    binary.write_text(f"#!/bin/sh\necho '{says}'\n")
    binary.chmod(0o755)
    return binary


class CountingShell(LocalShell):
    def __init__(self, workdir: Path) -> None:
        super().__init__("sh", workdir=workdir)
        self.pushed: list[str] = []

    def push(self, local: Path, remote: str) -> None:
        self.pushed.append(remote)
        super().push(local, remote)


def test_a_build_is_copied_under_its_digest_once_and_made_runnable(tmp_path):
    binary = _fake_build(tmp_path)
    shell = CountingShell(tmp_path / "device")
    first = install(shell, binary)
    assert first.startswith(f"{tmp_path}/device/native/") and first.endswith("/edgebench-sampler")
    assert install(shell, binary) == first
    assert shell.pushed == [first]  # the second trial found it there
    Path(first).chmod(0o644)  # a copy made by `cat` over SSH has no execute bit
    assert install(shell, binary) == first and len(shell.pushed) == 1
    Path(first).write_text("#!/bin/sh\necho torn\n")  # a copy cut short: another size, copied again
    assert install(shell, binary) == first and len(shell.pushed) == 2


def test_a_copy_that_does_not_run_on_the_device_is_no_native_sampler(tmp_path):
    binary = _fake_build(tmp_path, says="Exec format error")
    with pytest.raises(NotBuilt, match=r"does not run on the device \(--version said 'Exec format error'\)"):
        install(CountingShell(tmp_path / "device"), binary)


def test_sampler_sh_is_only_a_command_trials():
    Trial(command="./bench", step_pattern="^step$", sampler="sh")
    Trial(sampler="native")
    with pytest.raises(ValueError, match="sampler: sh is the loop of a --command trial"):
        Trial(sampler="sh")


def test_an_agent_without_a_native_build_samples_in_python_and_says_why(monkeypatch, tmp_path):
    from edgebench.agents.native import process
    from edgebench.sensors.sampler import SamplerConfig, SamplerProcess

    def missing() -> Path:
        raise NotBuilt("the ziglang package is not installed")

    monkeypatch.setattr(process, "this_machine", missing)
    config = SamplerConfig(out_csv=str(tmp_path / "s.csv"))
    assert type(process.sampler_process(config, "auto")) is SamplerProcess
    fallback = process.sampler_process(config, "native")
    assert isinstance(fallback, SamplerProcess)
    assert fallback.why == "--sampler native, but no native sampler here: the ziglang package is not installed"


def test_sampler_native_on_a_model_trial_here_is_refused_before_it_runs_without_a_build(monkeypatch):
    from edgebench.agents.native import build
    from edgebench.launch import agents
    from edgebench.targets.local import LocalTarget

    def missing() -> Path:
        raise NotBuilt("the ziglang package is not installed")

    monkeypatch.setattr(build, "this_machine", missing)
    with pytest.raises(UsageError, match=r"^--sampler: no native sampler for this machine: the ziglang package"):
        agents._run(LocalTarget(), Trial(sampler="native"), sample=True)

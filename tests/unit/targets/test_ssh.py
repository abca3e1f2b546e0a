"""SSH targets without a server: an address that drops packets fails within the connect timeout, in one line.
The tests against a real OpenSSH server are in tests/e2e/targets/test_ssh.py.
"""

from __future__ import annotations

import os
import socket
import time

import pytest

from edgebench.errors import UsageError
from edgebench.targets import open_target
from edgebench.targets.named import TargetConfig


@pytest.fixture
def blackhole():
    """A loopback port that drops every connection attempt, as an address whose host is off does: a listener whose
    accept queue is full and never served (Linux drops further SYNs then, and the client retries for minutes)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    fillers = []
    for _ in range(4):  # more than the queue holds: the rest of the handshakes stay unanswered
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(listener.getsockname())
        fillers.append(filler)
    yield listener.getsockname()[1]
    for sock in (*fillers, listener):
        sock.close()


def test_an_address_that_drops_packets_fails_within_the_connect_timeout(blackhole):
    """``--target ssh://<unreachable>`` hung for the kernel's SYN retries; the connect timeout ends it in one line."""
    url = f"ssh://127.0.0.1:{blackhole}"
    started = time.monotonic()
    with pytest.raises(UsageError, match=r"cannot reach .*timed out") as info:
        open_target("b", named={"b": TargetConfig(name="b", url=url, ssh_options=["ConnectTimeout=2"])})
    assert time.monotonic() - started < 60 and "\n" not in str(info.value)
    from edgebench.targets.ssh import SshShell

    assert "ConnectTimeout=10" in SshShell(url, workdir="/tmp").ssh_args()  # no option given: the default bounds it


@pytest.mark.parametrize(
    "url",
    ["ssh://-oProxyCommand", "ssh://-oproxycommand=touch${IFS}x", "ssh://-Fevil", "ssh://-oProxyCommand=x@host",
     "ssh://host?x=1", "ssh://h;touch"],
)  # fmt: skip
def test_a_host_or_user_that_ssh_would_read_as_an_option_is_refused(url, tmp_path, monkeypatch, capsys):
    """Issue 39, options from data: ``sensors --target 'ssh://-oproxycommand...'`` handed the host to ssh as an
    option.  Refused in one line before ssh runs (no ssh at all: PATH holds none here)."""
    from tests.factories import refused

    monkeypatch.setenv("PATH", str(tmp_path))
    line = refused(capsys, "sensors", "--target", url)
    assert "--target" in line


def test_the_host_comes_after_double_dash():
    from edgebench.targets.ssh import SshShell

    args = SshShell("ssh://me@board:2222", workdir="/tmp").command_line("true")
    assert args[-3:-1] == ["--", "board"] and args.index("-l") < args.index("--")


@pytest.mark.parametrize(
    ("settings", "field"),
    [({"ssh_options": ["ProxyCommand=touch /tmp/x"]}, "ssh_options"), ({"ssh_options": ["-oFoo"]}, "ssh_options"),
     ({"env": {"A; rm -rf ~; B": "1"}}, "env"), ({"workdir": "-rf"}, "workdir")],
)  # fmt: skip
def test_a_shared_targets_settings_cannot_become_commands(settings, field):
    """A target's settings can come from a lab's config or a sweep's YAML: none runs a command here."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as info:
        TargetConfig(url="ssh://board", **settings)
    assert info.value.errors()[0]["loc"][0] == field


@pytest.mark.parametrize("serial", ["-H", "-s x", "a b", "x;reboot", ""])
def test_a_serial_that_adb_would_read_as_an_option_is_refused(serial):
    from edgebench.targets.adb import check_serial

    with pytest.raises(UsageError, match="not a device serial"):
        check_serial(serial)
    assert check_serial("192.168.1.23:5555") and check_serial("emulator-5554")


def test_the_master_connections_folder_is_this_processs_and_goes_with_it():
    """Issue 39: an ssh control master outlived the suite by minutes, its socket in a shared ``/tmp`` folder.  Each
    shell's master lives in a folder of its own in the temporary folder, removed when the shell closes (or is
    collected, or the process ends)."""
    import gc
    import tempfile
    from pathlib import Path

    from edgebench.targets.ssh import SshShell

    shell = SshShell("ssh://board", workdir="/tmp")
    folder = Path(shell.control_path).parent
    assert folder.is_dir() and folder.parent == Path(tempfile.gettempdir())
    assert folder.name.startswith(f"edgebench-{os.getpid()}-ssh-") and len(shell.control_path) < 90
    shell.close()
    assert not folder.exists()
    again = Path(SshShell("ssh://board", workdir="/tmp").control_path).parent
    gc.collect()
    assert not again.exists()

"""SSH targets without a server: an address that drops packets fails within the connect timeout, in one line.
The tests against a real OpenSSH server are in tests/e2e/targets/test_ssh.py.
"""

from __future__ import annotations

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

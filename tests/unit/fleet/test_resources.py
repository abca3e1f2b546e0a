"""A fleet's Ray resources and placement, computed without a cluster: each device by its name, class and host.
The tests on a real Ray cluster are in tests/e2e/fleet/test_fleet.py.
"""

from __future__ import annotations

from edgebench.fleet.devices import Device, devices_of_nodes, local_device, resources_of
from edgebench.fleet.placement import placement_of


def test_resources_name_each_device_its_class_and_host():
    devices = [local_device("h1"), Device("pixel-a", "pixel7", "h1", "adb://A")]
    node = {"Alive": True, "NodeID": "n1", "Resources": {"CPU": 1.0, **resources_of(devices, "h1")}}
    found = devices_of_nodes([node, {"Alive": False, "Resources": resources_of([local_device("h9")], "h9")}])
    assert [(d.name, d.device_class, d.host) for d in found] == [("local@h1", "local", "h1"),
                                                                 ("pixel-a", "pixel7", "h1")]  # fmt: skip
    assert placement_of("local").accepts(found[0]) and not placement_of("local").accepts(found[1])
    assert placement_of("class:pixel7").accepts(found[1]) and placement_of("pixel-a").accepts(found[1])
    assert not placement_of("pixel-b").accepts(found[1])


def test_an_address_nothing_answers_at_is_one_line_at_once(capsys):
    """Issue 39: ``fleet status --address 127.0.0.1:1`` hung past 60 s (Ray's client retries for minutes)."""
    import socket
    import time

    from tests.factories import refused

    with socket.socket() as listener:  # a port nothing listens on: bound, never listening
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        started = time.monotonic()
        line = refused(capsys, "fleet", "status", "--address", f"127.0.0.1:{port}")
    assert "no Ray cluster at" in line and time.monotonic() - started < 30
    assert "not a host name" in refused(capsys, "fleet", "status", "--address", "-oProxyCommand=x:1")
    assert "HOST:PORT" in refused(capsys, "fleet", "status", "--address", "somewhere")

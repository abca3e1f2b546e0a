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

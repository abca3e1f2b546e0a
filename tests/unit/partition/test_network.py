"""The network profiles: the reference figures, and a user's own from YAML."""

import pytest

from edgebench.errors import UsageError
from edgebench.partition.network import DEFAULT_NETWORKS, choose_network, load_networks


def test_default_networks_are_the_reference_figures():
    wifi, lte, g3 = DEFAULT_NETWORKS["wifi"], DEFAULT_NETWORKS["lte"], DEFAULT_NETWORKS["3g"]
    assert (wifi.up_mbps, lte.up_mbps, g3.up_mbps) == (18.88, 5.85, 1.1)
    assert (lte.alpha_up_mw_per_mbps, lte.alpha_down_mw_per_mbps, lte.beta_mw) == (438.39, 51.97, 1288.04)
    assert (wifi.alpha_up_mw_per_mbps, wifi.alpha_down_mw_per_mbps, wifi.beta_mw) == (283.17, 137.01, 132.86)
    assert (g3.alpha_up_mw_per_mbps, g3.alpha_down_mw_per_mbps, g3.beta_mw) == (868.98, 122.12, 817.88)
    # 1 MB up over LTE: 8 Mbit / 5.85 Mbps, at 438.39 * 5.85 + 1288.04 mW.
    assert lte.up_ms(1e6) == pytest.approx(8e3 / 5.85)
    assert lte.up_energy_j(1e6) == pytest.approx((438.39 * 5.85 + 1288.04) * 1e-3 * 8 / 5.85)
    assert choose_network(DEFAULT_NETWORKS, "4G").name == "lte"


def test_user_networks_from_yaml(tmp_path):
    path = tmp_path / "nets.yaml"
    path.write_text("networks:\n  lab:\n    up_mbps: 100\n    down_mbps: 200\n    rtt_ms: 2\n  wifi:\n"
                    "    up_mbps: 50\n    down_mbps: 50\n    rtt_ms: 5\n    alpha_up_mw_per_mbps: 1\n"
                    "    alpha_down_mw_per_mbps: 1\n    beta_mw: 1\n")  # fmt: skip
    nets = load_networks(path)
    assert nets["lab"].up_mbps == 100 and nets["lab"].beta_mw == DEFAULT_NETWORKS["wifi"].beta_mw
    assert "Wi-Fi default" in nets["lab"].source
    assert nets["wifi"].up_mbps == 50 and nets["3g"] == DEFAULT_NETWORKS["3g"]
    path.write_text("networks:\n  lab:\n    up_mbps: -1\n    down_mbps: 2\n    rtt_ms: 1\n")
    with pytest.raises(UsageError, match=r"networks\.lab\.up_mbps: must be greater than 0"):
        load_networks(path)
    path.write_text("networks:\n  lab:\n    up_mbps: 1\n    down_mbps: 2\n    rtt_ms: 1\n    speed: 3\n")
    with pytest.raises(UsageError, match=r"networks\.lab\.speed"):
        load_networks(path)
    with pytest.raises(UsageError, match="--network: 'carrier-pigeon' is not a network profile"):
        choose_network(nets, "carrier-pigeon")

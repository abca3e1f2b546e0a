"""Network profiles: how fast the link between the device and the server is, and what its radio draws.

The defaults are REFERENCE.md section 4: Neurosurgeon's average uplink bandwidths (Kang et al., ASPLOS 2017) and
the radio power model of Huang et al. (MobiSys 2012), ``P = alpha_u * t_u + alpha_d * t_d + beta`` in mW with the
throughputs in Mbps.  Neither paper gives one downlink figure and round-trip time to pair with those uplinks, so
the defaults' downlinks and RTTs are typical values, labelled as assumed in ``source``: measure your own link or
write it in a YAML file (``--networks FILE``) when the ranking depends on them.

Transfer time is ``bytes * 8 / bandwidth`` each way plus one round trip; transfer energy is the radio's power
while it sends at the uplink rate (``alpha_u * up + beta``) times the sending time, plus the same for receiving.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from edgebench.errors import UsageError, explain
from edgebench.host.files import yaml_file
from edgebench.records.model import Record


class NetworkProfile(Record):
    """One link between the device and the server."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    up_mbps: float = Field(gt=0)
    down_mbps: float = Field(gt=0)
    rtt_ms: float = Field(ge=0)
    #: Huang et al.'s radio power model, mW per Mbps of uplink / downlink throughput, and the base power in mW.
    alpha_up_mw_per_mbps: float = Field(ge=0)
    alpha_down_mw_per_mbps: float = Field(ge=0)
    beta_mw: float = Field(ge=0)
    #: Where the figures come from.
    source: str = "user"

    def up_ms(self, n_bytes: float) -> float:
        return n_bytes * 8 / (self.up_mbps * 1e6) * 1e3

    def down_ms(self, n_bytes: float) -> float:
        return n_bytes * 8 / (self.down_mbps * 1e6) * 1e3

    def up_power_mw(self) -> float:
        return self.alpha_up_mw_per_mbps * self.up_mbps + self.beta_mw

    def down_power_mw(self) -> float:
        return self.alpha_down_mw_per_mbps * self.down_mbps + self.beta_mw

    def up_energy_j(self, n_bytes: float) -> float:
        """Radio energy to send ``n_bytes`` (mW x ms = uJ)."""
        return self.up_power_mw() * self.up_ms(n_bytes) * 1e-6

    def down_energy_j(self, n_bytes: float) -> float:
        return self.down_power_mw() * self.down_ms(n_bytes) * 1e-6

    def at_uplink(self, up_mbps: float) -> NetworkProfile:
        """The same link at another uplink bandwidth, the downlink scaled in proportion (a bandwidth sweep)."""
        scale = up_mbps / self.up_mbps
        return self.model_copy(update={"up_mbps": up_mbps, "down_mbps": self.down_mbps * scale})


_CITED = "uplink: Neurosurgeon (Kang et al. 2017); power: Huang et al. 2012; downlink and RTT assumed"

DEFAULT_NETWORKS: dict[str, NetworkProfile] = {
    "3g": NetworkProfile(
        name="3g",
        up_mbps=1.1,
        down_mbps=2.0,
        rtt_ms=200.0,
        alpha_up_mw_per_mbps=868.98,
        alpha_down_mw_per_mbps=122.12,
        beta_mw=817.88,
        source=_CITED,
    ),
    "lte": NetworkProfile(
        name="lte",
        up_mbps=5.85,
        down_mbps=12.0,
        rtt_ms=70.0,
        alpha_up_mw_per_mbps=438.39,
        alpha_down_mw_per_mbps=51.97,
        beta_mw=1288.04,
        source=_CITED,
    ),
    "wifi": NetworkProfile(
        name="wifi",
        up_mbps=18.88,
        down_mbps=40.0,
        rtt_ms=20.0,
        alpha_up_mw_per_mbps=283.17,
        alpha_down_mw_per_mbps=137.01,
        beta_mw=132.86,
        source=_CITED,
    ),
}
#: Other spellings of the default names.
ALIASES = {"4g": "lte", "4g/lte": "lte", "wi-fi": "wifi", "wlan": "wifi"}


def load_networks(path: Path | None) -> dict[str, NetworkProfile]:
    """The default profiles plus those in ``path`` (YAML: ``networks: {name: {up_mbps: ..., ...}}``), which win.

    A missing ``alpha``/``beta`` takes the Wi-Fi default's and says so in ``source``; a bad value is an error
    naming the profile and key.
    """
    networks = dict(DEFAULT_NETWORKS)
    if path is None:
        return networks
    if not path.exists():
        raise UsageError("--networks", f"{path} does not exist; give a YAML file with a networks: mapping")
    doc = yaml_file(path, "--networks", "a YAML file with a networks: mapping")
    section = doc.get("networks") if isinstance(doc, dict) else None
    if not isinstance(section, dict) or not section:
        raise UsageError("--networks", f"{path} needs a networks: mapping of name -> {{up_mbps, down_mbps, rtt_ms}}")
    for name, values in section.items():
        networks[str(name).lower()] = _profile(str(name).lower(), values, path)
    return networks


def _profile(name: str, values: Any, path: Path) -> NetworkProfile:
    if not isinstance(values, dict):
        raise UsageError("--networks", f"{path}: networks.{name} must be a mapping (up_mbps, down_mbps, rtt_ms...)")
    radio = {k: v for k, v in DEFAULT_NETWORKS["wifi"].model_dump().items() if k.startswith(("alpha", "beta"))}
    given = dict(values)
    source = str(given.pop("source", f"user: {path.name}"))
    if not any(k in given for k in radio):
        source += "; radio power: the Wi-Fi default (Huang et al. 2012)"
    try:
        return NetworkProfile(name=name, source=source, **{**radio, **given})
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(p) for p in error["loc"])
        raise UsageError("--networks", f"{path}: networks.{name}.{key}: {explain(error)}") from None


def choose_network(networks: dict[str, NetworkProfile], name: str) -> NetworkProfile:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in networks:
        raise UsageError("--network", f"{name!r} is not a network profile; choose one of: {', '.join(networks)}")
    return networks[key]

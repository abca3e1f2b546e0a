"""``edgebench system``: what makes a device noisy, and tune/reset through SysFS on writable copies of fixture trees."""

from __future__ import annotations

import json

import pytest

from edgebench.errors import UsageError
from edgebench.host.sysfs import SysFS
from edgebench.host.tuning import checks, reset, tune
from tests.factories import POLICIES, laptop_tree


@pytest.fixture
def laptop(tmp_path):
    return laptop_tree(tmp_path)


def governors(root):
    return {p.parent.name: p.read_text().strip() for p in sorted((root / POLICIES).glob("policy*/scaling_governor"))}


def test_show_names_each_noise_source_with_advice(laptop):
    found = {c.name.split(" (")[0] if c.name.startswith("governor") else c.name: c for c in checks(SysFS(laptop), 8)}
    assert found["turbo/boost"].state.startswith("on") and found["turbo/boost"].advice
    assert found["other load"].state == "load average 6.50 on 8 cores" and found["other load"].advice
    governor = next(c for c in checks(SysFS(laptop), 8) if c.name.startswith("governor"))
    assert governor.advice and "system tune" in governor.advice  # powersave/ondemand lets the clock follow load


def test_tune_sets_performance_and_boost_off_and_reset_puts_back_what_was_there(laptop, tmp_path):
    before = governors(laptop)
    assert set(before.values()) != {"performance"}
    state = tmp_path / "state" / "tune.json"
    changed = tune(SysFS(laptop), state, is_root=lambda: True)
    assert (
        set(governors(laptop).values()) == {"performance"} and (laptop / POLICIES / "boost").read_text().strip() == "0"
    )
    assert any("boost off" in line for line in changed) and state.exists()
    tune(SysFS(laptop), state, is_root=lambda: True)  # again: the saved state is the device's own, kept
    assert json.loads(state.read_text())["boost"][1] == "1"
    reset(SysFS(laptop), state, is_root=lambda: True)
    assert governors(laptop) == before and (laptop / POLICIES / "boost").read_text().strip() == "1"
    assert not state.exists()


def test_tune_and_reset_refuse_without_root_or_state(laptop, tmp_path):
    with pytest.raises(UsageError, match="needs root"):
        tune(SysFS(laptop), tmp_path / "s.json", is_root=lambda: False)
    assert not (tmp_path / "s.json").exists() and (laptop / POLICIES / "boost").read_text().strip() == "1"
    with pytest.raises(UsageError, match="has not changed anything"):
        reset(SysFS(laptop), tmp_path / "s.json", is_root=lambda: True)
    with pytest.raises(UsageError, match="nothing to tune"):
        tune(SysFS(tmp_path), tmp_path / "s.json", is_root=lambda: True)  # an empty tree: no cpufreq, no boost


def test_a_state_folder_gets_the_state_file_inside_it(laptop, tmp_path):
    """Issue 39: ``system tune --state EXISTING_DIR`` said it saved the state and saved nothing."""
    folder = tmp_path / "states"
    folder.mkdir()
    before = governors(laptop)
    tune(SysFS(laptop), folder, is_root=lambda: True)
    assert (folder / "system-tune.json").is_file()
    reset(SysFS(laptop), folder, is_root=lambda: True)
    assert governors(laptop) == before and not any(folder.iterdir())


@pytest.mark.parametrize(
    "saved",
    ['{"policies": [{"path": "/etc", "governor": null, "min_khz": null, "max_khz": null, "setspeed_khz": null}]}',
     '{"policies": [], "boost": ["/etc/passwd", "1"]}', '{"policies": [], "boost": ["BOOST", "rm -rf"]}',
     "not json", "[" * 100_000, '{"policies": [7]}'],
)  # fmt: skip
def test_a_damaged_state_file_writes_nothing_and_says_so(laptop, tmp_path, saved):
    state = tmp_path / "tune.json"
    state.write_text(saved.replace("BOOST", "/sys/devices/system/cpu/intel_pstate/no_turbo"))
    before = governors(laptop), (laptop / POLICIES / "boost").read_text()
    with pytest.raises(UsageError, match="cannot be put back") as info:
        reset(SysFS(laptop), state, is_root=lambda: True)
    assert info.value.field == "--state" and "\n" not in str(info.value)
    with pytest.raises(UsageError, match="cannot be put back"):
        tune(SysFS(laptop), state, is_root=lambda: True)  # a tune over it would leave reset nothing to put back
    assert (governors(laptop), (laptop / POLICIES / "boost").read_text()) == before and state.exists()

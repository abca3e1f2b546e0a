import pytest

from edgebench.units import parse_duration_s, parse_freq_khz, parse_percent, parse_shape, parse_size_bytes


def test_durations():
    assert parse_duration_s("10ms") == pytest.approx(0.01)
    assert parse_duration_s("1h") == 3600
    assert parse_duration_s("30m") == 1800
    assert parse_duration_s("250us") == pytest.approx(250e-6)
    assert parse_duration_s("10", default_unit="ms") == pytest.approx(0.01)
    with pytest.raises(ValueError, match="duration"):
        parse_duration_s("ten")


def test_sizes():
    assert parse_size_bytes("8GiB") == 8 * 2**30
    assert parse_size_bytes("2GB") == 2_000_000_000
    assert parse_size_bytes("512") == 512
    with pytest.raises(ValueError, match="size"):
        parse_size_bytes("8 parsecs")


def test_shapes():
    assert parse_shape("3x224x224") == (3, 224, 224)
    assert parse_shape("1,28,28") == (1, 28, 28)
    with pytest.raises(ValueError):
        parse_shape("3x0x2")


def test_percentages():
    assert parse_percent("2%") == 2.0 and parse_percent("2") == 2.0 and parse_percent("0.5%") == 0.5
    assert parse_percent(1.5) == 1.5
    with pytest.raises(ValueError, match="write 2% for a fraction"):
        parse_percent("0.02")
    with pytest.raises(ValueError, match="percentage"):
        parse_percent("two")


def test_frequencies():
    assert parse_freq_khz("1708800") == 1_708_800 and parse_freq_khz(600000) == 600_000
    assert parse_freq_khz("1.7GHz") == 1_700_000 and parse_freq_khz("600 MHz") == 600_000
    assert parse_freq_khz("1708800kHz") == 1_708_800
    with pytest.raises(ValueError, match="frequency"):
        parse_freq_khz("fast")

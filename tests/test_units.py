import pytest

from edgebench.units import parse_duration_s, parse_shape, parse_size_bytes


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

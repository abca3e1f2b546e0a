import pytest

from edgebench.host.cpuset import format_cpu_list, format_mask, parse_cores, parse_cpu_list


@pytest.mark.parametrize(
    ("text", "cores"),
    [
        ("f0", (4, 5, 6, 7)),  # the MNN-based suite's big cluster
        ("0xF0", (4, 5, 6, 7)),
        ("3", (0, 1)),  # a bare token is a mask, as in taskset
        ("0x1", (0,)),
        ("0,2-3", (0, 2, 3)),
        ("2-2", (2,)),
        ("5,", (5,)),
        ("0-1,1", (0, 1)),
    ],
)
def test_parse_cores(text, cores):
    assert parse_cores(text) == cores


@pytest.mark.parametrize("text", ["", "0", "zz", "3-1", "1,,2", "0x"])
def test_parse_cores_rejects(text):
    with pytest.raises(ValueError):
        parse_cores(text)


def test_round_trip():
    assert format_mask((4, 5, 6, 7)) == "f0"
    assert format_cpu_list((0, 1, 2, 5, 7, 8)) == "0-2,5,7-8"
    assert parse_cpu_list(format_cpu_list((0, 1, 2, 5))) == (0, 1, 2, 5)

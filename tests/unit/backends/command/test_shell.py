"""Which commands ``exec`` can put in the place of the shell that runs them (backends/command/shell.py)."""

from __future__ import annotations

import pytest

from edgebench.backends.command.shell import in_place


@pytest.mark.parametrize(
    "command",
    ["./bench.sh", "./bench --n 3 > out.txt 2>&1", "python train.py --steps 25", "'./my prog' 'a;b'",
     "./runTrainDemo.out MnistBenchmark data 8 MobileNetV2"],
)  # fmt: skip
def test_one_program_is_exec_d(command: str) -> None:
    assert in_place(command) == f"exec {command}"


def test_a_command_already_exec_d_is_kept() -> None:
    assert in_place("exec ./x") == "exec ./x"


@pytest.mark.parametrize(
    "command",
    ["cd x && ./b", "a; b", "a | b", "./x &", "A=1 ./x", "time ./x", "./x $(nproc)", "./x `nproc`", "./x\n./y",
     "i=0; while true; do echo; done", "'unclosed", ""],
)  # fmt: skip
def test_anything_else_runs_as_its_shell(command: str) -> None:
    """A list, a pipeline, a background job, an assignment or a keyword first, a substitution, several lines."""
    assert in_place(command) is None

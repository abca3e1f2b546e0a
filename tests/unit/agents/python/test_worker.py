"""How a worker's failures become a trial's status."""

import subprocess
import sys

from edgebench.agents.python import agent
from edgebench.agents.python.worker import classify_failure


def test_oom_and_crash_classification():
    assert classify_failure(MemoryError())[0] == "oom"
    status, reason = classify_failure(
        RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory: you tried...")
    )
    assert status == "oom" and reason.startswith("out of memory")
    assert classify_failure(ValueError("bad shape\nmore")) == ("crashed", "ValueError: bad shape")


def test_sigkill_is_reported_as_probable_oom(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    proc.wait()
    status, reason = agent._failure(proc, tmp_path / "none.jsonl", tmp_path / "none.stderr", None)
    assert status == "oom" and "SIGKILL" in reason


def test_other_signals_and_exit_codes_are_crashes(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    proc.wait()
    assert agent._failure(proc, tmp_path / "e", tmp_path / "s", None) == ("crashed", "worker killed by SIGSEGV")
    stderr = tmp_path / "stderr"
    stderr.write_text("Traceback...\nImportError: no module named foo\n")
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(5)"])
    proc.wait()
    assert agent._failure(proc, tmp_path / "e", stderr, None) == ("crashed", "ImportError: no module named foo")

"""The partition solver on hand-built cost tables whose optima are known (no torch, no trial).  The end-to-end half:
what runs the real command, a real worker or another process; the rest is in tests/unit/partition/test_solver.py.
"""

import subprocess
import sys


def test_the_solver_imports_no_torch():
    """The analyzer's framework-free half: torch comes in only through graph/torch_graph.py."""
    code = (
        "import sys, edgebench.partition.analysis, edgebench.partition.network, edgebench.report.partition, "
        "edgebench.store.importing, edgebench.cli.partition, edgebench.cli.importing, edgebench.workflows.partition, "
        "edgebench.workflows.exchange\n"
        "print('torch' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"

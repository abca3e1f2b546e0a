"""The store's claims on sweep trials: held while the claiming process lives, taken over after.  Two sweeps racing
for real are in tests/e2e/cli/test_sweep_concurrent.py.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from edgebench.store import Store
from edgebench.store.sqlite import Claimant


def test_a_claim_is_held_while_its_process_lives_and_taken_over_after(tmp_path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = socket.gethostname()
    dead, alive, me = (
        Claimant("dead", host, int(gone.stdout)),
        Claimant("parent", host, os.getppid()),
        Claimant.this_process(),
    )
    with Store(tmp_path / "s.sqlite") as store:
        assert store.claim("sw", "k1", dead) is None
        assert store.claim("sw", "k1", me) is None  # its process is gone: taken over
        assert store.claim("sw", "k2", alive) is None
        assert "being run by another sweep" in store.claim("sw", "k2", me)
        # a refusal ends its transaction: the next claim (what the refused sweep does next) goes through at once
        # (a second sweep of the same name failed with "cannot start a transaction within a transaction")
        assert store.claim("sw", "k3", me) is None
        store.release_claims(alive)
        assert store.claim("sw", "k2", me) is None

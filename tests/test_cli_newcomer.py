"""A newcomer's first hour: ``run`` says where the trial went."""

from __future__ import annotations

import re

from edgebench.store import Store


def test_run_says_where_it_stored_the_trial(cli):
    proc = cli("run", "--steps", "1", "--warmup", "0", "--infer-steps", "0")
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    match = re.fullmatch(r"stored as trial (\S+) in (.+)", line)
    assert match and match.group(2) == str(cli.store_path), line
    with Store(cli.store_path) as store:
        assert store.get(match.group(1)).status == "ok"

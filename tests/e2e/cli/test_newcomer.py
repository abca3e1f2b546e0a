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


def test_help_shows_defaults_written_in_brackets(cli):
    # the help text is plain: "[default: ...]" in it is text, not a markup tag for rich to swallow
    for command in ("run", "frameworks", "feasibility", "trials"):
        proc = cli(command, "--help")
        assert proc.returncode == 0, proc.stderr
        assert "SQLite store [default: $EDGEBENCH_STORE or" in " ".join(proc.stdout.split()), command

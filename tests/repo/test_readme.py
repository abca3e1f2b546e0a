"""The README's examples run as written, and its pasted output is the shape the commands print.

Every ``edgebench`` line of the README's ``sh`` blocks is either run here or listed in :data:`NOT_RUN` with the
reason; a new example that is neither fails :func:`test_every_readme_example_is_run_or_says_why_not`.  The install
lines are not run here: the second one is what ``.ci/run`` runs (checked below), the first installs this package.
"""

from __future__ import annotations

import json
import re
import shlex

from tests.paths import ROOT

README = (ROOT / "README.md").read_text()

#: The README's examples this file does not run, and why.  The SSH and adb forms are run against a real sshd on
#: 127.0.0.1 and Debian's adb by tests/e2e/targets/test_ssh.py and tests/e2e/targets/test_adb.py, not with these hosts.
NOT_RUN = {
    "edgebench run --target ssh://pi@raspberrypi --model mobilenet_v2 --steps 20": "needs a board named raspberrypi",
    "edgebench run --target adb://8A2X0KDLN --root --command './runTrainDemo.out MnistBenchmark data 32 Lenet' "
    "--push build/runTrainDemo.out,data --step-pattern mnn-train-demo": "needs that phone and MNN's demo binary",
    "edgebench study tx2 --quick --html tx2.html": "run with --json and --html by tests/test_cli_study.py",
}

#: The trial id the README's pasted output shows; its examples that name it are run with the id of the trial this
#: test ran instead.
README_TRIAL = "20261126-052535"


#: Rows a run shows only when they apply: a figure withheld (too short a window on a fast machine), a hygiene
#: warning, a distortion.
CONDITIONAL = {"withheld", "warning", "distorted by"}


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def examples() -> list[str]:
    return [line.strip() for block in blocks("sh") for line in block.splitlines() if line.startswith("edgebench")]


def setup_lines() -> list[str]:
    return blocks("sh")[0].strip().splitlines()


def test_the_first_lines_are_the_two_setup_commands_and_ci_runs_the_second():
    assert README.splitlines()[2:6] == ["```sh", *setup_lines(), "```"]
    install, test = setup_lines()
    assert install == "pip install -e . && edgebench run"
    assert "pytest" in test and "mkdocs build --strict" in test and "'.[test,docs]'" in test
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test in ci, ".ci/run must run the README's test line as written"
    assert ci.index(test) < next(i for i, line in enumerate(ci) if line.startswith("ruff check"))


def test_the_readme_stays_short():
    assert len(README.splitlines()) <= 150


def test_every_readme_example_is_run_or_says_why_not():
    run_here = {
        "edgebench run",
        "edgebench run --model lenet --batch-size 8 --threads 2 --cores 0x3 --steps 10 --json",
        "edgebench trials --last 5",
        f"edgebench show {README_TRIAL}",
        "edgebench export --format csv --out trials.csv",
    }
    assert set(examples()) == run_here | set(NOT_RUN)


def test_the_command_map_lists_every_command():
    import typer

    from edgebench.cli import app

    commands = list(typer.main.get_command(app).commands)
    listed = re.findall(r"^\| `(\w+)` \|", README, re.M)
    assert listed == commands


def test_the_quick_start_runs_as_the_readme_shows(cli, tmp_path):
    """The README's quick start, then its store examples on the trial it stored (the id substituted)."""
    proc = cli("run")
    assert proc.returncode == 0, proc.stderr
    shown = next(b for b in blocks("text") if "stored as trial" in b)
    labels = [m.group(1).strip() for m in re.finditer(r"^│ ([^│]+?) +│", shown, re.M) if m.group(1).strip()]
    assert labels[:2] == ["status", "train step (ms)"] and "throughput" in labels
    for label in set(labels) - CONDITIONAL:
        assert f"│ {label}" in proc.stdout, label
    trial_id = re.search(r"stored as trial (\S+) in ", proc.stdout).group(1)
    assert re.search(r"stored as trial \S+ in \S+", shown)

    as_json = cli(*shlex.split(next(e for e in examples() if e.endswith("--json")))[1:])
    assert as_json.returncode == 0, as_json.stderr
    record = json.loads(as_json.stdout)
    assert record["trial"]["batch_size"] == 8 and record["latency"]["measured_steps"] == 10

    listing = cli("trials", "--last", "5")
    assert listing.returncode == 0, listing.stderr
    assert trial_id in listing.stdout and "2 stored trials" in listing.stdout

    show = cli("show", trial_id[: len(README_TRIAL)])
    assert show.returncode == 0, show.stderr
    summary = [line.rstrip() for line in proc.stdout.splitlines() if not line.startswith("stored as trial")]
    assert [line.rstrip() for line in show.stdout.splitlines()] == summary

    export = cli("export", "--format", "csv", "--out", "trials.csv", cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    rows = (tmp_path / "trials.csv").read_text().splitlines()
    assert len(rows) == 3 and trial_id in "\n".join(rows)

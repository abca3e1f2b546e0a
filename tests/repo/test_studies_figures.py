"""docs/studies-figures.md lists one command per figure; docs/figures/make_studies_figures.py runs those commands
to draw the pictures the page shows.  This keeps the two the same list (so neither can drift from the other), and
every picture the page shows present."""

import importlib.util
import re
import sys

from tests.paths import ROOT

PAGE = ROOT / "docs" / "studies-figures.md"
SCRIPT = ROOT / "docs" / "figures" / "make_studies_figures.py"
CELL_CODE = re.compile(r"`([^`]+)`")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


def _script():
    spec = importlib.util.spec_from_file_location("make_studies_figures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _table_rows() -> list[list[str]]:
    """The cells of the figures table: the rows after the header whose first cell is `figure`."""
    lines = PAGE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| figure |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def test_the_page_lists_exactly_the_commands_the_script_runs():
    script = _script()
    rows = _table_rows()
    listed = [CELL_CODE.findall(row[2])[0] for row in rows]
    assert listed == [f.command for f in script.FIGURES]
    refs = {t.ref for t in script.TRIALS}
    for row, figure in zip(rows, script.FIGURES, strict=True):
        assert f"`{figure.uses}`" in row[3], (figure.slug, row[3])  # which trials (device, tree) it was drawn from
        assert figure.uses in refs


def test_the_page_lists_the_commands_that_ran_the_trials():
    page = PAGE.read_text()
    for trials in _script().TRIALS:
        assert f"`{trials.ref}`" in page
        for command in trials.commands:
            assert f"$ {command}\n" in page, command


def test_every_row_shows_its_picture_and_every_picture_exists():
    script = _script()
    for row, figure in zip(_table_rows(), script.FIGURES, strict=True):
        shown = IMAGE.findall(row[1])
        assert shown == [f"figures/studies/thumbs/{figure.slug}.png"], row[1]
        assert f"](figures/studies/{figure.slug}.png)" in row[1]
    for path in IMAGE.findall(PAGE.read_text()):
        assert (PAGE.parent / path).is_file(), path
    assert (PAGE.parent / "figures" / "studies" / "all-figures.png").is_file()


def test_the_script_splits_environment_and_arguments_as_a_shell_would():
    env, argv = _script().split("EDGEBENCH_FAKE_STEP_MS=50 edgebench run --set models=[lenet] -o 'a b.png'")
    assert env == {"EDGEBENCH_FAKE_STEP_MS": "50"}
    assert argv[1:] == ["-m", "edgebench", "run", "--set", "models=[lenet]", "-o", "a b.png"]

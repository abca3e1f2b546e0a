"""The docs site builds with warnings as errors, from the repository alone, and its generated reference holds every
command, every setting and every result field the code declares (docs/hooks/reference.py writes those pages)."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

INSTALL = "pip install -e '.[docs]' (mkdocs and mkdocs-material)"


def page_text(site: Path, page: str) -> str:
    """A built page's text as a reader sees it: tags dropped, entities decoded."""
    raw = (site / page / "index.html").read_text()
    return html.unescape(re.sub(r"<[^>]+>", "", raw))


def table_rows(site: Path, page: str) -> list[str]:
    """Each table row of a built page as one line of text, its cells joined by `` | ``."""
    raw = (site / page / "index.html").read_text()
    return [
        " | ".join(
            html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr, re.S)
        )
        for tr in re.findall(r"<tr>(.*?)</tr>", raw, re.S)
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError:
        pytest.fail(f"the docs build needs mkdocs-material: {INSTALL}")
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def test_every_command_has_its_help_in_the_reference(site):
    import typer

    from edgebench.cli import app

    text = page_text(site, "reference/cli")
    root = typer.main.get_command(app)
    names = [(name, cmd) for name, cmd in root.commands.items()]
    assert len(names) >= 20
    for name, cmd in names:
        assert f"edgebench {name}\n" in text or f"edgebench {name}¶" in text, name
        assert f"Usage: edgebench {name} " in text, name
        for sub in getattr(cmd, "commands", {}):
            assert f"Usage: edgebench {name} {sub} " in text, f"{name} {sub}"


def test_every_setting_is_in_the_reference_with_flag_key_and_default(site):
    from edgebench.config.settings import SETTINGS

    rows = table_rows(site, "reference/settings")
    for s in SETTINGS:
        # one row: the flag, the YAML key, the default as users write it, and the help
        default = s.shown_default if s.shown_default is not None else repr(s.trial_default)
        row = [r for r in rows if r.startswith(s.flag + " |") or r.startswith(s.flag + ", ")]
        assert len(row) == 1, s.field
        cells = row[0].split(" | ")
        assert (
            cells[1].removesuffix(" (axis)") == s.key and cells[3] == default and cells[4] == s.help.replace("`", "")
        ), row


def test_every_result_field_is_in_the_reference_by_its_schema_4_path(site):
    from edgebench.records.result import TrialResult

    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import reference
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    text = page_text(site, "reference/results")
    paths = [path for path, _, _ in reference.result_rows()]
    assert set(TrialResult.model_fields) <= set(paths)
    for group in ("latency", "memory", "cpu", "energy", "estimated_energy", "accuracy", "device"):
        model = TrialResult.model_fields[group].annotation
        model = next(a for a in getattr(model, "__args__", (model,)) if a is not type(None))
        assert {f"{group}.{name}" for name in model.model_fields} <= set(paths), group
    listed = {row.split(" | ")[0] for row in table_rows(site, "reference/results")}
    assert [p for p in paths if p not in listed] == []
    assert "trial.model" in text


def test_the_guides_and_the_developer_pages_are_built(site):
    for page in ("install", "guide/first-trial", "guide/targets", "developer/testing", "developer/performance"):
        assert (site / page / "index.html").is_file(), page


def test_the_guides_tables_are_generated_in_the_built_site(site):
    """The markers of ``first-trial.md`` and ``sweeps.md`` became tables of every flag and key (docs/hooks)."""
    from edgebench.config.settings import SETTINGS

    run_rows = table_rows(site, "guide/first-trial")
    sweep_rows = table_rows(site, "guide/sweeps")
    assert [s.flag for s in SETTINGS if not any(row.startswith(s.flag) for row in run_rows)] == []
    assert [s.key for s in SETTINGS if not any(row.startswith(s.key) for row in sweep_rows)] == []
    for page in ("guide/first-trial", "guide/sweeps"):
        assert "<!-- generated:" not in (site / page / "index.html").read_text(), page

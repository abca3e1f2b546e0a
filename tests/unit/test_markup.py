"""Markup from data (issue 39): one function per sink makes a label show as the characters it holds.  The probes:
a label, reason or note holding Rich markup broke ``trials``, ``show`` and ``sweep`` (MarkupError) or vanished; a
label ``<!--<script>`` stopped the HTML report's charts; ``$\\foo$`` failed matplotlib's formula parser in ``plot``."""

from __future__ import annotations

import html
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from edgebench.cli import main
from edgebench.markup import html_text, rich_text, script_json
from edgebench.store import Store
from tests.factories import add

LABEL = "a[/b] [blink]x[/blink] [/bold] $\\foo$ <!--<script>"
REASON = "boom [/red] [/dim] [link=file:///etc]z"


def rendered(markup: str) -> str:
    console = Console(width=400, record=True, color_system=None, emoji=False)
    console.print(markup, highlight=False, end="")
    return console.export_text()


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from("[]/\\ab=#@ <>$:!-"), max_size=30) | st.text(max_size=30))
def test_rich_shows_any_text_as_it_is(text):
    """Never a MarkupError, nothing swallowed, between tags as alone.  (Alone, a trailing run of backslashes reads
    doubled: it is doubled so that it cannot escape a tag that follows it.)"""
    if not text.isprintable():
        return
    assert rendered(f"[red]{rich_text(text)}[/red]") == text
    trailing = len(text) - len(text.rstrip("\\"))
    assert rendered(rich_text(text)) == text + "\\" * trailing


@settings(max_examples=150, deadline=None)
@given(st.recursive(st.text() | st.integers() | st.none(), lambda c: st.lists(c) | st.dictionaries(st.text(), c),
                    max_leaves=10))  # fmt: skip
def test_json_in_a_script_holds_no_markup_and_reads_back(value):
    text = script_json(value)
    assert "<" not in text and ">" not in text and "\u2028" not in text
    assert json.loads(text) == value


def test_html_text_escapes_quotes_too():
    assert html_text("<a href='x'>&") == "&lt;a href=&#x27;x&#x27;&gt;&amp;"


@pytest.fixture
def hostile_store(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    with Store(store) as db:
        add(db, "20260101-000000-aaaa0001", [10.0, 11.0, 12.0], model=LABEL)
        add(db, "20260101-000000-aaaa0002", [10.0, 11.0, 12.0], model=LABEL, batch_size=16)
        add(db, "20260101-000000-aaaa0003", [10.0, 13.0, 12.0], status="crashed", reason=REASON)
    monkeypatch.setenv("EDGEBENCH_STORE", str(store))
    monkeypatch.setenv("COLUMNS", "300")
    return tmp_path


def test_probe_trials_and_show_print_labels_and_reasons_as_they_are(hostile_store, capsys):
    assert main(["trials"]) == 0
    assert main(["show", "20260101-000000-aaaa0001"]) == 0
    assert main(["show", "20260101-000000-aaaa0003"]) == 0
    out = capsys.readouterr().out
    assert LABEL in out and REASON in out  # [blink] and :smile: shown, not swallowed


def test_probe_the_report_keeps_its_scripts_whole(hostile_store, capsys):
    pytest.importorskip("plotly", reason="the report extra: pip install 'edgebench[report]'")
    out = hostile_store / "r.html"
    assert main(["report", "--out", str(out)]) == 0
    page = out.read_text()
    figures = re.search(r'<script type="application/json" id="figures">(.*?)</script>', page, re.S).group(1)
    assert "<" not in figures  # nothing in the JSON can end the script or open a comment in it

    def strings(value):
        if isinstance(value, str):
            yield html.unescape(value)
        elif isinstance(value, dict | list):
            for v in value.values() if isinstance(value, dict) else value:
                yield from strings(v)

    assert any(LABEL in text for text in strings(json.loads(figures)))  # shown on a chart as it is
    assert page.count("<script") == page.count("</script>") == 3 and "<!--" not in page


def test_probe_plot_draws_a_dollar_label_as_text(hostile_store, capsys):
    pytest.importorskip("matplotlib", reason="the report extra: pip install 'edgebench[report]'")
    assert main(["plot", "step-times", "20260101-000000-aaaa0001", "--out", str(hostile_store / "p.png")]) == 0
    assert main(["plot", "sweep", "--out", str(hostile_store / "s.png")]) == 0


def test_probe_a_dnntune_note_holding_markup_is_printed(tmp_path, capsys):
    config = tmp_path / "dnntune.yaml"
    config.write_text("model: {name: lenet, file: 'x[/dim][/bold].pb'}\nprocessing: {CPU_threads: 1}\n")
    assert main(["sweep", str(config), "--dry-run", "--store", str(tmp_path / "s.sqlite")]) == 0
    assert "x[/dim][/bold].pb" in capsys.readouterr().out

"""A user's step regex runs bounded (issue 39): ``--step-pattern '(a+)+$|step'`` backtracked past ``--timeout``.
On RE2 (google-re2, the ``re2`` extra) it is linear; on Python's ``re`` each search has a time limit."""

from __future__ import annotations

import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.backends.command import patterns
from edgebench.backends.command.patterns import PatternTimeout, step_pattern

EVIL = r"(a+)+$|step (?P<n>\d+)"
LINE = "a" * 40 + "!"


def test_on_re2_the_pattern_runs_in_linear_time():
    pytest.importorskip("re2", reason="the re2 extra: pip install 'edgebench[re2]'")
    pattern = step_pattern(EVIL)
    assert not isinstance(pattern.regex, patterns.BoundedRegex)
    started = time.monotonic()
    assert pattern.step_fields(LINE * 100) is None
    assert pattern.step_fields("step 7") == {"n": 7.0}
    assert time.monotonic() - started < 5  # exponential on a backtracking engine: never ends


def test_without_re2_each_search_is_bounded(monkeypatch):
    monkeypatch.setitem(sys.modules, "re2", None)  # not installed
    monkeypatch.setattr(patterns, "SEARCH_LIMIT_S", 0.2)
    pattern = step_pattern(EVIL)
    assert isinstance(pattern.regex, patterns.BoundedRegex)
    assert pattern.step_fields("step 7") == {"n": 7.0}
    with pytest.raises(PatternTimeout, match=r"took over 0\.2 s"):
        pattern.step_fields(LINE)


def test_a_pattern_only_python_compiles_still_runs_bounded():
    pattern = step_pattern(r"(?<=step )(?P<n>\d+)")  # a lookbehind: RE2 has none
    assert isinstance(pattern.regex, patterns.BoundedRegex) and pattern.step_fields("step 3") == {"n": 3.0}


def test_probe_the_trial_ends_with_the_reason(monkeypatch, capsys):
    """The probe as run: a command printing a line the pattern backtracks on; the trial fails in one line."""
    from edgebench.cli import main

    monkeypatch.setitem(sys.modules, "re2", None)
    monkeypatch.setattr(patterns, "SEARCH_LIMIT_S", 0.2)
    code = main(["run", "--no-store", "--command", f"echo {LINE}; echo step 1", "--step-pattern", EVIL,
                 "--steps", "1", "--warmup", "0", "--timeout", "60s"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1 and "--step-pattern took over 0.2 s on one line" in err


@settings(max_examples=150)
@given(st.text(max_size=20), st.text(max_size=40))
def test_any_step_pattern_compiles_or_is_one_line_and_matches_bounded(text, line):
    from edgebench.errors import UsageError

    try:
        pattern = step_pattern(text)
    except UsageError as exc:
        assert exc.field == "--step-pattern" and "\n" not in exc.message
        return
    if pattern.regex is not None:
        try:
            found = pattern.step_fields(line)
        except PatternTimeout:
            return
        assert found is None or isinstance(found, dict)

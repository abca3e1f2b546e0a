"""YAML and JSON from other people's files, read within bounds (issue 39): a billion-laughs YAML exited with a
312 MB error line, 5000-deep YAML and 100k-deep JSON raised RecursionError, a binary or a FIFO sweep file and a
binary configuration file raised or hung.  Each is one short line now; the fuzz tests hold that for any input."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.config.sweep_file import load_config
from edgebench.errors import UsageError
from edgebench.parsing import MAX_VALUES, json_text, yaml_text
from tests.factories import refused


def billion_laughs(levels: int = 9) -> str:
    text, previous = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n', "a"
    for i in range(1, levels + 1):
        name = f"l{i}"
        text += f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
        previous = name
    return text + f"models: *{previous}\n"


def test_a_billion_laughs_is_refused_in_one_short_line(tmp_path, capsys):
    (tmp_path / "laughs.yaml").write_text(billion_laughs())
    line = refused(capsys, "sweep", str(tmp_path / "laughs.yaml"), "--dry-run", "--store", str(tmp_path / "s.db"))
    assert f"past {MAX_VALUES} values" in line and len(line) < 300


@pytest.mark.parametrize(
    ("name", "content"),
    [("deep.yaml", "models: " + "[" * 5000 + "]" * 5000 + "\n"), ("deep-map.yaml", "a: {" * 3000 + "}" * 3000),
     ("binary.yaml", bytes(range(256)) * 4), ("nul.yaml", b"models: [lenet]\x00"), ("aliases.yaml", None)],
)  # fmt: skip
def test_a_sweep_file_that_is_no_sweep_file_is_one_line(tmp_path, capsys, name, content):
    if content is None:  # a hundred and one aliases: refused before anything expands
        content = "a: &a 1\nmodels: [" + ", ".join(["*a"] * 101) + "]\n"
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    line = refused(capsys, "sweep", str(path), "--dry-run", "--store", str(tmp_path / "s.db"))
    assert str(path) in line and len(line) < 300
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no store made


def test_a_fifo_as_a_sweep_file_or_a_store_does_not_hang(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "not a file" in refused(capsys, "sweep", str(fifo), "--dry-run")
    assert "not a regular file" in refused(capsys, "trials", "--store", str(fifo))


def test_a_binary_configuration_file_is_one_line(tmp_path, monkeypatch, capsys):
    config = tmp_path / "config.yaml"
    config.write_bytes(b"\xff\xfe" * 100)
    monkeypatch.setenv("EDGEBENCH_CONFIG", str(config))
    assert "not a text file in UTF-8" in refused(capsys, "sensors", "--target", "board")


def test_deep_json_is_a_value_error():
    with pytest.raises(ValueError, match="nested too deep"):
        json_text("[" * 100_000 + "]" * 100_000)


def test_a_deep_rescue_file_is_one_line(tmp_path, capsys):
    kept = tmp_path / "edgebench-unsaved-x.json"
    kept.write_text('{"kind": "edgebench-unsaved-trial", "result": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "nested too deep" in refused(capsys, "import", str(kept), "--store", str(tmp_path / "s.db"))
    assert not (tmp_path / "s.db").exists()


# -- fuzzing: whatever the text, a value or one ValueError line ---------------------------------------------------

YAMLISH = st.text(alphabet=st.sampled_from([*"ab:-[]{}&*!|>'\"#%@ ,\n\t0123", "\u2028", "\x00"]), max_size=80)


@settings(max_examples=200)
@given(st.one_of(YAMLISH, st.text(max_size=80)))
def test_yaml_text_gives_a_value_or_one_value_error(text):
    try:
        yaml_text(text)
    except ValueError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 300


@settings(max_examples=200)
@given(st.one_of(st.text(alphabet=st.sampled_from(list('[]{}",:0123aeflnrstu \\')), max_size=80),
                 st.binary(max_size=40)))  # fmt: skip
def test_json_text_gives_a_value_or_one_value_error(text):
    try:
        json_text(text)
    except ValueError as exc:
        assert "\n" not in str(exc).strip()


SWEEP_KEYS = st.sampled_from(["models", "batch_sizes", "threads", "cores", "frequencies", "steps", "timeout",
                              "sample_interval", "memory_budget", "counters", "name", "model", "processing", "targets",
                              "cooldown", "precision", "backend"])  # fmt: skip
SCALARS = st.one_of(st.integers(-5, 10**30), st.floats(allow_nan=True), st.text(max_size=12), st.booleans(),
                    st.none())  # fmt: skip
VALUES = st.recursive(SCALARS, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                      max_leaves=6)  # fmt: skip


@settings(max_examples=60)
@given(st.dictionaries(SWEEP_KEYS, VALUES, min_size=1, max_size=4))
def test_any_sweep_file_loads_or_is_one_usage_line(tmp_path_factory, doc):
    path = tmp_path_factory.mktemp("sweep") / "sweep.yaml"
    path.write_text(json.dumps(doc))  # JSON is YAML
    try:
        load_config(path)
    except UsageError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 2000, str(exc)

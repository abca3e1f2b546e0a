"""Property-based tests of what users and shared files hand the configuration (issue 39): DNNTune's sections and
every flag's reader give a value or one usage line naming the key or flag, whatever they are given."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.config.dnntune import MODEL_KEYS, PROCESSING_KEYS
from edgebench.config.settings import SETTINGS, read_flag
from edgebench.config.sweep_file import load_config
from edgebench.errors import UsageError

SCALARS = st.one_of(st.integers(-3, 10**20), st.floats(), st.text(max_size=10), st.booleans(), st.none(),
                    st.sampled_from(["lenet", "mobilenet_v2", "x.onnx", "1x224x224x3", "big", "f0", "float",
                                     "tensorflow, mnn", "LLCmiss", "CPU", "latency"]))  # fmt: skip
VALUES = st.recursive(SCALARS, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=2),
                      max_leaves=5)  # fmt: skip


@settings(max_examples=80)
@given(
    st.dictionaries(st.sampled_from([*MODEL_KEYS, "batch"]), VALUES, max_size=4),
    st.dictionaries(st.sampled_from([*PROCESSING_KEYS, "CPU_threads", "CPU_affinity"]), VALUES, max_size=4),
    st.one_of(st.none(), VALUES),
)
def test_any_dnntune_file_is_a_sweep_or_one_usage_line(tmp_path_factory, model, processing, objective):
    doc = {"model": model, "processing": processing, **({"objective": objective} if objective is not None else {})}
    path = tmp_path_factory.mktemp("dnntune") / "dnntune.yaml"
    path.write_text(json.dumps(doc))
    try:
        load_config(path)
    except UsageError as exc:
        assert "\n" not in str(exc) and str(path) in exc.field


NUMBERS = st.from_regex(r"-?[0-9]{1,420}(\.[0-9]*)?(e[0-9]{1,4})?[a-zA-Z%]{0,3}", fullmatch=True)
ODD = st.sampled_from([",,,", "nan", "inf", "-inf", "[", "{a: *b}", "\x00", "0x" + "f" * 300])


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.flag)
@settings(max_examples=25)
@given(text=st.one_of(st.text(max_size=30), NUMBERS, ODD))
def test_every_flag_reads_a_value_or_one_line_naming_it(setting, text):
    try:
        read_flag(setting, text)
    except UsageError as exc:
        assert exc.field == setting.flag and "\n" not in exc.message and len(exc.message) < 2000

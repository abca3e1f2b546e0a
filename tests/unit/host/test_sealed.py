"""Derived files trusted only as sealed (issue 39): :func:`write_sealed` / :func:`read_sealed`."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from edgebench.host.files import read_sealed, write_sealed


def test_a_sealed_document_reads_back_only_for_its_inputs_and_unchanged(tmp_path):
    path = tmp_path / "doc.json"
    write_sealed(path, {"graph": [1, 2, 3]}, "key-a")
    assert read_sealed(path, "key-a") == {"graph": [1, 2, 3]}
    assert read_sealed(path, "key-b") is None  # derived from other inputs: stale
    seal = json.loads(path.read_text())
    path.write_text(json.dumps({**seal, "body": json.dumps({"graph": []})}))
    assert read_sealed(path, "key-a") is None  # edited
    assert read_sealed(tmp_path / "missing.json", "key-a") is None


@given(st.binary(max_size=200))
def test_any_bytes_are_no_document(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("sealed") / "doc.json"
    path.write_bytes(data)
    assert read_sealed(path, "key") is None

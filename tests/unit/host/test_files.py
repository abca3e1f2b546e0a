"""Where a file may go when its name comes from data (issue 39): :func:`inside` and :func:`file_name`."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.host.files import NAME_BYTES, below, file_name, inside


@pytest.mark.parametrize("bad", ["/etc", "..", "../x", "a/../..", ".", "", "a\0b"])
def test_below_refuses_what_leaves_the_folder(bad):
    with pytest.raises(ValueError):
        below(bad)


def test_inside_refuses_a_symbolic_link_out(tmp_path):
    (tmp_path / "link").symlink_to("/")
    with pytest.raises(ValueError, match="symbolic link"):
        inside(tmp_path, "link/etc")
    assert inside(tmp_path, "a/./b") == tmp_path / "a" / "b"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_a_file_name_from_any_text_is_one_safe_component(text):
    name = file_name(text)
    assert name and "/" not in name and "\\" not in name and "\0" not in name
    assert not name.startswith(".") and len(name.encode()) <= NAME_BYTES
    assert below(name) == name  # one component strictly inside the folder


def test_file_names_read_as_their_text():
    assert file_name("resnet18-b32") == "resnet18-b32"
    assert file_name("x:/../../../../../OUTSIDE/escaped") == "x_.._.._.._.._.._OUTSIDE_escaped"
    assert file_name("..") == file_name("") == "unnamed"

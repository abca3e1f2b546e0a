"""The list of files edgebench reads (host/capture.py), its one-round-trip dump under the shells devices have, and
the capture script users run on a board: the same patterns, the same bytes."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from edgebench.host.capture import CAPTURE_FILES, CAPTURE_GLOBS, covered, dump_script, parse_dump, write_tree
from tests.paths import FIXTURES

SHELLS = {"mksh": ["mksh"], "dash": ["dash"], "busybox sh": ["busybox", "sh"]}


def test_capture_script_lists_the_same_files_and_patterns():
    script = (FIXTURES / "capture_sysfs.sh").read_text()
    listed = set(re.findall(r"(/(?:proc|sys)/[^\s;\\]+)", script))
    assert listed == set(CAPTURE_FILES) | set(CAPTURE_GLOBS)


@pytest.mark.parametrize("shell", SHELLS)
def test_dump_under_each_shell_copies_the_tree_byte_for_byte(shell, tmp_path):
    if shutil.which(SHELLS[shell][0]) is None:
        pytest.fail(f"{shell} is needed: apt-get install -y openssh-server mksh busybox adb")
    tree = FIXTURES / "sysfs" / "jetson_orin"
    out = subprocess.run([*SHELLS[shell], "-c", dump_script(str(tree))], capture_output=True, check=True).stdout
    dump = parse_dump(out)
    expected = {
        "/" + str(p.relative_to(tree))
        for p in tree.rglob("*")
        if p.is_file() and covered("/" + str(p.relative_to(tree)))
    }
    assert set(dump.files) == expected
    write_tree(dump, tmp_path)
    for path in expected:
        assert (tmp_path / path.lstrip("/")).read_bytes() == (tree / path.lstrip("/")).read_bytes()


def test_a_file_that_cannot_be_read_is_named_not_dropped(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "sysfs" / "rpi4", tree)
    meminfo = tree / "proc" / "meminfo"
    dump_text = dump_script(str(tree)).replace('[ -r "$f" ]', '[ "$p" != /proc/meminfo ]')  # as if unreadable
    dump = parse_dump(subprocess.run(["mksh", "-c", dump_text], capture_output=True, check=True).stdout)
    assert "/proc/meminfo" in dump.denied and "/proc/meminfo" not in dump.files
    assert meminfo.exists()


def test_a_dump_cut_short_keeps_only_whole_files():
    tree = FIXTURES / "sysfs" / "rpi4"
    out = subprocess.run(["mksh", "-c", dump_script(str(tree))], capture_output=True, check=True).stdout
    whole = parse_dump(out)
    cut = parse_dump(out[: len(out) // 2])
    assert 0 < len(cut.files) < len(whole.files)
    assert all(whole.files[p] == c for p, c in cut.files.items())


def test_a_device_path_leading_out_of_the_tree_is_left_out(tmp_path):
    """The dump's paths come from the device: ``..`` in one must not write outside the tree (issue 39)."""
    from edgebench.host.capture import Dump

    out = tmp_path / "tree"
    dump = Dump(files={"/proc/stat": b"cpu 1\n", "/sys/../../../escaped": b"x", "/../x": b"y"})
    assert write_tree(dump, out) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tree"]


def test_a_snapshot_removes_no_folder_it_did_not_make(tmp_path):
    """``snapshot -o X`` wrote into ``X.partial`` after removing whatever was there, a user's folder included."""
    from edgebench.host.capture import Dump, write_tree_whole

    keep = tmp_path / "tree.partial"
    keep.mkdir()
    (keep / "mine").write_text("kept")
    assert write_tree_whole(Dump(files={"/proc/stat": b"cpu 1\n"}), tmp_path / "tree") == 1
    assert (keep / "mine").read_text() == "kept" and (tmp_path / "tree" / "proc" / "stat").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tree", "tree.partial"]

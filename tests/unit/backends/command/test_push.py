"""``--push LOCAL[:REMOTE]`` writes only inside the trial's work folder (issue 39, destructive inputs): a REMOTE
outside it is refused in one line before anything is copied or removed."""

from __future__ import annotations

import pytest

from edgebench.backends.command.push import parse_push, remote_path
from edgebench.targets.shell import LocalShell
from tests.factories import refused


@pytest.mark.parametrize("remote", ["/abs/path", "/", "../..", "..", ".", "a/../..", "./../x", "a/../../b"])
def test_a_remote_outside_the_work_folder_is_refused(tmp_path, remote):
    with pytest.raises(ValueError, match="outside the trial's work folder"):
        parse_push(f"{tmp_path}:{remote}")


@pytest.mark.parametrize(("remote", "lands"), [("a", "a"), ("d/b", "d/b"), ("a/../b", "b"), ("./c/", "c")])
def test_a_remote_inside_it_lands_under_it(tmp_path, remote, lands):
    local, where = parse_push(f"{tmp_path}:{remote}")
    assert local == tmp_path and remote_path("/w", where) == f"/w/{lands}"


def test_a_local_path_without_a_name_needs_a_remote(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert parse_push(".")[1] == tmp_path.name  # the folder's own name
    with pytest.raises(ValueError, match="outside"):
        parse_push("/")  # would replace the work folder itself


def test_remote_path_checks_again():
    with pytest.raises(ValueError):
        remote_path("/w", "/etc")


def test_the_local_shell_removes_nothing_outside_its_work_folder(tmp_path):
    """A folder push replaces what is at REMOTE: through a symbolic link an earlier push left, REMOTE could resolve
    outside the work folder, and the shell refuses rather than remove it."""
    work, outside, source = tmp_path / "work", tmp_path / "outside", tmp_path / "src"
    for folder in (work, outside / "keep", source):
        folder.mkdir(parents=True)
    (work / "link").symlink_to(outside)
    shell = LocalShell(workdir=work)
    with pytest.raises(OSError, match="outside the work folder"):
        shell.push(source, str(work / "link" / "keep"))
    assert (outside / "keep").is_dir()
    shell.push(source, str(work / "inside"))
    assert (work / "inside").is_dir()


@pytest.mark.parametrize("remote", ["ABS", "../../escape", "/"])
def test_probe_run_push_outside_the_work_folder(tmp_path, capsys, remote):
    """The probe as the issue ran it: ``run --command ... --push DIR:/abs`` (and ``DIR:../..``) on the local target."""
    victim = tmp_path / "victim"
    (victim / "data").mkdir(parents=True)
    pushed = tmp_path / "pushed"
    pushed.mkdir()
    target = str(victim) if remote == "ABS" else remote
    line = refused(capsys, "run", "--no-store", "--command", "true", "--step-pattern", "x", "--push",
                   f"{pushed}:{target}")  # fmt: skip
    assert "--push" in line and "work folder" in line
    assert (victim / "data").is_dir() and sorted(p.name for p in tmp_path.iterdir()) == ["pushed", "victim"]

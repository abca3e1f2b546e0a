"""Device-side scripts that clean up after the workstation even when the connection to it drops.

A dropped SSH or adb connection sends the device nothing: no pty means no SIGHUP, so a trial's agent and worker
would train on, and a pinned governor would stay pinned.  What the device does see is the session's standard
input reaching end-of-file.  So each remote session is wrapped in POSIX ``sh`` (``mksh``, ``ash``, ``dash``) whose
watcher reads stdin to its end:

* :func:`guarded` runs a trial: the first stdin line is its payload (the Trial JSON); the body runs in the
  background; a watcher ``cat`` holds the session's stdin.  When the body ends normally it leaves a ``done`` mark
  and prints :data:`ENDED_LINE`, and the watcher only tidies up once the workstation closes stdin; when stdin
  ends first (connection lost, workstation killed) the watcher kills
  the whole process group on the device (the agent, its sampler, and its worker through ``PR_SET_PDEATHSIG``).
* :func:`restore_holder` is held open while frequencies are pinned: when its stdin ends (or the workstation sends
  :data:`RELEASE_LINE`, which an old phone's pty needs) it runs the restore file
  the workstation keeps up to date before each write (:class:`~edgebench.targets.remote_sysfs.RemoteSysFS`), so
  the governor and limits come back on the device itself.  A clean end deletes the file first.
"""

from __future__ import annotations

import shlex

#: Printed by a guarded session before its body starts, so the workstation knows the device side is running.
STARTED_LINE = "edgebench-session-started"
#: Printed by a guarded session, with the body's exit status, when its body has ended.  The workstation reads up to
#: this line and then closes stdin: adbd gives a shell ONE socket for stdin and stdout, so the watcher holding stdin
#: holds stdout open too and the end of stdout never comes first.  Its absence is also how a dropped connection is
#: told from an end (Debian's adb client exits 0 with nothing on stderr when the device goes away).
ENDED_LINE = "edgebench-session-ended"
#: Sent to a restore watcher to end it cleanly: the stdin of an old phone's shell (a pty) never reaches its end.
RELEASE_LINE = "edgebench-release"


def guarded(body: str, session_dir: str, *, payload: bool) -> str:
    """``body`` under a watcher that kills it, and everything it started, when the session's stdin ends early."""
    d = shlex.quote(session_dir)
    read_payload = f'IFS= read -r line; printf "%s\\n" "$line" > {d}/in; ' if payload else f": > {d}/in; "
    return (
        f"trap '' HUP; mkdir -p {d} || exit 125; exec 3<&0; {read_payload}"
        f"( {body} ) < {d}/in & child=$!; "
        # exec, not a redirected { }: mksh keeps a saved copy of a redirected group's stdout, which would hold
        # the session's output open after the body ends
        f"( exec <&3 >/dev/null 2>&1 3<&-; cat; if [ -f {d}/done ]; then rm -rf {d}; else rm -rf {d}; "
        "kill -KILL $child 0; fi ) & "
        f"exec 3<&-; wait $child; rc=$?; : > {d}/done; echo; echo {ENDED_LINE} $rc; exit $rc"
    )


def restore_holder(restore_file: str) -> str:
    """A session that prints :data:`STARTED_LINE`, waits for stdin to end or for the :data:`RELEASE_LINE`, then
    runs ``restore_file`` if it is still there (it is deleted by a clean restore from the workstation).

    The line is how a clean end reaches an old phone (no shell protocol): its shell's stdin is a pty, which sees no
    end of file when the workstation closes its side, so a watcher waiting for one ended only with the connection.
    A dropped connection still ends the wait (the pty hangs up: ``read`` fails), and the restore runs."""
    r = shlex.quote(restore_file)
    return (
        f"trap '' HUP; echo {STARTED_LINE}; "
        f'while IFS= read -r _l; do case "$_l" in {RELEASE_LINE}*) break ;; esac; done; '
        f"if [ -f {r} ]; then sh {r}; rm -f {r}; fi"
    )

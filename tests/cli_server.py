"""A fork server for the suite's ``edgebench`` commands: one Python process per pytest worker that has imported the
command's modules once, and forks a child per command that runs ``edgebench`` exactly as ``python -m edgebench``
would (``runpy``'s ``-m`` path, so ``__main__``, ``sys.argv`` and the program name are the same), with the call's
arguments, environment, working folder and standard streams.

Why: the suite runs the real command a few hundred times, and each fresh interpreter spent ~0.7 CPU-s importing
typer, pydantic, numpy, scipy and rich before doing anything (on two cores, minutes of the suite's ten).  Forking a
process that holds them costs a few milliseconds.  What the command starts (a trial's worker, a sampler, ssh, adb)
is started by it as it always is: fresh processes.

What a fork cannot reproduce runs as a real process instead (:meth:`Server.forkable`): an environment whose interpreter
would start differently (``PYTHON*`` variables such as a ``PYTHONPATH`` with a ``sitecustomize.py``, ``LD_*``), and
every test that needs the process itself (``Edgebench.start``: signals, interrupts).  ``EDGEBENCH_TEST_FORK=0`` runs
every command as a real process (the README quick-start test always does).

Protocol: a client connects to the server's Unix socket and sends one JSON line (argv, environment, folder, the
paths of the files standing for stdin, stdout and stderr); the server forks, answers the child's pid, and when the
child ends its exit code as :func:`os.waitstatus_to_exitcode` gives it (``-N`` for signal N, as ``subprocess``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from tests.paths import ROOT

#: What the commands import before they do anything, so the children inherit it: the command line, every workflow
#: (``edgebench.workflows.*``, imported by :func:`preload`) and the libraries a trial's parent process reads with.
#: Not torch, MNN, ONNX Runtime, LiteRT, Ray or matplotlib: commands that must not import them are tested for that,
#: and they load in the processes that use them.
PRELOAD = ("edgebench.cli", "edgebench.launch.trial", "edgebench.store", "scipy.stats", "rich.console", "psutil")


#: Variables read when an interpreter starts (or a loader loads it): a call that sets one differently runs as a
#: real process.
STARTUP_PREFIXES = ("PYTHON", "LD_")


def startup_environment(env: dict[str, str]) -> dict[str, str]:
    """The part of ``env`` an interpreter reads as it starts."""
    return {k: v for k, v in env.items() if k.startswith(STARTUP_PREFIXES)}


# --- the server -----------------------------------------------------------------------------------------------------


def _child(request: dict) -> None:
    """In the forked child: become ``python -m edgebench`` with the request's world, run it, and never return."""
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, (path, mode) in enumerate(
            [(request["stdin"], os.O_RDONLY), (request["stdout"], os.O_WRONLY), (request["stderr"], os.O_WRONLY)]
        ):
            opened = os.open(path, mode)
            os.dup2(opened, fd)
            os.close(opened)
        # the streams a fresh interpreter makes for files (block-buffered stdout, backslashreplace stderr)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True
        )
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
        for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        tempfile.tempdir = None  # TMPDIR is the call's
        sys.path[0] = request["cwd"]  # as ``-m`` puts the working folder first
        sys.argv = ["-m", *request["args"]]
        import runpy

        try:
            runpy._run_module_as_main("edgebench", alter_argv=True)  # the ``python -m edgebench`` path
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc.code)
        except BaseException:  # an uncaught exception: the traceback a fresh interpreter prints, and 1
            sys.excepthook(*sys.exc_info())
            code = 1
        threading._shutdown()  # type: ignore[attr-defined]  # what interpreter shutdown does, in its order
        import atexit

        atexit._run_exitfuncs()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def preload() -> None:
    import importlib
    import pkgutil

    for name in PRELOAD:
        importlib.import_module(name)
    import edgebench.workflows

    for module in pkgutil.iter_modules(edgebench.workflows.__path__):
        importlib.import_module(f"edgebench.workflows.{module.name}")
    assert threading.active_count() == 1, "a preloaded module started a thread: forking it would be unsafe"


def serve(path: str) -> None:
    """Fork a child per request and answer its exit code when it ends: each running child's pidfd sits in the
    selector beside the listener, so the server sleeps until either has something (and looks at its parent every
    second: the pytest worker gone, so is its server)."""
    preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    parent = os.getppid()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    while os.getppid() == parent:
        for key, _events in selector.select(timeout=1.0):
            if key.fileobj is listener:
                conn, _ = listener.accept()
                with conn.makefile("r") as lines:
                    request = json.loads(lines.readline())
                pid = os.fork()
                if pid == 0:
                    for fileobj in [k.fileobj for k in selector.get_map().values()]:
                        if isinstance(fileobj, socket.socket):
                            fileobj.close()
                        else:
                            os.close(fileobj)  # another child's pidfd
                    selector.close()
                    conn.close()
                    _child(request)
                conn.sendall(f"{pid}\n".encode())
                selector.register(os.pidfd_open(pid), selectors.EVENT_READ, (pid, conn))
            else:  # a child ended
                pid, conn = key.data
                selector.unregister(key.fileobj)
                os.close(key.fileobj)
                _, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):
                    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                conn.close()


# --- the client ------------------------------------------------------------------------------------------------------


class Server:
    """This pytest process's server, started at its first call and stopped with the process."""

    def __init__(self) -> None:
        #: the environment the server starts in, and with it every interpreter it stands for
        self.startup = startup_environment(dict(os.environ))
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._folder = Path(tempfile.mkdtemp(prefix="cli-server-"))
        self.path = str(self._folder / "socket")

    def _started(self) -> str:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
                self._proc = subprocess.Popen(
                    [sys.executable, "-m", "tests.cli_server", self.path],
                    cwd=ROOT,
                    stdin=subprocess.DEVNULL,
                    env={**{k: v for k, v in os.environ.items() if not k.startswith(STARTUP_PREFIXES)}, **self.startup},
                )
                import atexit

                atexit.register(self.stop)
            while not os.path.exists(self.path):
                if self._proc.poll() is not None:
                    raise RuntimeError(f"the suite's command server exited with {self._proc.returncode}")
                threading.Event().wait(0.02)
            return self.path

    def forkable(self, env: dict[str, str]) -> bool:
        """True where a child of the server behaves as a fresh interpreter given ``env`` would."""
        if env.get("EDGEBENCH_TEST_FORK", os.environ.get("EDGEBENCH_TEST_FORK")) == "0":
            return False
        return startup_environment(env) == self.startup

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
        shutil.rmtree(self._folder, ignore_errors=True)

    def run(
        self, args: list[str], env: dict[str, str], cwd: str, input: str | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        path = self._started()
        with tempfile.TemporaryDirectory(prefix="cli-call-", dir=self._folder) as folder:
            files = {name: os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")}
            Path(files["stdin"]).write_text(input or "", encoding="utf-8")
            for name in ("stdout", "stderr"):
                Path(files[name]).touch()
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(path)
                conn.sendall(json.dumps({"args": args, "env": env, "cwd": cwd, **files}).encode() + b"\n")
                replies = _Lines(conn)
                pid = int(replies.next(None))
                try:
                    code = int(replies.next(timeout))
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    replies.next(None)
                    raise subprocess.TimeoutExpired(
                        ["edgebench", *args], timeout, _text(files["stdout"]), _text(files["stderr"])
                    ) from None
            return subprocess.CompletedProcess(
                ["edgebench", *args], code, _text(files["stdout"]), _text(files["stderr"])
            )


class _Lines:
    """The server's one-line answers on a socket, each waited for at most ``timeout`` seconds (None: for ever)."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buffer = b""

    def next(self, timeout: float | None) -> str:
        self.conn.settimeout(timeout)
        while b"\n" not in self.buffer:
            chunk = self.conn.recv(4096)
            if not chunk:
                raise RuntimeError("the suite's command server closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode()


def _text(path: str) -> str:
    """What ``subprocess.run(..., text=True)`` gives: UTF-8 with universal newlines."""
    with open(path, encoding="utf-8", errors="strict", newline=None) as f:
        return f.read()


if __name__ == "__main__":
    serve(sys.argv[1])

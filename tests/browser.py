"""A real headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``), offline.

No browser download and no client library: Chromium reads commands from fd 3 and writes replies and events to fd 4,
each a JSON message ended by a NUL byte.  Networking is shut off (a dead proxy, every host name unresolvable) and
every request the page makes is recorded, so a test can prove a report needs nothing from outside.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

INSTALL = "apt-get install -y chromium"
CANDIDATES = ("chromium", "chromium-browser", "chromium-headless-shell")


def chromium_path() -> str:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError(f"no Chromium on this machine (the report's browser test needs one): {INSTALL}")


class Browser:
    def __init__(self) -> None:
        self._profile = tempfile.mkdtemp(prefix="edgebench-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def place_pipes() -> None:  # in the child: the protocol's fds are 3 (commands in) and 4 (messages out)
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-dev-shm-usage", "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
             f"--user-data-dir={self._profile}", "--remote-debugging-pipe", "--window-size=1280,900",
             "about:blank"],
            pass_fds=(3, 4), preexec_fn=place_pipes, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium closed the pipe (exit code {self.proc.poll()})")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60, **extra: Any) -> Any:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session and not extra.get("browser"):
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read_message(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def open(self, url: str) -> None:
        """Attach to a fresh page, turn on the domains whose events a test reads, and load ``url``."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str, timeout: float = 60) -> Any:
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True}, timeout=timeout)  # fmt: skip
        if "exceptionDetails" in reply:
            raise RuntimeError(f"page script failed: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads the page has reported so far."""
        out = []
        for e in self.events:
            method, p = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                out.append(json.dumps(p.get("exceptionDetails", {}))[:500])
            elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(p["entry"].get("text", ""))
            elif method == "Network.loadingFailed":
                out.append(f"load failed: {p.get('errorText')}")
        return out

    def requested_urls(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path: Path) -> None:
        height = self.evaluate("document.documentElement.scrollHeight")
        self.send("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": min(int(height), 16000),
                                                         "deviceScaleFactor": 1, "mobile": False})  # fmt: skip
        shot = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        path.write_bytes(base64.b64decode(shot["data"]))

    def print_pdf(self) -> bytes:
        return base64.b64decode(self.send("Page.printToPDF", {"printBackground": True}, timeout=120)["data"])

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.send("Browser.close", browser=True, timeout=10)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)
        shutil.rmtree(self._profile, ignore_errors=True)

"""Headless Chromium (Debian `chromium`) driven over the DevTools protocol: opens pages, waits
for what they render, takes screenshots, and records every request a page makes and every
error it raises. Name resolution is mapped away from everything but loopback, so a page that
tries to reach the internet fails to (and the attempt is recorded) instead of leaving the
machine."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

from websockets.sync.client import ClientConnection, connect

from hil.errors import BenchError
from hil.plumbing.proc import die_with_parent

START_TIMEOUT_S = 30.0
PROFILE_PREFIX = "hil-chromium-"  # + the pid of the check that made it


def _remove_stale_profiles() -> None:
    """Profile directories of checks that were killed before they could remove theirs."""
    for path in Path(tempfile.gettempdir()).glob(f"{PROFILE_PREFIX}*"):
        pid = path.name.removeprefix(PROFILE_PREFIX).split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(path, ignore_errors=True)


@dataclass
class PageEvents:
    """What the open page did: every URL it requested, and what went wrong."""

    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Browser:
    """One headless Chromium with one page (tab). Use as a context manager: the browser and its
    profile directory are gone when it exits, also after an exception."""

    def __init__(self, width: int = 1400, height: int = 1000, executable: str = "chromium") -> None:
        self.width, self.height = width, height
        self.executable = shutil.which(executable)
        if self.executable is None:
            raise BenchError(f"no {executable!r} on PATH: install Debian's `chromium` (./suite setup does)")
        self.events = PageEvents()
        self._proc: subprocess.Popen[bytes] | None = None
        self._profile: str | None = None
        self._ws: ClientConnection | None = None
        self._session: str | None = None
        self._next_id = 0
        self._in_flight: set[str] = set()  # request ids the page is still loading
        self._last_network = 0.0  # when the page last started or finished a request (monotonic)

    def __enter__(self) -> Self:
        _remove_stale_profiles()
        self._profile = tempfile.mkdtemp(prefix=f"{PROFILE_PREFIX}{os.getpid()}-")
        args = [
            self.executable or "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-extensions", "--mute-audio",
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            f"--user-data-dir={self._profile}", f"--window-size={self.width},{self.height}",
            "--remote-debugging-port=0", "--remote-allow-origins=*", "about:blank",
        ]  # fmt: skip
        self._proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=die_with_parent,
        )  # fmt: skip
        try:
            self._ws = connect(self._browser_endpoint(), max_size=64 * 1024 * 1024, open_timeout=10)
            target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Network", "Runtime", "Log"):
                self._call(f"{domain}.enable")
            self._viewport(self.height)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._ws is not None:
            self._ws.close()
            self._ws = None
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait(timeout=10)
            self._proc = None
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None

    def _browser_endpoint(self) -> str:
        """The browser's DevTools websocket, from the port file Chromium writes when it listens."""
        assert self._profile is not None and self._proc is not None
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise BenchError(f"chromium exited with status {self._proc.returncode} before it listened")
            lines = port_file.read_text().split("\n") if port_file.exists() else []
            if len(lines) >= 2 and lines[0].isdigit() and lines[1]:
                return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
            time.sleep(0.05)
        raise BenchError(f"chromium did not open its DevTools port within {START_TIMEOUT_S:g} s")

    def _call(self, method: str, params: dict[str, object] | None = None, timeout_s: float = 30.0) -> dict:  # type: ignore[type-arg]
        assert self._ws is not None
        self._next_id += 1
        msg: dict[str, object] = {"id": self._next_id, "method": method, "params": params or {}}
        if self._session is not None and not method.startswith("Target."):
            msg["sessionId"] = self._session
        self._ws.send(json.dumps(msg))
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BenchError(f"chromium did not answer {method} within {timeout_s:g} s")
            reply = json.loads(self._ws.recv(timeout=left))
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BenchError(f"chromium: {method}: {reply['error'].get('message')}")
                return reply.get("result", {})  # type: ignore[no-any-return]
            self._note(reply)

    def _note(self, event: dict) -> None:  # type: ignore[type-arg]
        """Keeps what a page event says about requests and errors."""
        method, p = event.get("method"), event.get("params", {})
        if str(method).startswith("Network."):
            self._last_network = time.monotonic()
        if method == "Network.requestWillBeSent":
            self._in_flight.add(p.get("requestId", ""))
        elif method in ("Network.loadingFinished", "Network.loadingFailed"):
            self._in_flight.discard(p.get("requestId", ""))
        if method == "Network.requestWillBeSent":
            self.events.requests.append(p["request"]["url"])
        elif method == "Network.loadingFailed" and not p.get("canceled"):
            self.events.errors.append(f"a request failed: {p.get('errorText')} ({p.get('type')})")
        elif method == "Network.responseReceived" and p["response"].get("status", 200) >= 400:
            self.events.errors.append(f"HTTP {p['response']['status']} for {p['response']['url']}")
        elif method == "Runtime.exceptionThrown":
            details = p.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            self.events.errors.append(f"script exception: {str(text).splitlines()[0] if text else '?'}")
        elif method == "Runtime.consoleAPICalled" and p.get("type") == "error":
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            self.events.errors.append(f"console error: {args[:300]}")
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            self.events.errors.append(f"browser log: {p['entry'].get('text', '')[:300]}")

    def evaluate(self, expression: str) -> object:
        result = self._call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            what = result["exceptionDetails"].get("text")
            raise BenchError(f"chromium: evaluating {expression[:60]!r} raised {what}")
        return result.get("result", {}).get("value")

    def open(self, url: str, ready: str, timeout_s: float = 20.0) -> bool:
        """Navigates to `url` and waits until the JavaScript expression `ready` is true in the
        page; False when it never became true within `timeout_s`."""
        self._in_flight.clear()  # a request the last page left unfinished is not this page's
        self._call("Page.navigate", {"url": url})
        return self.wait(ready, timeout_s)

    def wait(self, ready: str, timeout_s: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.evaluate(f"(() => {{ try {{ return Boolean({ready}); }} catch (e) {{ return false; }} }})()"):
                return True
            time.sleep(0.1)
        return False

    def settle(self, quiet_s: float = 0.3, max_s: float = 3.0) -> bool:
        """Waits until the page is quiet: no request in flight, none started or finished for
        `quiet_s`, every image decoded (what a click on an attachment loads has arrived and is
        drawn, and late errors of its scripts are in). False when `max_s` passed first."""
        self._last_network = time.monotonic()  # what was just clicked may start a request
        deadline = time.monotonic() + max_s
        while time.monotonic() < deadline:
            drawn = self.evaluate("[...document.images].every(i => i.complete)")
            if drawn and not self._in_flight and time.monotonic() - self._last_network >= quiet_s:
                return True
            time.sleep(0.05)
        return False

    def next_frame(self) -> None:
        """Returns once the page has laid out and painted again (two animation frames)."""
        self._call(
            "Runtime.evaluate",
            {
                "expression": "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))",
                "awaitPromise": True,
            },
        )

    def text(self) -> str:
        return str(self.evaluate("document.body ? document.body.innerText : ''") or "")

    def _viewport(self, height: int) -> None:
        self._call(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def screenshot(self, path: Path, full_page: bool = False, max_height: int = 6000) -> None:
        """The viewport as PNG; `full_page` grows the viewport to the tallest scrolling content
        first (single-page apps scroll inside an element, not the document)."""
        if full_page:
            tallest = "Math.max(...[...document.querySelectorAll('*')].map(e => e.scrollHeight))"
            height = min(max(int(self.evaluate(tallest) or 0), self.height), max_height)
            if height > self.height:
                self._viewport(height)
                self.next_frame()  # the page lays out again
        try:
            data = self._call("Page.captureScreenshot", {"format": "png"})["data"]
        finally:
            if full_page:
                self._viewport(self.height)
        path.write_bytes(base64.b64decode(data))

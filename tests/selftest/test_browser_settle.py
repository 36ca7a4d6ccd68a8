"""The report check's browser waits for what a click loads, not for a fixed time: a page whose
button fetches a slowly served image is settled only once the image has arrived and is drawn,
and a page that never stops loading is reported as such."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest

from hil.report.browser import Browser

# 1x1 transparent PNG
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d4944415478da63f8ffff3f0005fe02fea7d605f90000000049454e44ae426082"
)
PAGE = b"""<!doctype html><html><body><p>ready</p>
<button onclick="setTimeout(() => {
  const i = new Image(); i.src = '/slow.png'; document.body.appendChild(i); }, 150)">load</button>
<button id="forever" onclick="fetch('/never')">hang</button>
</body></html>"""
SLOW_S = 0.8


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/slow.png":
            time.sleep(SLOW_S)
            body, kind = PIXEL, "image/png"
        elif self.path == "/never":
            time.sleep(8)  # longer than the settle limit of the test
            body, kind = b"late", "text/plain"
        else:
            body, kind = PAGE, "text/html"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def served() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def browser() -> Iterator[Browser]:
    with Browser(width=400, height=300) as b:  # Debian's chromium, installed by ./suite setup
        yield b


def test_settle_waits_for_the_image_a_click_loads(browser: Browser) -> None:
    with served() as base:
        assert browser.open(base, "document.body.innerText.includes('ready')")
        browser.evaluate("document.querySelector('button').click()")
        started = time.monotonic()
        assert browser.settle(quiet_s=0.3, max_s=5)
        waited = time.monotonic() - started
        assert browser.evaluate("document.images.length === 1 && document.images[0].complete")
        assert waited >= SLOW_S, f"settled after {waited:.2f} s, before the image arrived"
        assert waited < SLOW_S + 2, f"settled only after {waited:.2f} s"


def test_settle_on_a_quiet_page_takes_only_the_quiet_time(browser: Browser) -> None:
    with served() as base:
        assert browser.open(base, "document.body.innerText.includes('ready')")
        started = time.monotonic()
        assert browser.settle(quiet_s=0.3, max_s=5)
        assert time.monotonic() - started < 1.5


def test_a_page_that_never_stops_loading_is_not_settled(browser: Browser) -> None:
    with served() as base:
        assert browser.open(base, "document.body.innerText.includes('ready')")
        browser.evaluate("document.getElementById('forever').click()")
        started = time.monotonic()
        assert not browser.settle(quiet_s=0.3, max_s=1.5)
        assert 1.5 <= time.monotonic() - started < 3

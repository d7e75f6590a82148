"""A headless Chromium driven over the DevTools protocol, for tests of web pages.

::

    with Chromium.start(tmp_path / "profile") as browser:
        browser.navigate(Path("site/index.html").as_uri())
        browser.click("#search")
        browser.type_text("mnist")                    # real key events, one per character
        browser.evaluate("document.title")
        png = browser.screenshot()
        assert browser.errors == []                   # console errors, exceptions, failed loads

The browser is the system's Chromium (`find_chromium`), started with a fresh profile and
everything that could reach the network off, and spoken to over ``--remote-debugging-pipe``
(file descriptors 3 and 4, one JSON message per NUL-terminated chunk): no port, no extra
package. Every wait is bounded by `timeout` seconds and ends as soon as its event arrives.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["CHROMIUM_FLAGS", "BrowserError", "Chromium", "find_chromium"]

#: Headless, no sandbox (tests run as root), and nothing that talks to the network by itself.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
)


class BrowserError(RuntimeError):
    """The browser failed, answered a command with an error, or did not answer in time."""


def find_chromium() -> str | None:
    """The path of the system's Chromium (or Chrome), or None when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


#: argv: the fd to become 3, the fd to become 4, then the browser's command line.
_LAUNCH = """\
import os, sys
read, write = int(sys.argv[1]), int(sys.argv[2])
os.dup2(read, 3)
os.dup2(write, 4)
os.close(read)
os.close(write)
os.execv(sys.argv[3], sys.argv[3:])
"""


def _pipe() -> tuple[int, int]:
    """A pipe whose two ends are file descriptors 10 or above, clear of the 3 and 4 that the
    browser's ends are moved to (so moving one cannot overwrite the other)."""
    ends = os.pipe()
    high = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in ends)
    for fd in ends:
        os.close(fd)
    return high[0], high[1]


class Chromium:
    """One headless browser with one page; use `start` to make one."""

    def __init__(self, process: subprocess.Popen[bytes], send: int, receive: int) -> None:
        self._process, self._send_fd, self._receive_fd = process, send, receive
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        self._session = ""
        self.timeout = 60.0
        #: Console errors, uncaught exceptions and failed loads, as text, in order.
        self.errors: list[str] = []

    @classmethod
    def start(
        cls,
        profile: Path,
        *,
        executable: str | None = None,
        width: int = 1200,
        height: int = 900,
        timeout: float = 60.0,
    ) -> Chromium:
        """Start Chromium with a fresh profile in `profile` and open a blank page of
        `width` x `height` CSS pixels (at one device pixel each)."""
        executable = executable or find_chromium()
        if executable is None:
            raise BrowserError("no chromium on PATH; install it: apt-get install chromium")
        profile.mkdir(parents=True, exist_ok=True)
        to_browser, from_us = _pipe()  # the browser reads commands on its fd 3
        to_us, from_browser = _pipe()  # and writes answers and events on its fd 4
        command = [
            executable,
            *CHROMIUM_FLAGS,
            "--remote-debugging-pipe",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        # A small Python launcher moves the pipe ends to fds 3 and 4, then becomes the browser.
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _LAUNCH, str(to_browser), str(from_browser), *command],
                pass_fds=(to_browser, from_browser),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=None if os.environ.get("CHROMIUM_DEBUG") else subprocess.DEVNULL,
            )
        finally:
            os.close(to_browser)
            os.close(from_browser)
        browser = cls(process, from_us, to_us)
        browser.timeout = timeout
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            attached = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})
            browser._session = attached["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                browser.send(f"{domain}.enable")
            browser.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            )
        except BaseException:
            browser.close()
            raise
        return browser

    # -- the protocol ---------------------------------------------------------------------

    def _read(self, deadline: float) -> dict[str, Any]:
        """The next message from the browser (waiting at most until `deadline`)."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"chromium did not answer within {self.timeout} s")
            ready, _, _ = select.select([self._receive_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._receive_fd, 1 << 20)
            if not chunk:
                raise BrowserError(f"chromium exited (code {self._process.poll()})")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        data: dict[str, Any] = json.loads(message)
        if "method" in data:
            self._note(data)
        return data

    def _note(self, event: dict[str, Any]) -> None:
        """Keep an event; record the ones that are errors of the page."""
        self._events.append(event)
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.errors.append(f"exception: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.errors.append(f"console.{params['type']}: {args}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.errors.append(f"log: {entry.get('text', '')} {entry.get('url', '')}".rstrip())

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a command (to the page, once attached) and return its result."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self._session:
            message["sessionId"] = self._session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._send_fd, data) :]
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error'].get('message', answer)}")
                result: dict[str, Any] = answer.get("result", {})
                return result

    def wait_for(self, method: str) -> dict[str, Any]:
        """The params of the first event `method` not yet waited for."""
        deadline = time.monotonic() + self.timeout
        seen = 0
        while True:
            for i in range(seen, len(self._events)):
                if self._events[i]["method"] == method:
                    params: dict[str, Any] = self._events.pop(i).get("params", {})
                    return params
            seen = len(self._events)
            self._read(deadline)

    # -- what tests do --------------------------------------------------------------------

    def navigate(self, url: str) -> None:
        """Open `url` and wait until it has loaded (its load event); a URL that differs from
        the page's only in its fragment just moves there (``hashchange``), as in a browser."""
        self._events = [e for e in self._events if e["method"] != "Page.loadEventFired"]
        result = self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"cannot open {url}: {result['errorText']}")
        if result.get("loaderId"):  # none for a move within the page (a new #fragment)
            self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"{expression!r} failed: {text}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """Click the middle of the element `selector` names, as a mouse would."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
            "if (!e) return null; e.scrollIntoView({block: 'center'}); "
            "const r = e.getBoundingClientRect(); "
            "return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        if box is None:
            raise BrowserError(f"no element {selector!r} to click")
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1},
            )

    def type_text(self, text: str) -> None:
        """Type `text` into the focused element: a key down and up per character."""
        for char in text:
            self.send(
                "Input.dispatchKeyEvent",
                {"type": "keyDown", "key": char, "text": char, "unmodifiedText": char},
            )
            self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char})

    def key(self, key: str) -> None:
        """Press and release a named key (``Backspace``, ``Enter``, ``Tab``). Enter types its
        "\\r" as a keyboard's does, so it submits a form as a user's Enter would."""
        codes = {"Backspace": 8, "Tab": 9, "Enter": 13, "Escape": 27, "Delete": 46}
        code = codes.get(key, 0)
        down: dict[str, Any] = {"type": "rawKeyDown"}
        if key == "Enter":
            down = {"type": "keyDown", "text": "\r", "unmodifiedText": "\r"}
        for event in (down, {"type": "keyUp"}):
            self.send(
                "Input.dispatchKeyEvent",
                {**event, "key": key, "code": key, "windowsVirtualKeyCode": code},
            )

    def wait_until(self, condition: str) -> Any:
        """Wait for a JavaScript condition to hold (checked on each animation frame, at most
        `timeout` seconds) and return its value."""
        script = (
            "new Promise((resolve, reject) => { const limit = performance.now() + "
            f"{self.timeout * 1000}; const check = () => {{ const v = ({condition}); "
            "if (v) resolve(v); else if (performance.now() > limit) reject(new Error("
            f"{json.dumps('timed out: ' + condition)})); else requestAnimationFrame(check); }}; "
            "check(); })"
        )
        return self.evaluate(script)

    def screenshot(self, *, full_page: bool = True) -> bytes:
        """A PNG of the page (the whole page, or the viewport), one pixel per CSS pixel."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            width, height = self.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            params["captureBeyondViewport"] = True
            params["clip"] = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
        return base64.b64decode(self.send("Page.captureScreenshot", params)["data"])

    def close(self) -> None:
        """Close the browser and wait for it to exit."""
        if self._process.poll() is None:
            try:
                self._session = ""
                self.timeout = 10.0
                self.send("Browser.close")
            except (BrowserError, OSError):
                pass
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        for fd in (self._send_fd, self._receive_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._send_fd = self._receive_fd = -1

    def __enter__(self) -> Chromium:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

"""Open a page in headless Chromium over the DevTools protocol (aiohttp's websocket client): collect console
messages, exceptions, dialogs and every network request, evaluate expressions in the page, take a screenshot.
Used by the tests and by scripts/screenshot (`python -m tests.reports.browser REPORT.html OUT.png`)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import re
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

DEADLINE_S = 30.0


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@dataclass
class Page:
    console: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    dialogs: list[dict[str, Any]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    screenshot: bytes = b""

    @property
    def errors(self) -> list[str]:
        out = [json.dumps(m.get("args"), default=str) for m in self.console if m.get("type") in ("error", "assert")]
        out += [e.get("exceptionDetails", {}).get("text", "exception") for e in self.exceptions]
        out += [e.get("entry", {}).get("text", "") for e in self.log if e.get("entry", {}).get("level") == "error"]
        return out


class Cdp:
    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws, self.ids, self.events = ws, itertools.count(1), asyncio.Queue[dict[str, Any]]()
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self.pending:
                self.pending.pop(data["id"]).set_result(data)
            elif "method" in data:
                self.events.put_nowait(data)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        n = next(self.ids)
        self.pending[n] = asyncio.get_running_loop().create_future()
        await self.ws.send_json({"id": n, "method": method, "params": params})
        reply = await asyncio.wait_for(self.pending[n], DEADLINE_S)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result


@contextlib.asynccontextmanager
async def browser(width: int, height: int) -> AsyncIterator[str]:
    """Start headless Chromium on a free port; yield its page's websocket URL."""
    exe = chromium()
    assert exe, "chromium is not installed"
    profile = tempfile.mkdtemp(prefix="flakeproxy-chromium-")
    args = [
        exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
        "--hide-scrollbars", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
        f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank",
    ]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    try:
        assert proc.stderr is not None
        port = await asyncio.wait_for(_devtools_port(proc.stderr), DEADLINE_S)
        async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/json/list") as response:
            targets = await response.json()
        yield next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
    finally:
        proc.terminate()
        with contextlib.suppress(ProcessLookupError):
            await asyncio.wait_for(proc.wait(), DEADLINE_S)
        shutil.rmtree(profile, ignore_errors=True)


async def _devtools_port(stderr: asyncio.StreamReader) -> int:
    lines = []
    while line := (await stderr.readline()).decode(errors="replace"):
        lines.append(line)
        found = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
        if found:
            return int(found.group(1))
    raise RuntimeError("chromium exited before DevTools listened:\n" + "".join(lines))


async def open_page(
    path: Path,
    expressions: dict[str, str] | None = None,
    width: int = 1200,
    height: int = 900,
    full: bool = False,
    media: str = "",
    dark: bool = False,
) -> Page:
    """Load the file, wait for its load event, evaluate expressions, screenshot (the viewport, or the page).
    media: "print" emulates printing; dark: prefers-color-scheme: dark."""
    page = Page()
    async with (
        browser(width, height) as url,
        aiohttp.ClientSession() as session,
        session.ws_connect(url, max_msg_size=0) as ws,
    ):
        cdp = Cdp(ws)
        for domain in ("Page", "Runtime", "Network", "Log"):
            await cdp.call(f"{domain}.enable")
        scheme = [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]
        await cdp.call("Emulation.setEmulatedMedia", media=media, features=scheme)
        await cdp.call("Page.navigate", url=path.resolve().as_uri())
        await asyncio.wait_for(_until_loaded(cdp, page), DEADLINE_S)
        for name, expression in (expressions or {}).items():
            reply = await cdp.call("Runtime.evaluate", expression=expression, returnByValue=True)
            page.values[name] = reply.get("result", {}).get("value")
        shot = await cdp.call("Page.captureScreenshot", format="png", captureBeyondViewport=full)
        page.screenshot = base64.b64decode(shot["data"])
        _drain(cdp, page)
        cdp.reader.cancel()
    return page


def _record(event: dict[str, Any], page: Page) -> None:
    method, params = event["method"], event.get("params", {})
    if method == "Runtime.consoleAPICalled":
        page.console.append(params)
    elif method == "Runtime.exceptionThrown":
        page.exceptions.append(params)
    elif method == "Page.javascriptDialogOpening":
        page.dialogs.append(params)
    elif method == "Network.requestWillBeSent":
        page.requests.append(params["request"]["url"])
    elif method == "Log.entryAdded":
        page.log.append(params)


async def _until_loaded(cdp: Cdp, page: Page) -> None:
    while True:
        event = await cdp.events.get()
        _record(event, page)
        if event["method"] == "Page.loadEventFired":
            return


def _drain(cdp: Cdp, page: Page) -> None:
    while not cdp.events.empty():
        _record(cdp.events.get_nowait(), page)


if __name__ == "__main__":
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    width, height = (int(v) for v in (sys.argv[3:5] or ["1200", "1500"]))
    dark = "--dark" in sys.argv[5:]
    shot = asyncio.run(open_page(source, width=width, height=height, dark=dark)).screenshot
    target.write_bytes(shot)
    print(f"{target}: {len(shot)} bytes")

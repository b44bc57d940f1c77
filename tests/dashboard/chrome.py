"""A real headless Chromium (Debian's ``chromium``), driven over the DevTools protocol with aiohttp.

No browser download: ``make test`` installs the distribution's package when it is missing.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import aiohttp

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--hide-scrollbars",
    "--window-size=1280,900",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
]


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise RuntimeError("chromium is not installed: `make test` installs it (apt-get install chromium)")
    return path


def save(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


class Chrome:
    """One browser with one page; ``send`` a DevTools command, ``wait_for`` an event."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.http: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None

    async def start(self, profile: Path, lang: str = "en-US", flags: tuple[str, ...] = ()) -> Chrome:
        """Start with a fresh profile folder; ``lang`` is what the browser asks pages for."""
        self.proc = await asyncio.create_subprocess_exec(
            chromium_path(),
            *FLAGS,
            *flags,
            f"--user-data-dir={profile}",
            f"--lang={lang}",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        assert self.proc.stderr is not None
        while True:
            line = (await asyncio.wait_for(self.proc.stderr.readline(), 60)).decode()
            if not line:
                raise RuntimeError("chromium exited before it listened for DevTools")
            if "DevTools listening on ws://" in line:
                port = int(line.split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
                break
        self._drain = asyncio.create_task(self._drain_stderr())
        self.http = aiohttp.ClientSession()
        async with self.http.get(f"http://127.0.0.1:{port}/json/list") as r:
            page = next(t for t in await r.json() if t["type"] == "page")
        self.ws = await self.http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        await self.send("Page.enable")
        await self.send("Network.enable")
        await self.send("Network.setExtraHTTPHeaders", headers={"Accept-Language": f"{lang},en;q=0.5"})
        await self.send(
            "Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False
        )
        return self

    async def _drain_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while await self.proc.stderr.readline():
            pass

    async def _read(self) -> None:
        assert self.ws is not None
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self._pending:
                self._pending.pop(data["id"]).set_result(data)
            elif "method" in data:
                self._events.put_nowait(data)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        assert self.ws is not None
        i = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[i] = fut
        await self.ws.send_str(json.dumps({"id": i, "method": method, "params": params}))
        reply = await asyncio.wait_for(fut, 60)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})  # type: ignore[no-any-return]

    async def wait_for(self, method: str, timeout: float = 60) -> dict[str, Any]:
        async def find() -> dict[str, Any]:
            while True:
                event = await self._events.get()
                if event["method"] == method:
                    return event

        return await asyncio.wait_for(find(), timeout)

    async def open(self, url: str) -> int:
        """Load ``url`` (following redirects) until its load event; returns the final HTTP status."""
        while not self._events.empty():
            self._events.get_nowait()
        await self.send("Page.navigate", url=url)
        status = 0
        while True:
            event = await self.wait_for_any(("Network.responseReceived", "Page.loadEventFired"))
            if event["method"] == "Page.loadEventFired":
                return status
            if event["params"].get("type") == "Document":
                status = event["params"]["response"]["status"]

    async def wait_for_any(self, methods: tuple[str, ...], timeout: float = 60) -> dict[str, Any]:
        async def find() -> dict[str, Any]:
            while True:
                event = await self._events.get()
                if event["method"] in methods:
                    return event

        return await asyncio.wait_for(find(), timeout)

    async def frame(self, url_part: str) -> int:
        """An execution context in the frame whose address holds ``url_part`` (an iframe of another
        origin, such as a sandboxed plugin page): its DOM, seen from a world of the test's own."""
        tree = (await self.send("Page.getFrameTree"))["frameTree"]
        frames, found = [tree], None
        while frames and found is None:
            node = frames.pop()
            found = node["frame"] if url_part in node["frame"].get("url", "") else None
            frames += node.get("childFrames", [])
        if found is None:
            raise LookupError(f"no frame at {url_part!r}")
        world = await self.send("Page.createIsolatedWorld", frameId=found["id"], worldName="test")
        return int(world["executionContextId"])

    async def type_text(self, text: str) -> None:
        """Type into the focused element, as a keyboard would (frameworks see their input events)."""
        await self.send("Input.insertText", text=text)

    async def eval(self, expression: str, context: int | None = None) -> Any:
        where = {"contextId": context} if context is not None else {}
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                                 awaitPromise=True, **where)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def screenshot(self, path: Path) -> None:
        shot = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        save(path, base64.b64decode(shot["data"]))

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()
        if self.http is not None:
            await self.http.close()
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()

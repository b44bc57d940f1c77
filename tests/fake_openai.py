"""A fake OpenAI-compatible server on 127.0.0.1, scripted per test, recording what it was sent.

It runs its own event loop in a thread, so sync code, pytest-asyncio loops and AstrBot's loop
can all talk to it through the real ``openai`` client.

A scripted chat reply is text, a function of the request body, or a dict: ``{"tool_calls": [...],
"content": ...}``, ``{"status": 429}`` (an HTTP error), ``{"delay": 5, "content": ...}`` (a slow
answer), ``{"reasoning": "...", "content": ...}`` (a reasoning model's thoughts outside
``content``). Usage is reported as an estimate of the tokens sent and answered.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

Reply = str | dict[str, Any] | Callable[[dict[str, Any]], "str | dict[str, Any]"]


def hash_vector(text: str, dim: int) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words point the same way."""
    v = np.zeros(dim, np.float32)
    for w in text.lower().split():
        h = int(hashlib.md5(w.strip(".,!?;:").encode()).hexdigest(), 16)
        v[h % dim] += 1.0 if (h >> 8) % 2 else -1.0
    n = float(np.linalg.norm(v)) or 1.0
    return (v / n).tolist()


@dataclass
class FakeOpenAI:
    """Scripted chat and embedding endpoints. Set attributes from a test to change behaviour."""

    embed_dim: int = 8
    replies: list[Reply] = field(default_factory=list)  # consumed in order; then default_reply
    default_reply: str = "ok"
    chat_status: int = 200
    embed_status: int = 200
    embed_delay: float = 0.0
    chat_delay: float = 0.0
    wrong_dim: int | None = None  # answer embeddings of this dimension instead
    embed_ok_left: int | None = None  # answer this many more embedding requests, then HTTP 500 (None: all)
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _runner: web.AppRunner | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def embed_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/embeddings")]

    def seen_text(self) -> str:
        """Everything the chat endpoint was sent, as one string (to search for leaks)."""
        return "\n".join(json.dumps(b, ensure_ascii=False) for b in self.chat_requests())

    # ---- lifecycle -----------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self._serve())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start")
        return self

    def stop(self) -> None:
        if self._loop and self._runner:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread:
            self._thread.join(10)

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        # a stalled handler (embed_delay) must not hold up stop()
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    # ---- handlers ------------------------------------------------------------------------
    async def _record(self, request: web.Request) -> dict[str, Any]:
        body = await request.json()
        self.requests.append({"path": request.path, "body": body, "time": time.time(),
                              "auth": request.headers.get("Authorization", "")})
        return body

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await self._record(request)
        await asyncio.sleep(self.embed_delay)
        if self.embed_ok_left is not None:
            self.embed_ok_left -= 1
        if self.embed_status != 200 or (self.embed_ok_left is not None and self.embed_ok_left < 0):
            return web.json_response({"error": {"message": "embedding backend down"}},
                                     status=self.embed_status if self.embed_status != 200 else 500)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dim = self.wrong_dim or body.get("dimensions") or self.embed_dim
        data = [{"object": "embedding", "index": i, "embedding": hash_vector(str(t), dim)}
                for i, t in enumerate(texts)]
        return web.json_response({"object": "list", "data": data, "model": body.get("model", "e"),
                                  "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await self._record(request)
        await asyncio.sleep(self.chat_delay)
        if self.chat_status != 200:
            return web.json_response({"error": {"message": "chat backend down"}}, status=self.chat_status)
        reply: Reply = self.replies.pop(0) if self.replies else self.default_reply
        if callable(reply):
            reply = reply(body)
        if isinstance(reply, dict) and reply.get("delay"):
            await asyncio.sleep(float(reply["delay"]))
        if isinstance(reply, dict) and reply.get("status"):
            return web.json_response({"error": {"message": "scripted failure"}}, status=int(reply["status"]))
        message = _message(reply)
        if body.get("stream"):
            return await self._stream(request, body, message)
        return web.json_response({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "m"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": _usage(body, message),
        })

    async def _stream(self, request: web.Request, body: dict[str, Any], message: dict[str, Any]
                      ) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        delta = {k: v for k, v in message.items() if v is not None}
        if "tool_calls" in delta:
            delta["tool_calls"] = [dict(tc, index=i) for i, tc in enumerate(delta["tool_calls"])]
        chunks: list[dict[str, Any]] = [
            {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {},
                          "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}]},
        ]
        for chunk in chunks:
            chunk.update({"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                          "created": int(time.time()), "model": body.get("model", "m")})
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        return resp


def _message(reply: str | dict[str, Any]) -> dict[str, Any]:
    """A reply is text, or {"tool_calls": [{"name": ..., "arguments": {...}}], "content": ...,
    "reasoning": ...}."""
    if isinstance(reply, str):
        return {"role": "assistant", "content": reply}
    calls = [{"id": f"call_{i}", "type": "function",
              "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))}}
             for i, c in enumerate(reply.get("tool_calls", []))]
    message = {"role": "assistant", "content": reply.get("content"), "tool_calls": calls or None}
    if reply.get("reasoning"):
        message["reasoning_content"] = reply["reasoning"]
    return message


def tokens(text: str) -> int:
    """A token estimate: a CJK character or ~4 other characters is one token."""
    cjk = sum(1 for c in text if "\u3400" <= c <= "\u9fff")
    return cjk + (len(text) - cjk + 3) // 4


def _usage(body: dict[str, Any], message: dict[str, Any]) -> dict[str, int]:
    sent = sum(tokens(m["content"]) if isinstance(m.get("content"), str) else 1
               for m in body.get("messages", []))
    answered = tokens(message.get("content") or "")
    return {"prompt_tokens": sent, "completion_tokens": answered, "total_tokens": sent + answered}


_LINE = re.compile(r"^e(\d+) \[[^\]]*\] ([^:：]+)[:：] (.*)$", re.M)


def batch_lines(body: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(episode id, speaker, text) of the lines a consolidation request showed the model."""
    user = next((m["content"] for m in reversed(body.get("messages", [])) if m.get("role") == "user"), "")
    return [(int(i), who, text) for i, who, text in _LINE.findall(user)]


def contract_answer(body: dict[str, Any], per: int = 4) -> str:
    """A well-behaved model: one ``add`` per ``per`` lines, sourced from them, about no one in particular."""
    lines = batch_lines(body)
    actions: list[dict[str, Any]] = [
        {"op": "add", "text": " / ".join(t for _, _, t in chunk)[:200], "kind": "fact", "about": [],
         "importance": 0.5, "scope": None, "sources": [f"e{i}" for i, _, _ in chunk], "when": None}
        for chunk in (lines[k:k + per] for k in range(0, len(lines), per))]
    return json.dumps({"actions": actions or [{"op": "none"}]}, ensure_ascii=False)

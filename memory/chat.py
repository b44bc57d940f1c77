"""Chat models behind one protocol: ``await complete(messages, json=..., timeout=...) -> ChatResult``.

``OpenAIChat`` talks to any OpenAI-compatible endpoint through the ``openai`` package; the plugin
wraps AstrBot's own chat providers the same way. Every failure is a ``ChatError``: a caller needs
one kind, and whether it was the endpoint (``transient``) or the answer.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .errors import ChatError, ChatTimeout

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}
API_KEY_ENV = "ENGRAM_CHAT_API_KEY"
DEFAULT_TIMEOUT = 60.0
_THINK = re.compile(r"<think>.*?(</think>|$)", re.S | re.I)


@dataclass(frozen=True)
class ChatResult:
    """A model's answer: its text (the ``content`` only), and token counts when the endpoint says."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@runtime_checkable
class ChatModel(Protocol):
    """A chat model. ``name`` says which (for logs and stats)."""

    name: str

    async def complete(self, messages: list[Message], *, json: bool = False,
                       timeout: float = DEFAULT_TIMEOUT) -> ChatResult: ...


def visible_text(content: str | None) -> str:
    """The answer without a reasoning model's ``<think>`` block (its thoughts are not the answer)."""
    return _THINK.sub("", content or "").strip()


class OpenAIChat:
    """Any OpenAI-compatible ``/v1/chat/completions`` endpoint through ``openai.AsyncOpenAI``.

    The key comes from the environment (``$ENGRAM_CHAT_API_KEY`` unless ``api_key_env`` names
    another variable), never from a file. Retries are the caller's: the client makes none.
    """

    def __init__(self, model: str, base_url: str | None = None, *, api_key_env: str = API_KEY_ENV,
                 temperature: float = 0.2):
        from openai import AsyncOpenAI

        if not model.strip():
            raise ValueError("a chat model needs a model name")
        self.model = model
        self.name = f"openai/{model}"
        self.temperature = temperature
        self._client = AsyncOpenAI(base_url=base_url, api_key=os.environ.get(api_key_env) or "none",
                                   max_retries=0)

    async def complete(self, messages: list[Message], *, json: bool = False,
                       timeout: float = DEFAULT_TIMEOUT) -> ChatResult:
        import openai

        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json else {}
        try:
            resp = await asyncio.wait_for(self._client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature,  # type: ignore[arg-type]
                timeout=timeout, **extra), timeout + 1)
        except (asyncio.TimeoutError, openai.APITimeoutError) as e:
            raise ChatTimeout(f"{self.name} timed out after {timeout:.0f}s") from e
        except openai.APIStatusError as e:
            transient = e.status_code == 429 or e.status_code >= 500
            raise ChatError(f"{self.name} answered HTTP {e.status_code}", transient=transient) from e
        except openai.APIConnectionError as e:
            raise ChatError(f"{self.name} is unreachable: {e}", transient=True) from e
        except openai.OpenAIError as e:
            raise ChatError(f"{self.name} failed: {e}") from e
        if not resp.choices:
            raise ChatError(f"{self.name} answered no choices")
        text = visible_text(resp.choices[0].message.content)
        if not text:
            raise ChatError(f"{self.name} answered nothing")
        usage = resp.usage
        return ChatResult(text, usage.prompt_tokens if usage else None,
                          usage.completion_tokens if usage else None)

    async def close(self) -> None:
        await self._client.close()

"""A scripted ChatModel for the core's tests: answers from a list, records what it was asked."""

from __future__ import annotations

from astrbot_plugin_engram.memory.chat import ChatResult, Message
from astrbot_plugin_engram.memory.errors import ChatError


class ScriptedChat:
    """Answers each call with the next scripted text (a ChatError instance is raised instead)."""

    name = "scripted"

    def __init__(self, *answers: str | ChatError):
        self.answers = list(answers)
        self.calls: list[list[Message]] = []

    async def complete(self, messages: list[Message], *, json: bool = False,
                       timeout: float = 60.0) -> ChatResult:
        self.calls.append(messages)
        if not self.answers:
            raise AssertionError("the model was called more often than scripted")
        answer = self.answers.pop(0)
        if isinstance(answer, ChatError):
            raise answer
        return ChatResult(answer)

    def asked(self, n: int = -1) -> str:
        """The user message of call ``n``."""
        return self.calls[n][-1]["content"]

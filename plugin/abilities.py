"""What the bot can do: the tools and commands really registered in AstrBot (Engram's among them),
plus the owner's notes in ``identity/abilities.md``, as a compact text for the injected block.

The text is rebuilt only when what is registered (or the notes file) changes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..memory.self.identity import FOLDER, read_document
from ..memory.text.words import words

log = logging.getLogger("engram.plugin")

NOTES_FILE = "abilities.md"
DESCRIPTION_CHARS = 60
NOTES_CHARS = 600


def astrbot_tools(context: Any) -> list[tuple[str, str]]:
    """(name, description) of every active LLM tool AstrBot will offer the model."""
    try:
        funcs = context.get_llm_tool_manager().func_list
    except Exception:  # an AstrBot without a tool manager: no tools to tell
        return []
    return [(str(f.name), str(getattr(f, "description", "") or "")) for f in funcs
            if getattr(f, "active", True)]


def astrbot_commands() -> list[str]:
    """The commands of every activated plugin (AstrBot's own included), as typed: ``/help``, ``/mem``."""
    try:
        from astrbot.core.star.filter.command import CommandFilter
        from astrbot.core.star.filter.command_group import CommandGroupFilter
        from astrbot.core.star.star_handler import EventType, star_handlers_registry

        handlers = star_handlers_registry.get_handlers_by_event_type(EventType.AdapterMessageEvent)
    except Exception:
        return []
    names: list[str] = []
    for h in handlers:
        for f in getattr(h, "event_filters", ()):
            if isinstance(f, CommandFilter) and not getattr(f, "parent_command_names", [""])[0]:
                names.append("/" + f.command_name)
            elif isinstance(f, CommandGroupFilter) and getattr(f, "parent_group", None) is None:
                names.append("/" + f.group_name)
    return sorted(dict.fromkeys(names))


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split()).split(". ")[0].rstrip(".")
    return flat if len(flat) <= DESCRIPTION_CHARS else flat[: DESCRIPTION_CHARS - 1] + "…"


def abilities_text(tools: Sequence[tuple[str, str]], commands: Sequence[str], notes: str) -> str:
    """``What you can do: tools: a (does x); b. Commands people can send: /help, /mem. Notes: ...``"""
    parts = []
    if tools:
        parts.append("tools you can call: " + "; ".join(
            f"{name} ({_first_sentence(d)})" if d.strip() else name for name, d in tools))
    if commands:
        parts.append("commands people can send: " + ", ".join(commands))
    if notes:
        parts.append("the owner's notes: " + " ".join(notes.split())[:NOTES_CHARS])
    return ("What you can do — " + ". ".join(parts) + ".") if parts else ""


# What asks about the bot's abilities, beside the names of its tools and commands ("what can you do?",
# "which commands are there?", "你能做什么", "有什么功能"), as ``words`` gives them (stemmed).
_ASKING = frozenset(words("""command tool abilities ability able feature features function functions
    capable help 命令 指令 工具 功能 能力 本事 会做 能做 帮助"""))
_CAN_YOU = re.compile(r"\b(?:can|could)\s+you\s+(?:do|help)\b|你(?:都|还)?(?:能|会|可以)(?:做|干)", re.I)


def asks_abilities(query: str, text: str) -> bool:
    """Whether ``query`` asks what the bot can do, or names one of the commands (as typed, "/mem") or
    tools ("memory_recall") in ``text``: a command's bare name is a common word ("name", "set")."""
    low = query.casefold()
    named = re.findall(r"/\w+|\b[a-z]+_\w+\b", text)
    return bool(set(words(query)) & _ASKING or _CAN_YOU.search(query)
                or any(re.search(rf"(?<![\w/]){re.escape(n)}(?!\w)", low) for n in named))


class Abilities:
    """The abilities text, rebuilt when the registered tools, commands or the notes change."""

    def __init__(self, data_dir: Path, tools: Callable[[], list[tuple[str, str]]],
                 commands: Callable[[], list[str]]):
        self.notes_path = Path(data_dir) / FOLDER / NOTES_FILE
        self._tools, self._commands = tools, commands
        self._key: object = None
        self._text = ""
        self.builds = 0

    def text(self) -> str:
        tools, commands = self._tools(), self._commands()
        try:
            mtime = self.notes_path.stat().st_mtime
        except OSError:
            mtime = 0.0
        key = (tuple(tools), tuple(commands), mtime)
        if key != self._key:
            notes = read_document(self.notes_path, 4096)
            if notes.problem:
                log.error("Engram: %s", notes.problem)
            self._text, self._key = abilities_text(tools, commands, notes.text), key
            self.builds += 1
        return self._text

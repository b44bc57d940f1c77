"""What the dashboard is told by its host (the plugin or the command line)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Protocol

from ..memory import Engram, Hit
from ..memory.self.selfhood import BlockDefaults, BlockSettings

EngramSource = Engram | Callable[[], Awaitable[Engram]]  # the memory, or how to get it when it opens


class Explained(Protocol):
    """A block the host would inject: the hits it recalled, those that went in, the block's text."""

    @property
    def hits(self) -> Sequence[Hit]: ...
    @property
    def injected(self) -> Sequence[Hit]: ...
    @property
    def text(self) -> str: ...


# (place, query, owner's private chat or None: the host decides, person id or "") -> the block
Explain = Callable[[str, str, "bool | None", str], Awaitable[Explained]]


def no_identity() -> str:
    return ""


def no_jobs() -> Iterable[str]:
    return ()


@dataclass(frozen=True)
class DashboardSettings:
    """The token, and what recall explained needs to render exactly what the plugin injects."""

    token: str
    # what shapes the block (budget, recall_k, which lines go in): the plugin's settings, or its defaults
    block: BlockSettings = BlockDefaults()
    identity: Callable[[], str] = no_identity  # the core identity the identity page falls back on
    tz: tzinfo | None = None
    chat_model: str = ""  # the chat model the plugin's own calls use, as the host names it
    owner_places: Callable[[str], bool] | None = None  # whether a place is the owner's private chat
    # the names of the jobs the host schedules, listed even before their first run; the runs
    # themselves are read from the store (``Store.job_runs``), as ``/mem stats`` shows them
    jobs: Callable[[], Iterable[str]] = no_jobs
    # the bot's data folder (identity/, diary/); None: the folder holding the store file
    data_dir: Path | None = None
    # how the host makes the block it injects (the plugin: its own injection path, ``service.explain``,
    # which knows AstrBot's tools for the abilities line); None (the command line): the same
    # ``memory.compose.Composer`` over the data folder's identity, self-image and inner state
    explain: Explain | None = None

    @property
    def budget(self) -> int:
        return self.block.inject_budget_tokens

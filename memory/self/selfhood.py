"""What the bot knows of itself for each reply: its core identity, its self-image, its inner state
and its abilities, each switchable in the config (the plugin's, or the command line's defaults).

The core identity always goes in (shortened to fit the budget if it must, never silently: a file
that is too large or not UTF-8 is logged in one clear sentence, once, and the bot still replies).
The self-image goes in on one line, shortened to two fifths of the budget if it must (said once in the
log); the abilities go in when they fit; the inner state is one sentence, and what is on the bot's
mind is said only in the owner's private chat.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Protocol

from ..render import fit_identity, plain
from ..text.display import flat
from ..validate import setting_value
from .identity import IdentityFolder, read_document
from .inner_state import Baseline, current, load_state, sentence
from .proposals import Proposals

log = logging.getLogger("engram.plugin")

SELF_IMAGE_SHARE = 0.4  # of the injection budget the self-image may take (the prompt asks for at most
# 120 words or 200 characters, ~200 tokens: whole at the default budget; a longer one is cut)


class BlockSettings(Protocol):
    """What shapes the block besides the memory (the plugin's ``Settings`` has each of these)."""

    @property
    def inject_budget_tokens(self) -> int: ...
    @property
    def recall_k(self) -> int: ...
    @property
    def identity_enabled(self) -> bool: ...
    @property
    def time_enabled(self) -> bool: ...
    @property
    def self_image_enabled(self) -> bool: ...
    @property
    def inner_state_enabled(self) -> bool: ...
    @property
    def abilities_enabled(self) -> bool: ...
    @property
    def baseline_mood(self) -> str: ...


BUDGET_RANGE = (50, 8000)  # inject_budget_tokens, wherever it is set (the plugin's config, the command line)
RECALL_K_RANGE = (1, 50)
MOOD_LIMIT = 40  # baseline_mood's characters: a mood word, not a paragraph (it goes into every reply)
_BLOCK_BOUNDS = {"inject_budget_tokens": BUDGET_RANGE, "recall_k": RECALL_K_RANGE}


@dataclass(frozen=True)
class BlockDefaults:
    """The plugin's defaults (``_conf_schema.json``; a test keeps them equal): the block a bot with
    an unchanged config gets, for recall explained from the command line."""

    inject_budget_tokens: int = 800
    recall_k: int = 8
    identity_enabled: bool = True
    time_enabled: bool = True
    self_image_enabled: bool = True
    inner_state_enabled: bool = True
    abilities_enabled: bool = True
    baseline_mood: str = "calm"


def block_settings(raw: Mapping[str, Any]) -> tuple[BlockDefaults, list[str]]:
    """The block's settings from the plugin's config as AstrBot saves it (``data/config/
    astrbot_plugin_engram_config.json``), for the dashboard from the command line, and one message
    per bad key: a value of the wrong type or out of bounds keeps its default, as the plugin's own
    parsing does (``plugin/config.py``, through the same ``validate.setting_value``; a property test
    holds the two equal)."""
    values: dict[str, Any] = {}
    errors: list[str] = []
    for f in fields(BlockDefaults):
        if f.name in raw:
            try:
                values[f.name] = setting_value(raw[f.name], f.default, _BLOCK_BOUNDS.get(f.name),
                                               MOOD_LIMIT if f.name == "baseline_mood" else None)
            except ValueError as e:
                errors.append(f"config key {f.name!r}: {e}; using the default {f.default!r}")
    return BlockDefaults(**values), errors


class AbilitiesText(Protocol):
    """What the bot can do, as the block says it (the plugin's ``Abilities``: AstrBot's tools)."""

    def text(self) -> str: ...


class Selfhood:
    """The identity folder of one bot and the lines it adds to the injected block.

    ``read_only``: the files are only read (the dashboard from the command line): the old
    ``identity.md`` is read where it lies instead of being copied to ``identity/self.md``."""

    def __init__(self, data_dir: Path, settings: BlockSettings, abilities: AbilitiesText | None = None,
                 tz: tzinfo | None = None, *, read_only: bool = False):
        self.folder = IdentityFolder(data_dir)
        self.settings = settings
        self.abilities = abilities
        self.read_only = read_only
        self.proposals = Proposals(self.folder, tz=tz)  # an approved change is dated in the bot's zone
        self.baseline = Baseline(mood=settings.baseline_mood or "calm")
        self._reported: set[str] = set()
        self._shortened = ""  # the self-image last said to be cut (said once)
        self._shortened_identity = ""  # the core identity last said to be cut (said once)

    def _report(self, problem: str) -> None:
        if problem and problem not in self._reported:
            self._reported.add(problem)
            log.error("Engram: %s", problem)

    def identity(self) -> str:
        """The core identity (``identity/self.md``), or "" when switched off or unreadable (logged once)."""
        if not self.settings.identity_enabled:
            return ""
        doc = read_document(self.folder.self_path) if self.read_only else self.folder.core()
        if self.read_only and not self.folder.self_path.exists():
            doc = read_document(self.folder.old_path)  # where the plugin would copy it from
        self._report(doc.problem)
        return doc.text

    def identity_line(self) -> str:
        """The core identity as the block carries it: plain text within its share of the budget (a
        longer one goes in cut, said once in the log)."""
        identity = plain(self.identity())
        budget = self.settings.inject_budget_tokens
        fitted = fit_identity(identity, budget) if identity else ""
        if fitted != identity and identity != self._shortened_identity:
            self._shortened_identity = identity
            log.warning("Engram: the core identity (identity/self.md; an old identity.md is copied there "
                        "once) has %d characters, more than half the injection budget "
                        "(inject_budget_tokens=%d): "
                        "only its beginning is injected (%d characters)", len(identity), budget,
                        len(fitted) - 1)
        return fitted

    def self_image(self) -> str:
        """One line (whatever the file holds: a heading, a line like the block's own), within
        ``SELF_IMAGE_SHARE`` of the budget: a longer one goes in cut at a sentence end, and is said
        once in the log."""
        if not self.settings.self_image_enabled:
            return ""
        doc = self.folder.self_image()
        self._report(doc.problem)
        text = flat(doc.text)
        if not text:
            return ""
        budget = self.settings.inject_budget_tokens
        fitted = fit_identity(text, budget, SELF_IMAGE_SHARE)
        if fitted != text and text != self._shortened:
            self._shortened = text
            log.warning("Engram: the self-image (identity/self-image.md) has %d characters, more than two "
                        "fifths of the injection budget (inject_budget_tokens=%d): only its beginning is "
                        "injected (%d characters)", len(text), budget, len(fitted) - 1)
        return f"How you see yourself lately (your own words): {fitted}"

    def inner_state(self, now: datetime, *, owner_private: bool) -> str:
        if not self.settings.inner_state_enabled:
            return ""
        state = current(load_state(self.folder.data_dir), self.baseline, now)
        return sentence(state, owner_private=owner_private)

    def abilities_text(self) -> str:
        if not self.settings.abilities_enabled or self.abilities is None:
            return ""
        return self.abilities.text()

    def extras(self, now: datetime, *, owner_private: bool, abilities: bool = True) -> list[str]:
        """The optional lines, most important first (each goes in whole, or not at all; ``abilities``
        False: not the abilities line, see ``plugin.service``)."""
        return [line for line in (self.inner_state(now, owner_private=owner_private), self.self_image(),
                                  self.abilities_text() if abilities else "") if line]

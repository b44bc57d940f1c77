"""What the bot knows of itself for each reply: its core identity, its self-image, its inner state,
its abilities and the sense of time, each switchable in the config.

The core identity always goes in (shortened to fit the budget if it must, never silently: a file
that is too large or not UTF-8 is logged in one clear sentence, once, and the bot still replies).
The self-image goes in on one line, shortened to two fifths of the budget if it must (said once in the
log); the abilities go in when they fit; the inner state is one sentence, and what is on the bot's
mind is said only in the owner's private chat.
"""

from __future__ import annotations

import logging
from datetime import datetime, tzinfo
from pathlib import Path

from ..memory.render import fit_identity
from ..memory.self.identity import IdentityFolder
from ..memory.self.inner_state import Baseline, current, load_state, sentence
from ..memory.self.proposals import Proposals
from ..memory.text.display import flat
from .abilities import Abilities
from .config import Settings

log = logging.getLogger("engram.plugin")

SELF_IMAGE_SHARE = 0.4  # of the injection budget the self-image may take (the prompt asks for at most
# 120 words or 200 characters, ~200 tokens: whole at the default budget; a longer one is cut)


class Selfhood:
    """The identity folder of one bot and the lines it adds to the injected block."""

    def __init__(self, data_dir: Path, settings: Settings, abilities: Abilities | None = None,
                 tz: tzinfo | None = None):
        self.folder = IdentityFolder(data_dir)
        self.settings = settings
        self.abilities = abilities
        self.proposals = Proposals(self.folder, tz=tz)  # an approved change is dated in the bot's zone
        self.baseline = Baseline(mood=settings.baseline_mood or "calm")
        self._reported: set[str] = set()
        self._shortened = ""  # the self-image last said to be cut (said once)

    def _report(self, problem: str) -> None:
        if problem and problem not in self._reported:
            self._reported.add(problem)
            log.error("Engram: %s", problem)

    def identity(self) -> str:
        """The core identity (``identity/self.md``), or "" when switched off or unreadable (logged once)."""
        if not self.settings.identity_enabled:
            return ""
        doc = self.folder.core()
        self._report(doc.problem)
        return doc.text

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

"""The ``/mem`` dispatcher: subcommands by name, each ``run(ctx, args) -> reply``; ``dispatch`` turns a
``/mem ...`` line into a reply in the language ``replies.language`` chooses, never a traceback. The
plugin's subcommands are listed in ``registry.py``."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...memory import EngramError
from ...memory.backups import newest_backup
from ...memory.errors import StoreError, StoreUnwritable
from ...memory.validate import clean
from ...memory.wording import EN
from ..events import COMMAND
from ..replies.catalogue import TEXTS, say
from ..replies.errors import error_text
from ..replies.fit import fit_lines, short
from ..replies.language import reply_language
from ..service import EngramService
from .args import OPTION_DASHES, Refused, UsageError, split_command
from .context import CommandContext

log = logging.getLogger("engram.plugin")

REFUSAL = say(EN, "refusal")

Run = Callable[[CommandContext, str], Awaitable[str]]


@dataclass(frozen=True)
class Subcommand:
    """One ``/mem`` subcommand: its name, usage and summary (catalogue keys, or text as it is) and
    the function that answers it."""

    name: str
    usage: str
    summary: str
    run: Run


class Registry:
    """Subcommands by name, in the order ``/mem help`` lists them."""

    def __init__(self, subcommands: Sequence[Subcommand] = (), prog: str = "/" + COMMAND):
        self.prog = prog
        self._subs: dict[str, Subcommand] = {}
        for sub in subcommands:
            self.add(sub)

    def add(self, sub: Subcommand) -> None:
        if sub.name in self._subs:
            raise ValueError(f"a subcommand named {sub.name!r} is already registered")
        self._subs[sub.name] = sub

    def command(self, name: str, usage: str, summary: str) -> Callable[[Run], Run]:
        """Add the decorated function as subcommand ``name`` (a registry made in a test)."""
        def add(run: Run) -> Run:
            self.add(Subcommand(name, usage, summary, run))
            return run
        return add

    def names(self) -> list[str]:
        return list(self._subs)

    def usage(self, name: str, lang: str = EN) -> str:
        return say(lang, "usage", prog=self.prog, usage=_text(lang, self._subs[name].usage))

    def help(self, lang: str = EN, name: str = "") -> str:
        subs = [self._subs[name]] if name in self._subs else list(self._subs.values())
        lines = [f"{self.prog} {_text(lang, s.usage)} — {_text(lang, s.summary)}" for s in subs]
        return fit_lines([say(lang, "help_head"), *lines, say(lang, "help_lang")], lang,
                         say(lang, "help_more"), keep=1)

    async def dispatch(self, service: EngramService, event: Any, text: str) -> str:
        """The reply to one ``/mem`` line from ``event``, in the language ``reply_language`` chooses;
        text a platform can send: a lone surrogate the line held (half an emoji), echoed back in the
        reply (``/mem recall``'s query), is replaced (found by the fuzzer)."""
        return clean(await self._reply(service, event, text))

    async def _reply(self, service: EngramService, event: Any, text: str) -> str:
        name, args = split_command(text)
        lang = await reply_language(service, event, args)
        if not event.is_admin():
            return say(lang, "refusal")
        args = OPTION_DASHES.sub("--", args)
        sub = self._subs.get(name)
        if not name:
            return self.help(lang)
        if sub is None:
            names = "|".join(self._subs)
            return say(lang, "unknown_sub", name=repr(short(name)), prog=self.prog, names=names)
        ctx = CommandContext(service, event, service.audience(event), lang, self)
        try:
            return await sub.run(ctx, args)
        except UsageError as e:
            return "\n".join(x for x in (e.text(lang), self.usage(name, lang)) if x)
        except (Refused, EngramError) as e:
            said = say(lang, "error", error=e.text(lang) if isinstance(e, Refused) else error_text(lang, e))
            return said + (_backups(service, lang) if _cannot_open(e) and ctx.audience.owner_private else "")
        except Exception as e:  # the owner gets a line, the log gets the traceback
            log.exception("Engram: /%s %s failed", COMMAND, name)
            return say(lang, "failed", prog=self.prog, name=name, error=type(e).__name__)


def _text(lang: str, text: str) -> str:
    """A subcommand's usage or summary: from the catalogue when it is a key there, else as registered."""
    return say(lang, text) if text in TEXTS else text


def _cannot_open(e: Exception) -> bool:
    """The store cannot be used (not SQLite, damaged, newer): not a full disk or a lock, which pass."""
    code = str(getattr(e, "code", ""))
    passing = code == "store_locked" or code.startswith("backup_")  # a lock; a backup that failed
    return isinstance(e, StoreError) and not isinstance(e, StoreUnwritable) and not passing


def _backups(service: EngramService, lang: str) -> str:
    """The newest backup, for the owner of a store that cannot be used (nothing is restored by itself)."""
    newest = newest_backup(service.path)
    if newest is None:
        return say(lang, "backup_none")
    return say(lang, "backup_newest", path=str(newest), store=str(service.path))

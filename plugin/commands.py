"""The ``/mem`` owner commands: a small registry of subcommands, each ``run(ctx, args) -> reply``.

Later work adds its subcommands with ``@COMMANDS.command(...)`` in its own module; nothing here
changes. Every read goes through the audience's visibility. A memory this chat may not see can be
shown, re-scoped or forgotten only in the owner's private chat; elsewhere it does not exist. Every
reply is said in the language ``reply_lang`` chooses, from ``reply_catalogue`` (``ctx.say``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from astrbot.api.event import MessageChain
from astrbot.api.message_components import Plain

from ..memory import (
    Audience,
    EngramError,
    Memory,
    place_scope,
    visibility,
)
from ..memory.metabolism.dedup import remember
from ..memory.model import now_utc
from ..memory.render import quoted
from ..memory.scopes import OWNER
from ..memory.text.display import flat
from ..memory.text.words import MAX_TEXT
from .command_args import (
    OPTION_DASHES,
    Refused,
    UsageError,
    list_args,
    parse_id,
    parse_key,
    scope_arg,
    split_command,
)
from .command_reach import hit_line, reachable, reachable_episode
from .command_text import SOURCES_CHARS, WHOLE_CHARS, fit_lines, short, shown_whole
from .events import COMMAND, platform_of
from .forget_counts import erased_here, seen_part
from .reply_catalogue import TEXTS, counted, say
from .reply_lang import EN, reply_language, when
from .reply_words import error_text, word
from .service import EngramService

log = logging.getLogger("engram.plugin")

REFUSAL = say(EN, "refusal")
PAGE = 10  # memories per page of /mem list
STATS = ("episodes", "memories", "archived", "superseded", "spaces", "people", "indexed")  # /mem stats


@dataclass
class CommandContext:
    """What a subcommand works with: the service, the event, and who would read the answer."""

    service: EngramService
    event: Any
    audience: Audience
    lang: str = EN  # the reply's language (reply_lang)

    def say(self, key: str, /, **values: object) -> str:
        """The catalogue's text of ``key`` in this reply's language."""
        return say(self.lang, key, **values)

    def when(self, then: Any) -> str:
        return when(self.lang, then, now_utc(), self.service.tz)

    async def say_now(self, text: str) -> None:
        """Send ``text`` to this chat at once, before the command's answer (a failure is logged)."""
        try:
            await self.event.send(MessageChain([Plain(text)]))
        except Exception:
            log.exception("Engram: sending a line before the answer failed")

    def sees_episode(self, place: str) -> bool:
        """Whether a line of ``space`` may be shown here: said in a place this chat sees, or this is
        the owner's private chat (which sees everything)."""
        return self.audience.owner_private or visibility(self.audience).sees_episode(place)

    def sees_memory(self, scope: str) -> bool:
        """Whether a memory of ``scope`` may be shown here (the owner's private chat: any)."""
        return self.audience.owner_private or visibility(self.audience).sees_memory(scope)

    def owner_hint(self) -> str:
        """For a refusal of the owner's commands in a private chat that is not the owner's: how to make
        it the owner's ("" elsewhere: a group is never the owner's private chat)."""
        place = self.audience.place.split(":")
        if self.audience.owner_private or len(place) < 3 or place[1] != "private":
            return ""
        settings, me = self.service.settings, f"{platform_of(self.event)}:{place[2]}"
        if not settings.owner_ids and not settings.owner_private_spaces:
            return self.say("hint_no_owner", me=me)
        return self.say("hint_bare_id", bare=place[2], me=me) if place[2] in settings.owner_ids else ""

    def forget_turn(self) -> AbstractAsyncContextManager[None]:
        """A forget's turn with the diary and self-image jobs; told at once when it must wait (what
        holds the turn, said in this reply's language)."""
        lock = self.service.days_lock
        return lock.forget_turn(lambda _line: self.say_now(
            self.say("forget_waits", what=self.say(f"holder_{lock.held_by or 'diary'}"))))


Run = Callable[[CommandContext, str], Awaitable[str]]


@dataclass(frozen=True)
class Subcommand:
    name: str
    usage: str
    summary: str
    run: Run


class Registry:
    """Subcommands by name; ``dispatch`` turns a ``/mem ...`` line into a reply, never a traceback."""

    def __init__(self, prog: str = "/" + COMMAND):
        self.prog = prog
        self._subs: dict[str, Subcommand] = {}

    def command(self, name: str, usage: str, summary: str) -> Callable[[Run], Run]:
        def add(run: Run) -> Run:
            self._subs[name] = Subcommand(name, usage, summary, run)
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
        """The reply to one ``/mem`` line from ``event``, in the language ``reply_lang`` chooses."""
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
        ctx = CommandContext(service, event, service.audience(event), lang)
        try:
            return await sub.run(ctx, args)
        except UsageError as e:
            return "\n".join(x for x in (e.text(lang), self.usage(name, lang)) if x)
        except (Refused, EngramError) as e:
            return say(lang, "error", error=e.text(lang) if isinstance(e, Refused) else error_text(lang, e))
        except Exception as e:  # the owner gets a line, the log gets the traceback
            log.exception("Engram: /%s %s failed", COMMAND, name)
            return say(lang, "failed", prog=self.prog, name=name, error=type(e).__name__)


def _text(lang: str, text: str) -> str:
    """A subcommand's usage or summary: from the catalogue when it is a key there, else as registered."""
    return say(lang, text) if text in TEXTS else text


COMMANDS = Registry()


@COMMANDS.command("help", "usage_help", "sub_help")
async def _help(ctx: CommandContext, args: str) -> str:
    return COMMANDS.help(ctx.lang, args.strip().lower())


@COMMANDS.command("stats", "usage_stats", "sub_stats")
async def _stats(ctx: CommandContext, args: str) -> str:
    mem = await ctx.service.memory()
    jobs = (await ctx.service.jobs.lines(ctx.lang, counts=ctx.audience.owner_private)
            if ctx.service.jobs else [])  # what the jobs did over every place: the owner's chat only
    if not ctx.audience.owner_private:  # counts of other places are theirs too: this place's only
        counts, key, hint = await mem.place_stats(ctx.audience), "stats_here", ctx.owner_hint()
    else:  # every count the line names: 0 when the store has none
        counts = {**dict.fromkeys(STATS, 0), "embedder": None, **await mem.stats()}
        key, hint = "stats_all", ""
        if kept := ctx.service.recording.pending:  # the store could not take them (full, damaged)
            hint = "\n" + ctx.say("stats_kept", n=kept, file=ctx.service.recording.journal.path.name)
    head = ctx.say(key, **{**counts, "place": ctx.audience.place}) + hint
    return fit_lines([head, *jobs], ctx.lang, ctx.say("rest_dashboard"))


@COMMANDS.command("recall", "usage_recall", "sub_recall")
async def _recall(ctx: CommandContext, args: str) -> str:
    archived = bool(re.match(r"--archived(\s|$)", args))
    args = args[len("--archived"):].strip() if archived else args
    if not args:
        raise UsageError("")
    hits = await ctx.service.recall(ctx.audience, args, ctx.service.settings.recall_k,
                                    include_archived=archived)
    ctx.service.touch(hits)
    if not hits:
        return ctx.say("recall_none", query=quoted(short(args)))
    _, taken = await ctx.service.render(ctx.audience.place, hits, now_utc())
    lines = [hit_line(h, ctx) + ("" if i in taken else ctx.say("over_budget")) for i, h in enumerate(hits)]
    return fit_lines([ctx.say("recall_head", query=quoted(short(args))), *lines], ctx.lang,
                     ctx.say("rest_dashboard"))


@COMMANDS.command("why", "usage_why", "sub_why")
async def _why(ctx: CommandContext, args: str) -> str:
    inj = ctx.service.last_injection.get(ctx.audience.place)
    if inj is None:
        return ctx.say("why_none")
    head = ctx.say("why_head", when=ctx.when(inj.at), query=quoted(short(inj.query)))
    if not inj.injected:
        return head + "\n" + ctx.say("why_empty")
    # as this chat may see them now: a memory moved out of its sight since (/mem scope) is not shown
    now = await (await ctx.service.memory()).memories([h.id for h in inj.injected if h.kind == "memory"])
    shown = [h for h in inj.injected
             if h.kind == "episode" or (h.id in now and ctx.sees_memory(now[h.id].scope))]
    left = len(inj.hits) - len(inj.injected)
    gone = len(inj.injected) - len(shown)
    return fit_lines([head, *(hit_line(h, ctx) for h in shown)]
                     + ([ctx.say("why_gone", n=gone)] if gone else [])
                     + ([ctx.say("why_left", n=left)] if left else []), ctx.lang, ctx.say("rest_dashboard"))


@COMMANDS.command("remember", "usage_remember", "sub_remember")
async def _remember(ctx: CommandContext, args: str) -> str:
    found = re.search(r"(?:^|\s)--scope(?:\s+|=)(\S+)", args)
    if re.search(r"(?:^|\s)--scope\s*$", args):
        raise UsageError("arg_scope_value")
    scope = scope_arg(found.group(1)) if found else place_scope(ctx.audience.place)
    text = (args[: found.start()] + args[found.end():]).strip() if found else args.strip()
    if not text:
        raise UsageError("")
    if len(text) > MAX_TEXT:  # the store would keep only its beginning
        return ctx.say("too_long", n=len(text), max=MAX_TEXT)
    if scope == OWNER and not ctx.service.settings.owner_ids:
        return ctx.say("not_remembered", why=ctx.say("no_owner"))
    if not ctx.sees_memory(scope):
        # a scope this chat does not see does not exist here: no write into it, and no "already
        # remembered" telling what it holds
        raise Refused("no_scope_here", scope=short(scope))
    mid, how = await remember(await ctx.service.memory(), Memory(text=text, scope=scope, kind="fact"))
    said = {"kept": "remembered_kept", "updated": "remembered_updated"}.get(how, "remembered")
    return ctx.say(said, id=mid, scope=scope)


@COMMANDS.command("show", "usage_show", "sub_show")
async def _show(ctx: CommandContext, args: str) -> str:
    kind, key = parse_key(args)
    if kind == "e":
        return await _show_episode(ctx, key)
    m = await reachable(ctx, key)
    mem = await ctx.service.memory()
    assert m.id is not None
    ctx.service.touch([f"m{m.id}"])
    head = [ctx.say("show_head", id=m.id, kind=word(ctx.lang, "kind", m.kind), scope=m.scope,
                    status=word(ctx.lang, "status", m.status), importance=f"{m.importance:.2f}")]
    lines = [ctx.say("show_created", when=ctx.when(m.created_at))]
    if m.subjects:
        lines.append(short(ctx.say("show_about", who=", ".join(m.subjects))))
    versions = await mem.history(m.id)
    if len(versions) > 1:
        chain = " -> ".join(f"m{v.id} ({word(ctx.lang, 'status', v.status)})" for v in versions)
        lines.append(short(ctx.say("show_versions", chain=chain)))
    sources = await mem.sources(m.id)
    shown = [e for e in sources if ctx.sees_episode(e.place)]
    said = [ctx.say("show_source", id=e.id, when=ctx.when(e.time), who=short(e.actor_name or e.actor),
                    text=quoted(short(e.content))) for e in shown]
    # uncounted: how many lines another chat said (the self-image draws on every chat's) is theirs
    hidden = [ctx.say("show_hidden")] if len(shown) < len(sources) else []
    lines += [fit_lines(said, ctx.lang, ctx.say("rest_dashboard"), keep=0, limit=SOURCES_CHARS), *hidden]
    rest = "\n".join(x for x in [*head, *lines] if x)
    return "\n".join([*head, shown_whole(m.text, f"m{m.id}", ctx.lang, WHOLE_CHARS - len(rest) - 2),
                      *(x for x in lines if x)])


async def _show_episode(ctx: CommandContext, episode_id: int) -> str:
    ep = await reachable_episode(ctx, episode_id)
    who = (ctx.say("the_bot") if ep.kind == "message_out"
           else f"{short(ep.actor_name or ep.actor)} ({flat(ep.actor)})")
    head = ctx.say("episode_head", id=ep.id, kind=word(ctx.lang, "line", ep.kind), place=ep.place,
                   when=ctx.when(ep.time), who=who)
    tail = ctx.say("episode_tail", id=ep.id)
    text = shown_whole(ep.content, f"e{ep.id}", ctx.lang, WHOLE_CHARS - len(head + tail) - 2)
    return "\n".join([head, text, tail])


@COMMANDS.command("forget", "usage_forget", "sub_forget")
async def _forget(ctx: CommandContext, args: str) -> str:
    parts = args.split()
    with_sources = "--with-sources" in parts
    rest = [p for p in parts if p != "--with-sources"]
    if len(rest) != 1:
        raise UsageError("")
    kind, key = parse_key(rest[0])
    if kind == "e":
        ep = await reachable_episode(ctx, key)
        mem = await ctx.service.memory()
        async with ctx.forget_turn():  # after a diary job writing now; the diary it rewrites, in one turn
            # what was drawn from the line, counted as this chat may see it (read before it goes)
            seen = await seen_part(ctx, await mem.forget_episodes([key], dry_run=True))
            gone = await mem.forget_episodes([key])
        ctx.service.forget_injections(f"e{key}")
        return ctx.say("forgot_episode", id=key, place=ep.place, summary=erased_here(ctx, seen, gone))
    m = await reachable(ctx, key)
    assert m.id is not None
    mem = await ctx.service.memory()
    if with_sources and not ctx.audience.owner_private:
        # a forget here reaches no other chat: lines said elsewhere (and what was drawn from them) go
        # only from the owner's private chat
        plan = await mem.forget([m.id], with_sources=True, dry_run=True)
        lines = await mem.episodes(plan.episodes)
        if any(not ctx.sees_episode(e.place) for e in lines.values()):
            raise Refused("forget_elsewhere", id=m.id)
    async with ctx.forget_turn():  # the forget and the diary it rewrites, in one turn
        seen = await seen_part(ctx, await mem.forget([m.id], with_sources=with_sources, dry_run=True))
        done = await mem.forget([m.id], with_sources=with_sources)
    if with_sources:
        return ctx.say("forgot_sources", id=m.id, summary=erased_here(ctx, seen, done))
    versions, k = counted(ctx.lang, "n_version", len(done.memories)), len((seen or done).proposals)
    return ctx.say("forgot_memory_drawn" if k else "forgot_memory", id=m.id, versions=versions,
                   proposals=counted(ctx.lang, "n_proposal", k))


@COMMANDS.command("scope", "usage_scope", "sub_scope")
async def _scope(ctx: CommandContext, args: str) -> str:
    parts = args.split()
    if len(parts) != 2:
        raise UsageError("")
    m = await reachable(ctx, parse_id(parts[0]))
    assert m.id is not None
    scope = scope_arg(parts[1])
    if scope == OWNER and not ctx.service.settings.owner_ids:  # no chat could reach it again
        return ctx.say("not_moved", id=m.id, scope=m.scope, why=ctx.say("no_owner"))
    if scope != OWNER and not ctx.sees_memory(scope):  # into another chat: only the owner decides that
        raise Refused("move_elsewhere", scope=short(scope))
    await (await ctx.service.memory()).set_scope(m.id, scope)
    return ctx.say("moved", id=m.id, scope=short(scope), old=short(m.scope))


@COMMANDS.command("list", "usage_list", "sub_list")
async def _list(ctx: CommandContext, args: str) -> str:
    words, kind, page = list_args(args)
    mem = await ctx.service.memory()
    scope, what = None, ctx.say("list_all")
    people: list[str] = []
    if words == "place":
        scope, what = place_scope(ctx.audience.place), ctx.say("list_place")
    elif words:
        # someone by a display name they went by, by id, as the model named them (earlier versions of
        # tools.subjects_for), or by a name the model kept as text (memory_remember without a known id);
        # outside the owner's private chat only by a name they went by here: a name used in another
        # chat must not tell which of this place's people goes by it there
        named = (await mem.people_named(words) if ctx.audience.owner_private
                 else await mem.people_named_in(ctx.audience.place, words))
        people = [*named, words, f"{platform_of(ctx.event)}:name:{words}"]
        what = ctx.say("list_person", who=short(words))
    found, total = await mem.list_memories(visibility(ctx.audience), scope=scope, kind=kind,
                                           people=people, named=words if people else "",
                                           limit=PAGE, offset=(page - 1) * PAGE)
    if kind:
        what = ctx.say("list_kind", what=what, kind=word(ctx.lang, "kind", kind))
    if not total:
        return ctx.say("list_none", what=what)
    pages = (total + PAGE - 1) // PAGE
    if not found:
        return ctx.say("list_past", pages=pages, what=what, page=page)
    lines = [f"m{m.id} [{m.scope}] ({word(ctx.lang, 'kind', m.kind)}) {ctx.when(m.created_at)}: "
             f"{quoted(short(m.text))}" for m in found]
    head = ctx.say("list_head", what=what[0].upper() + what[1:], page=page, pages=pages, total=total)
    again = " ".join(x for x in (words, f"--kind {kind}" if kind else "") if x)
    turn = ctx.say("list_next", args=again + " " if again else "", next=page + 1) if page < pages else ""
    return fit_lines([head, *lines, *([turn] if turn else [])], ctx.lang, turn or ctx.say("rest_dashboard"))

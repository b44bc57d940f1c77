"""The ``/mem`` owner commands: a small registry of subcommands, each ``run(ctx, args) -> reply``.

Later work adds its subcommands with ``@COMMANDS.command(...)`` in its own module; nothing here
changes. Every read goes through the audience's visibility. A memory this chat may not see can be
shown, re-scoped or forgotten only in the owner's private chat; elsewhere it does not exist.
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
    Episode,
    Hit,
    Memory,
    UnknownIdError,
    parse_scope,
    space_scope,
    visibility,
)
from ..memory.dedup import remember
from ..memory.display import flat
from ..memory.model import now_utc
from ..memory.render import quoted, when
from ..memory.scopes import OWNER
from ..memory.text import MAX_TEXT
from .command_args import OPTION_DASHES, UsageError, list_args, parse_id, parse_key, split_command
from .command_text import short, shown_whole
from .events import COMMAND, platform_of
from .service import EngramService

log = logging.getLogger("engram.plugin")

REFUSAL = "Engram: /mem is for the bot's admins only."
PAGE = 10  # memories per page of /mem list
NO_OWNER = ("no owner is configured, so a memory scoped owner would show nowhere. "
            "Add the owner's id to owner_ids in Engram's configuration (AstrBot WebUI: Plugins -> Engram; "
            "/sid in the owner's private chat shows the id), or use another --scope.")


@dataclass
class CommandContext:
    """What a subcommand works with: the service, the event, and who would read the answer."""

    service: EngramService
    event: Any
    audience: Audience

    async def say_now(self, text: str) -> None:
        """Send ``text`` to this chat at once, before the command's answer (a failure is logged)."""
        try:
            await self.event.send(MessageChain([Plain(text)]))
        except Exception:
            log.exception("Engram: sending a line before the answer failed")

    def sees_episode(self, space: str) -> bool:
        """Whether a line of ``space`` may be shown here: said in a place this chat sees, or this is
        the owner's private chat (which sees everything)."""
        return self.audience.owner_private or visibility(self.audience).sees_episode(space)

    def sees_memory(self, scope: str) -> bool:
        """Whether a memory of ``scope`` may be shown here (the owner's private chat: any)."""
        return self.audience.owner_private or visibility(self.audience).sees_memory(scope)

    def owner_hint(self) -> str:
        """For a refusal of the owner's commands in a private chat that is not the owner's: how to make
        it the owner's ("" elsewhere: a group is never the owner's private chat)."""
        space = self.audience.space.split(":")
        if self.audience.owner_private or len(space) < 3 or space[1] != "private":
            return ""
        settings, me = self.service.settings, f"{platform_of(self.event)}:{space[2]}"
        if not settings.owner_ids and not settings.owner_private_spaces:
            return (f" No owner is configured yet: to make this chat the owner's, add {me} to owner_ids "
                    "in Engram's configuration (AstrBot WebUI: Plugins -> Engram).")
        if space[2] in settings.owner_ids:
            return (f" owner_ids holds {space[2]} without its platform, which counts only while the bot "
                    f"has one chat platform; write {me}.")
        return ""

    def forget_turn(self) -> AbstractAsyncContextManager[None]:
        """A forget's turn with the diary and self-image jobs; told at once when it must wait."""
        return self.service.days_lock.forget_turn(self.say_now)


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

    def usage(self, name: str) -> str:
        return f"Usage: {self.prog} {self._subs[name].usage}"

    def help(self) -> str:
        lines = [f"{self.prog} {s.usage} — {s.summary}" for s in self._subs.values()]
        return "Engram commands (admins only):\n" + "\n".join(lines)

    async def dispatch(self, service: EngramService, event: Any, text: str) -> str:
        """The reply to one ``/mem`` line from ``event``."""
        if not event.is_admin():
            return REFUSAL
        name, args = split_command(text)
        args = OPTION_DASHES.sub("--", args)
        if not name:
            return self.help()
        sub = self._subs.get(name)
        if sub is None:
            return f"Unknown subcommand {name!r}. Usage: {self.prog} <{'|'.join(self._subs)}> ..."
        ctx = CommandContext(service, event, service.audience(event))
        try:
            return await sub.run(ctx, args)
        except UsageError as e:
            return f"{e}\n{self.usage(name)}" if str(e) else self.usage(name)
        except EngramError as e:
            return f"Engram: {e}"
        except Exception as e:  # the owner gets a line, the log gets the traceback
            log.exception("Engram: /%s %s failed", COMMAND, name)
            return f"Engram: {self.prog} {name} failed ({type(e).__name__}); see the log."


COMMANDS = Registry()


async def reachable_episode(ctx: CommandContext, episode_id: int) -> Episode:
    """The episode, if it was said in this chat or this is the owner's private chat; else 'no episode'."""
    mem = await ctx.service.memory()
    try:
        ep = await mem.get_episode(episode_id)
    except UnknownIdError:
        ep = None
    if ep is None or not ctx.sees_episode(ep.space):
        raise UnknownIdError(f"no episode e{episode_id} here")
    return ep


async def reachable(ctx: CommandContext, memory_id: int) -> Memory:
    """The memory, if this chat may see it or this is the owner's private chat; else 'no memory'.

    A memory's scope covers all its versions: an old version is reachable exactly when every version
    of it is (moving a memory moves its history), so no version tells a chat about a newer one.
    """
    mem = await ctx.service.memory()
    try:
        m = await mem.get(memory_id)
        versions = await mem.history(memory_id)
    except UnknownIdError:
        m, versions = None, []
    if m is None or not all(ctx.sees_memory(v.scope) for v in versions):
        raise UnknownIdError(f"no memory m{memory_id} here")
    return m


def hit_line(h: Hit, ctx: CommandContext) -> str:
    top = sorted(((k, v) for k, v in h.features.items() if v), key=lambda kv: -abs(kv[1]))[:3]
    feats = ", ".join(f"{k}={v:.2f}" for k, v in top)
    date = when(h.time, now_utc(), ctx.service.tz)
    return f"{h.key} score {h.score:.2f} ({feats}) {date}: {quoted(short(h.text))}"


@COMMANDS.command("help", "help", "this list")
async def _help(ctx: CommandContext, args: str) -> str:
    return COMMANDS.help()


@COMMANDS.command("stats", "stats", "how much is remembered (elsewhere than the owner's private chat: here)")
async def _stats(ctx: CommandContext, args: str) -> str:
    mem = await ctx.service.memory()
    jobs = "".join("\n" + line for line in (await ctx.service.jobs.lines() if ctx.service.jobs else []))
    if not ctx.audience.owner_private:  # counts of other places are theirs too: this place's only
        s = await mem.place_stats(ctx.audience)
        return (f"Engram here ({ctx.audience.space}): {s['episodes']} lines recorded in this place, "
                f"{s['memories']} memories this chat may see; embeddings {s['embedder']}. Totals over "
                f"every place: /mem stats in the owner's private chat." + ctx.owner_hint() + jobs)
    s = await mem.stats()
    return (f"Engram: {s.get('episodes', 0)} episodes, {s.get('memories', 0)} memories "
            f"({s.get('archived', 0)} archived, {s.get('superseded', 0)} superseded), "
            f"{s.get('spaces', 0)} places, {s.get('people', 0)} people; embeddings {s.get('embedder')} "
            f"({s.get('indexed', 0)} indexed). This place: {ctx.audience.space} (the owner's private chat)"
            + jobs)


@COMMANDS.command("recall", "recall [--archived] <query>",
                  "what would be injected here, with scores (--archived: faded memories too, revived)")
async def _recall(ctx: CommandContext, args: str) -> str:
    archived = bool(re.match(r"--archived(\s|$)", args))
    args = args[len("--archived"):].strip() if archived else args
    if not args:
        raise UsageError("")
    hits = await ctx.service.recall(ctx.audience, args, ctx.service.settings.recall_k,
                                    include_archived=archived)
    ctx.service.touch(hits)
    if not hits:
        return f"Nothing recalled here for {quoted(short(args))}."
    _, taken = await ctx.service.render(ctx.audience.space, hits, now_utc())
    lines = [hit_line(h, ctx) + ("" if i in taken else " [over budget]") for i, h in enumerate(hits)]
    return f"Recalled here for {quoted(short(args))}:\n" + "\n".join(lines)


@COMMANDS.command("why", "why", "the last injection in this chat, explained")
async def _why(ctx: CommandContext, args: str) -> str:
    inj = ctx.service.last_injection.get(ctx.audience.space)
    if inj is None:
        return "Nothing was injected in this chat since Engram started."
    head = f"Last injection here {when(inj.at, now_utc(), ctx.service.tz)} for {quoted(short(inj.query))}:"
    if not inj.injected:
        return head + "\nno memories (nothing recalled fit)."
    # as this chat may see them now: a memory moved out of its sight since (/mem scope) is not shown
    now = await (await ctx.service.memory()).memories([h.id for h in inj.injected if h.kind == "memory"])
    shown = [h for h in inj.injected
             if h.kind == "episode" or (h.id in now and ctx.sees_memory(now[h.id].scope))]
    left = len(inj.hits) - len(inj.injected)
    gone = len(inj.injected) - len(shown)
    return "\n".join([head, *(hit_line(h, ctx) for h in shown)]
                     + ([f"({gone} no longer to be seen here)"] if gone else [])
                     + ([f"({left} more recalled but over the budget)"] if left else []))


@COMMANDS.command("remember", "remember <text> [--scope S]", "a memory kept in this place (or in scope S)")
async def _remember(ctx: CommandContext, args: str) -> str:
    found = re.search(r"(?:^|\s)--scope(?:\s+|=)(\S+)", args)
    if re.search(r"(?:^|\s)--scope\s*$", args):
        raise UsageError("--scope needs a value: public, self, owner or space:<place>")
    scope = parse_scope(found.group(1)) if found else space_scope(ctx.audience.space)
    text = (args[: found.start()] + args[found.end():]).strip() if found else args.strip()
    if not text:
        raise UsageError("")
    if len(text) > MAX_TEXT:  # the store would keep only its beginning
        return (f"Not remembered: the text has {len(text)} characters, at most {MAX_TEXT}; "
                "split it into several memories.")
    if scope == OWNER and not ctx.service.settings.owner_ids:
        return "Not remembered: " + NO_OWNER
    if not ctx.sees_memory(scope):
        # a scope this chat does not see does not exist here: no write into it, and no "already
        # remembered" telling what it holds
        raise UnknownIdError(f"no scope {scope} here (name a scope this chat does not see only in the "
                             "owner's private chat)")
    mid, how = await remember(await ctx.service.memory(), Memory(text=text, scope=scope, kind="fact"))
    if how == "kept":
        return f"Already remembered as m{mid} (scope {scope})."
    return f"Remembered m{mid} (scope {scope})" + (", a new version of an earlier memory." if how == "updated"
                                                    else ".")


@COMMANDS.command("show", "show <id>", "a memory (m12) with its sources and versions, or a line (e3)")
async def _show(ctx: CommandContext, args: str) -> str:
    kind, key = parse_key(args)
    if kind == "e":
        return await _show_episode(ctx, key)
    m = await reachable(ctx, key)
    mem = await ctx.service.memory()
    assert m.id is not None
    now = now_utc()
    ctx.service.touch([f"m{m.id}"])
    lines = [f"m{m.id} ({m.kind}, {m.status}) scope {m.scope}, importance {m.importance:.2f}",
             shown_whole(m.text, f"m{m.id}"), f"created {when(m.created_at, now, ctx.service.tz)}"]
    if m.subjects:
        lines.append("about: " + ", ".join(m.subjects))
    versions = await mem.history(m.id)
    if len(versions) > 1:
        lines.append("versions: " + " -> ".join(f"m{v.id} ({v.status})" for v in versions))
    sources = await mem.sources(m.id)
    shown = [e for e in sources if ctx.sees_episode(e.space)]
    for e in shown:
        lines.append(f"source e{e.id} {when(e.time, now, ctx.service.tz)} {flat(e.actor_name or e.actor)}: "
                     f"{quoted(short(e.content))}")
    if len(shown) < len(sources):
        lines.append(f"({len(sources) - len(shown)} sources from other places not shown here)")
    return "\n".join(lines)


async def _show_episode(ctx: CommandContext, episode_id: int) -> str:
    ep = await reachable_episode(ctx, episode_id)
    who = "the bot" if ep.kind == "message_out" else f"{flat(ep.actor_name or ep.actor)} ({flat(ep.actor)})"
    return (f"e{ep.id} ({ep.kind}) in {ep.space}, {when(ep.time, now_utc(), ctx.service.tz)}, {who}:\n"
            f"{shown_whole(ep.content, f'e{ep.id}')}\n(/mem forget e{ep.id} erases it)")


@COMMANDS.command("forget", "forget <id> [--with-sources]",
                  "erase a memory and all its versions (m12; --with-sources: and the lines it came from,"
                  " and what else was drawn from them), or a line (e3) with what was drawn from it")
async def _forget(ctx: CommandContext, args: str) -> str:
    parts = args.split()
    with_sources = "--with-sources" in parts
    rest = [p for p in parts if p != "--with-sources"]
    if len(rest) != 1:
        raise UsageError("")
    kind, key = parse_key(rest[0])
    if kind == "e":
        ep = await reachable_episode(ctx, key)
        async with ctx.forget_turn():  # after a diary job writing now; the diary it rewrites, in one turn
            gone = await (await ctx.service.memory()).forget_episodes([key])
        ctx.service.forget_injections(f"e{key}")
        return (f"Forgot e{key}, the line from {ep.space}, with what was drawn from it: "
                f"{gone.summary()} erased.")
    m = await reachable(ctx, key)
    assert m.id is not None
    mem = await ctx.service.memory()
    if with_sources and not ctx.audience.owner_private:
        # a forget here reaches no other chat: lines said elsewhere (and what was drawn from them) go
        # only from the owner's private chat
        plan = await mem.forget([m.id], with_sources=True, dry_run=True)
        lines = await mem.episodes(plan.episodes)
        if any(not ctx.sees_episode(e.space) for e in lines.values()):
            raise UnknownIdError(f"m{m.id} came from lines of other chats; forget it with its lines in the "
                                 f"owner's private chat (here: /mem forget m{m.id} without --with-sources)")
    async with ctx.forget_turn():  # the forget and the diary it rewrites, in one turn
        done = await mem.forget([m.id], with_sources=with_sources)
    n, k = len(done.memories), len(done.proposals)
    if not with_sources:
        drawn = f"; and {k} identity proposal{'s' if k != 1 else ''} drawn from it" if k else ""
        return f"Forgot m{m.id} ({n} version{'s' if n != 1 else ''}{drawn})."
    return f"Forgot m{m.id} with the lines it came from: {done.summary()} erased."


@COMMANDS.command("scope", "scope <id> <scope>", "move a memory: public, self, owner or space:<place>")
async def _scope(ctx: CommandContext, args: str) -> str:
    parts = args.split()
    if len(parts) != 2:
        raise UsageError("")
    m = await reachable(ctx, parse_id(parts[0]))
    assert m.id is not None
    scope = parse_scope(parts[1])
    if scope == OWNER and not ctx.service.settings.owner_ids:  # no chat could reach it again
        return f"Not moved: m{m.id} stays scope {m.scope}; " + NO_OWNER
    if scope != OWNER and not ctx.sees_memory(scope):  # into another chat: only the owner decides that
        raise UnknownIdError(f"no scope {scope} here (move a memory into another chat only from the "
                             "owner's private chat)")
    await (await ctx.service.memory()).set_scope(m.id, scope)
    return f"m{m.id} is now scope {scope} (was {m.scope})."


@COMMANDS.command("list", "list [place|<person>] [--kind K] [--page N]",
                  "the memories this chat may see, newest first, with their ids")
async def _list(ctx: CommandContext, args: str) -> str:
    words, kind, page = list_args(args)
    mem = await ctx.service.memory()
    scope, what = None, "the memories this chat may see"
    people: list[str] = []
    if words == "place":
        scope, what = space_scope(ctx.audience.space), "the memories of this place"
    elif words:
        # someone by a display name they went by, by id, as the model named them (earlier versions of
        # tools.subjects_for), or by a name the model kept as text (memory_remember without a known id)
        people = [*await mem.people_named(words), words, f"{platform_of(ctx.event)}:name:{words}"]
        what = f"the memories about {words} this chat may see"
    found, total = await mem.list_memories(visibility(ctx.audience), scope=scope, kind=kind,
                                           people=people, named=words if people else "",
                                           limit=PAGE, offset=(page - 1) * PAGE)
    if kind:
        what += f" of kind {kind}"
    if not total:
        return f"No memories: {what}."
    pages = (total + PAGE - 1) // PAGE
    if not found:
        return f"There are {pages} page(s) of {what}; page {page} is past the end."
    now = now_utc()
    lines = [f"m{m.id} [{m.scope}] ({m.kind}) {when(m.created_at, now, ctx.service.tz)}: "
             f"{quoted(short(m.text))}" for m in found]
    head = f"{what[0].upper()}{what[1:]}, newest first (page {page} of {pages}, {total} in all):"
    if page < pages:
        again = " ".join(x for x in (words, f"--kind {kind}" if kind else "") if x)
        lines.append(f"Next page: /mem list {again + ' ' if again else ''}--page {page + 1}")
    return "\n".join([head, *lines])

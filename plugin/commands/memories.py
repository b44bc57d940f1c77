"""The ``/mem`` commands on memories: help, stats, recall, why, remember, show, scope and list.

Every read goes through the audience's visibility (``CommandContext``): a memory this chat may not
see can be shown or re-scoped only in the owner's private chat; elsewhere it does not exist.
"""

from __future__ import annotations

import re
from typing import Any

from ...memory import Hit, Memory, place_scope, visibility
from ...memory.metabolism.dedup import remember as remember_memory
from ...memory.model import now_utc
from ...memory.render import quoted
from ...memory.scopes import OWNER
from ...memory.text.display import flat
from ...memory.text.words import MAX_TEXT
from ...memory.wording import word
from ..events import platform_of
from ..replies.catalogue import counted
from ..replies.fit import SOURCES_CHARS, WHOLE_CHARS, fit_lines, short, shown_whole
from .args import Refused, UsageError, list_args, parse_id, parse_key, scope_arg
from .context import CommandContext
from .jobs import job_lines

PAGE = 10  # memories per page of /mem list
STATS = ("episodes", "memories", "archived", "superseded", "spaces", "people", "indexed",  # /mem stats
         "secrets_redacted")


async def help_(ctx: CommandContext, args: str) -> str:
    assert ctx.commands is not None
    return ctx.commands.help(ctx.lang, args.strip().lower())


async def stats(ctx: CommandContext, args: str) -> str:
    mem = await ctx.service.memory()
    jobs = (await job_lines(ctx.service.jobs, ctx.lang, counts=ctx.audience.owner_private)
            if ctx.service.jobs else [])  # what the jobs did over every place: the owner's chat only
    if not ctx.audience.owner_private:  # counts of other places are theirs too: this place's only
        counts, key, hint = await mem.place_stats(ctx.audience), "stats_here", ctx.owner_hint()
    else:  # every count the line names: 0 when the store has none
        counts = {**dict.fromkeys(STATS, 0), "embedder": None, **await mem.stats()}
        key, hint = "stats_all", ""
        if kept := ctx.service.recording.pending:  # the store could not take them (full, damaged)
            hint = "\n" + ctx.say("stats_kept", n=kept, file=ctx.service.recording.journal.path.name)
        if unmatched := ctx.service.read_places():  # a privacy setting that does nothing is said
            hint += "\n" + ctx.say("stats_unmatched", entries=short("; ".join(unmatched)))
    head = ctx.say(key, **{**counts, **_counted(ctx, counts), "place": ctx.audience.place}) + hint
    return fit_lines([head, *jobs], ctx.lang, ctx.say("rest_dashboard"))


def _counted(ctx: CommandContext, counts: dict[str, Any]) -> dict[str, str]:
    """The counts /mem stats says as counted nouns (``1 place``, ``3 places``)."""
    nouns = {"episodes": "n_line", "memories": "n_memory", "spaces": "n_place", "people": "n_person",
             "secrets_redacted": "n_secret"}
    return {k: counted(ctx.lang, noun, int(counts.get(k) or 0)) for k, noun in nouns.items() if k in counts}


async def recall(ctx: CommandContext, args: str) -> str:
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
    lines = [hit_line(ctx, h) + ("" if i in taken else ctx.say("over_budget")) for i, h in enumerate(hits)]
    return fit_lines([ctx.say("recall_head", query=quoted(short(args))), *lines], ctx.lang,
                     ctx.say("rest_dashboard"))


async def why(ctx: CommandContext, args: str) -> str:
    inj = ctx.service.last_injection.get(ctx.audience.place)
    if inj is None:  # none since the start, or a forget since dropped it (it may have held what went)
        last = ctx.service.last_forget
        return ctx.say("why_forgotten", when=ctx.when(last)) if last else ctx.say("why_none")
    head = ctx.say("why_head", when=ctx.when(inj.at), query=quoted(short(inj.query)))
    if not inj.injected:
        return head + "\n" + ctx.say("why_empty")
    # as this chat may see them now: a memory moved out of its sight since (/mem scope) is not shown
    now = await (await ctx.service.memory()).memories([h.id for h in inj.injected if h.kind == "memory"])
    shown = [h for h in inj.injected
             if h.kind == "episode" or (h.id in now and ctx.sees_memory(now[h.id].scope))]
    left = len(inj.hits) - len(inj.injected)
    gone = len(inj.injected) - len(shown)
    return fit_lines([head, *(hit_line(ctx, h) for h in shown)]
                     + ([ctx.say("why_gone", n=gone)] if gone else [])
                     + ([ctx.say("why_left", n=left)] if left else []), ctx.lang, ctx.say("rest_dashboard"))


async def remember(ctx: CommandContext, args: str) -> str:
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
    mid, how = await remember_memory(await ctx.service.memory(), Memory(text=text, scope=scope, kind="fact"))
    said = {"kept": "remembered_kept", "updated": "remembered_updated"}.get(how, "remembered")
    return ctx.say(said, id=mid, scope=scope)


async def show(ctx: CommandContext, args: str) -> str:
    kind, key = parse_key(args)
    if kind == "e":
        return await _show_episode(ctx, key)
    m = await ctx.reachable(key)
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
    ep = await ctx.reachable_episode(episode_id)
    who = (ctx.say("the_bot") if ep.kind == "message_out"
           else f"{short(ep.actor_name or ep.actor)} ({flat(ep.actor)})")
    head = ctx.say("episode_head", id=ep.id, kind=word(ctx.lang, "line", ep.kind), place=ep.place,
                   when=ctx.when(ep.time), who=who)
    tail = ctx.say("episode_tail", id=ep.id)
    text = shown_whole(ep.content, f"e{ep.id}", ctx.lang, WHOLE_CHARS - len(head + tail) - 2)
    return "\n".join([head, text, tail])


async def scope(ctx: CommandContext, args: str) -> str:
    parts = args.split()
    if len(parts) != 2:
        raise UsageError("")
    m = await ctx.reachable(parse_id(parts[0]))
    assert m.id is not None
    scope = scope_arg(parts[1])
    if scope == OWNER and not ctx.service.settings.owner_ids:  # no chat could reach it again
        return ctx.say("not_moved", id=m.id, scope=m.scope, why=ctx.say("no_owner"))
    if scope != OWNER and not ctx.sees_memory(scope):  # into another chat: only the owner decides that
        raise Refused("move_elsewhere", scope=short(scope))
    await (await ctx.service.memory()).set_scope(m.id, scope)
    return ctx.say("moved", id=m.id, scope=short(scope), old=short(m.scope))


async def list_(ctx: CommandContext, args: str) -> str:
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
        none = ctx.say("list_none", what=what[0].upper() + what[1:] if ctx.lang != "zh" else what)
        return none + "\n" + _first_day(ctx) if not words and not kind else none
    pages = (total + PAGE - 1) // PAGE
    if not found:
        return ctx.say("list_past", pages=pages, what=what, page=page)
    lines = [f"m{m.id} [{m.scope}] ({word(ctx.lang, 'kind', m.kind)}) {ctx.when(m.created_at)}: "
             f"{quoted(short(m.text))}" for m in found]
    head = ctx.say("list_head", what=what[0].upper() + what[1:], page=page, pages=pages, total=total)
    again = " ".join(x for x in (words, f"--kind {kind}" if kind else "") if x)
    turn = ctx.say("list_next", args=again + " " if again else "", next=page + 1) if page < pages else ""
    return fit_lines([head, *lines, *([turn] if turn else [])], ctx.lang, turn or ctx.say("rest_dashboard"))


def _first_day(ctx: CommandContext) -> str:
    """When the lines of a chat become memories, and what /mem consolidate does (a first day's list is
    empty: issue 27)."""
    s = ctx.service.settings
    if not s.consolidate_after_episodes and not s.consolidate_every_minutes:
        return ctx.say("first_day_manual")
    jobs = ctx.service.jobs  # its consolidation's count (consolidate_after_episodes, or 20 when it is 0)
    return ctx.say("first_day", n=jobs.consolidation.min_new if jobs else s.consolidate_after_episodes or 20)


def hit_line(ctx: CommandContext, h: Hit) -> str:
    """A recall hit as /mem recall and /mem why say it: key, score, its three strongest features, when."""
    top = sorted(((k, v) for k, v in h.features.items() if v), key=lambda kv: -abs(kv[1]))[:3]
    feats = ", ".join(f"{word(ctx.lang, 'feature', k)}={v:.2f}" for k, v in top)
    return ctx.say("hit", key=h.key, score=f"{h.score:.2f}", features=feats, when=ctx.when(h.time),
                   text=quoted(short(h.text)))

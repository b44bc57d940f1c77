"""The command line: ``python -m astrbot_plugin_engram.memory [--db PATH] COMMAND ...``.

Every command opens the store, does one thing and closes it. Errors the user can fix (unknown ids,
invalid scopes, bad store files, bad options) print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..backups import KEEP, backup_folder, backups, restore, take_backup
from ..bundle import export_bundle, import_bundle, known_exports
from ..clock import resolve_timezone
from ..embedders import Embedder, OpenAIEmbedder, as_query_model, make_embedder
from ..engram import Engram
from ..errors import EngramError, InvalidInputError
from ..model import Audience, Episode, Hit, Memory
from ..recall.features import COLUMNS
from ..recording.journal import KeptJournal, kept_path
from ..scopes import DEFAULT_PUBLIC_PLACES, OWNER, parse_scope, place_scope
from ..self.diary_files import data_folder, day_rule
from ..store.opening import is_database_url, shown, store_path
from ..text.display import flat, visible
from . import self_commands

log = logging.getLogger("engram.cli")
USAGE_ERROR = 2


# ---- terminal text (CJK characters take two columns) ---------------------------------------------
def width(s: str) -> int:
    """Columns ``s`` takes in a terminal."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def clip(s: str, cols: int) -> str:
    """``s`` on one line without control characters (``display.flat``), cut to ``cols`` columns (with an
    ellipsis when cut)."""
    s = flat(s)
    if width(s) <= cols:
        return s
    out, used = "", 0
    for ch in s:
        w = width(ch)
        if used + w > cols - 1:
            break
        out, used = out + ch, used + w
    return out + "…"


def pad(s: str, cols: int) -> str:
    """``s`` clipped and padded with spaces to exactly ``cols`` columns."""
    s = clip(s, cols)
    return s + " " * (cols - width(s))


# ---- arguments ---------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m astrbot_plugin_engram.memory",
                                description="Engram: a chat bot's long-term memory, from the command line.")
    p.add_argument("--db", type=db_location, default=db_location(os.environ.get("ENGRAM_DB", "engram.db")),
                   help="the store file, or a PostgreSQL database as postgresql://user@host/db "
                   "(default: $ENGRAM_DB or ./engram.db)")
    p.add_argument("--folder", type=Path, default=os.environ.get("ENGRAM_FOLDER") or None,
                   help="with a postgresql:// --db: the bot's data folder (diary/, identity/, backups/, the "
                   "erase list; default: $ENGRAM_FOLDER or the working directory); a SQLite store's is "
                   "the folder it is in")
    p.add_argument("--embedder", default="local",
                   help="local (bundled, the default), none, or openai:<model>")
    p.add_argument("--base-url", help="base URL of an OpenAI-compatible endpoint (with openai:<model>)")
    p.add_argument("--api-key", default=os.environ.get("ENGRAM_API_KEY"),
                   help="API key for openai:<model> (default: $ENGRAM_API_KEY)")
    p.add_argument("--dimensions", type=int, help="ask the endpoint for vectors of this size")
    p.add_argument("-v", "--verbose", action="store_true", help="log what the core does")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub.add_parser("init", help="create the store (or check an existing one)")
    r = sub.add_parser("record", help="append an episode (a message) to a space")
    r.add_argument("text")
    _audience_args(r, need_place=True)
    r.add_argument("--actor", default="", help="stable person id, e.g. qq:10001")
    r.add_argument("--name", default="", help="the speaker's display name")
    r.add_argument("--kind", default="message_in", help="message_in, message_out, observation, ...")
    r.add_argument("--time", type=_iso_time, help="when it happened (ISO 8601; default now)")

    m = sub.add_parser("remember", help="store a memory with a scope")
    m.add_argument("text")
    _audience_args(m)
    m.add_argument("--scope", help="public, self, owner or space:<space> (default: from --owner/--place)")
    m.add_argument("--kind", default="fact", help="fact, preference, event, relation, ...")
    m.add_argument("--importance", type=float, default=0.5, help="0 to 1")

    q = sub.add_parser("recall", help="what an audience would recall for a question, with features")
    q.add_argument("query")
    _audience_args(q)
    q.add_argument("--all", action="store_true", help="the owner's console: every space")
    q.add_argument("-k", type=int, default=10, help="how many hits (1-200)")
    q.add_argument("--archived", action="store_true", help="include archived memories")
    q.add_argument("--json", action="store_true", help="print the hits as JSON")
    q.add_argument("--timezone", default="", help="count 'yesterday', 'last week'... in this zone "
                   "(e.g. Asia/Shanghai; default: the zone the bot's diaries were written in, else UTC)")

    sub.add_parser("stats", help="counts of episodes, memories, spaces, people and vectors")
    sub.add_parser("vacuum", help="rewrite the store so that it shrinks by itself after a forget (once, "
                   "for a store made before it did; with the bot stopped)")
    x = sub.add_parser("reindex", help="rebuild every vector for --embedder, with progress")
    x.add_argument("--quiet", action="store_true", help="no progress line")
    s = sub.add_parser("show", help="a memory (m12) with its versions and sources, or an episode (e3)")
    s.add_argument("key")
    u = sub.add_parser("update", help="write a new version of a memory")
    u.add_argument("id", type=int)
    u.add_argument("text")
    f = sub.add_parser("forget", help="hard-delete memories with all their versions and the lines they came "
                       "from (as the bot's /mem forget does)")
    f.add_argument("ids", type=int, nargs="+")
    lines = f.add_mutually_exclusive_group()
    lines.add_argument("--keep-lines", action="store_true",
                       help="the memories alone: the lines they came from stay (and a fact may come back "
                       "from them in recall)")
    lines.add_argument("--with-sources", action="store_true",
                       help="the default now (the lines they came from and every memory derived from those "
                       "go too); still accepted for old scripts")
    fp = sub.add_parser("forget-person", help="hard-delete everything said by or about a person (id or name)")
    fp.add_argument("person")
    fs = sub.add_parser("forget-place", help="hard-delete every line and memory of a place (space)")
    fs.add_argument("place")
    c = sub.add_parser("consolidate", help="turn new episodes into memories with a chat model, now",
                       description="The key is read from $ENGRAM_CHAT_API_KEY, never from a file.")
    c.add_argument("--place", "--space", help="only this place (default: every place with new episodes)")
    c.add_argument("--chat-base-url", help="base URL of an OpenAI-compatible chat endpoint")
    c.add_argument("--chat-model", required=True, help="the chat model's name")
    c.add_argument("--owner-place", "--owner-space", action="append", default=[],
                   help="a place that is the owner's private chat (repeatable)")
    c.add_argument("--public-place", "--public-space", action="append", default=None,
                   help="a place whose facts about no one may become public (repeatable; default "
                   f"{', '.join(DEFAULT_PUBLIC_PLACES)}, AstrBot's own chat page, as the bot's setting)")
    c.add_argument("--timezone", default="", help="the zone the model reads the lines' times in and "
                   "dates what they say (e.g. Asia/Shanghai; default: the bot's, from its diaries, else UTC)")
    ex = sub.add_parser("export", help="write the soul bundle (SPEC.md): everything, as plain text, in DIR")
    ex.add_argument("dir", type=Path)
    ex.add_argument("--place", "--space", help="only what this place may see (someone asking for their data)")
    ex.add_argument("--quiet", action="store_true", help="no progress line")
    im = sub.add_parser("import", help="read a soul bundle from DIR into a new or empty store")
    im.add_argument("dir", type=Path)
    im.add_argument("--merge", action="store_true",
                    help="into a store that is not empty: add what it lacks (idempotent)")
    im.add_argument("--quiet", action="store_true", help="no progress line")
    self_commands.add_parsers(sub)
    mc = sub.add_parser("mcp", help="serve the memory to an MCP client on stdin/stdout, as one place sees it")
    mc.add_argument("--place", "--space", required=True,
                    help="the place whose view the client gets (fixed: a client can never widen it)")
    mc.add_argument("--owner", action="store_true", help="the owner's private view of that place")
    mc.add_argument("--read-only", action="store_true",
                    help="no record, remember or forget; the store is opened read-only")
    mc.add_argument("--timezone", default="", help="the zone lines are dated in (default: the bot's, from "
                    "its diaries, else UTC)")
    b = sub.add_parser("backup", help="an online backup of the store into backups/ beside it (of a "
                       "PostgreSQL store: a snapshot, as a SQLite store file, into the data folder's "
                       "backups/); the bot may run meanwhile")
    b.add_argument("--keep", type=int, default=KEEP,
                   help=f"backups kept, the oldest deleted (default {KEEP}; 0 keeps all)")
    rs = sub.add_parser("restore", help="put a backup in the store's place (stop the bot first: a "
                        "PostgreSQL store is refused while any instance has it open); what was forgotten "
                        "since the backup is erased again; without BACKUP, list the backups")
    rs.add_argument("backup", nargs="?", type=Path, help="the backup file (e.g. backups/engram-...Z.db)")
    mt = sub.add_parser("migrate-to", help="copy the store (--db, a SQLite file) into an empty PostgreSQL "
                        "database, every row and vector (docs/postgres.md)")
    mt.add_argument("--db", type=db_location, default=argparse.SUPPRESS, help="the store to copy")
    mt.add_argument("--to", required=True, help="the database: postgresql://user@host/db")
    d = sub.add_parser("demo", help="the bundled demo: one question, several audiences, nothing leaking")
    d.add_argument("--fast", action="store_true", help="a hash embedder instead of the bundled model")
    return p


def db_location(s: str) -> str | Path:
    """``--db``: a PostgreSQL URL as it is, else a file path."""
    return s if is_database_url(s) else Path(s)


def _audience_args(p: argparse.ArgumentParser, need_place: bool = False) -> None:
    p.add_argument("--place", "--space", required=need_place,
                   help="the place, e.g. qq:group:123 or qq:private:42")
    p.add_argument("--people", default="", help="comma-separated person ids present (or the subjects)")
    p.add_argument("--owner", action="store_true", help="it is the owner's private chat")


def _iso_time(s: str) -> datetime:
    try:
        return datetime.fromisoformat(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {s!r}") from None


def _people(s: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in s.split(",") if p.strip())


def audience_of(args: argparse.Namespace) -> Audience:
    """The audience the options describe; --all is the owner's console."""
    if getattr(args, "all", False):
        return Audience.owner_console()
    if not args.place:
        raise InvalidInputError("say who is asking: --place PLACE (--owner in the owner's chat) or --all")
    return Audience(args.place, _people(args.people), owner_private=args.owner)


def embedder_of(args: argparse.Namespace) -> Embedder:
    if args.embedder.startswith("openai:"):
        return make_embedder(args.embedder, base_url=args.base_url, api_key=args.api_key,
                             dimensions=args.dimensions)
    return make_embedder(args.embedder)


# ---- commands ----------------------------------------------------------------------------------
async def cmd_init(e: Engram, args: argparse.Namespace) -> None:
    print(f"store ready: {shown(args.db)}")


async def cmd_record(e: Engram, args: argparse.Namespace) -> None:
    eid = await e.record(Episode(place=args.place, content=args.text, actor=args.actor,
                                 actor_name=args.name, kind=args.kind, time=args.time))
    print(f"e{eid}")


async def cmd_remember(e: Engram, args: argparse.Namespace) -> None:
    if args.scope is not None:
        scope = parse_scope(args.scope)
    elif args.owner:
        scope = OWNER
    elif args.place:
        scope = place_scope(args.place)
    else:
        raise InvalidInputError("give the memory a --scope (or --place / --owner to keep it there)")
    mid = await e.add_memory(Memory(text=args.text, scope=scope, kind=args.kind,
                                    subjects=_people(args.people), importance=args.importance))
    print(f"m{mid}  [{scope}]")


async def cmd_recall(e: Engram, args: argparse.Namespace) -> None:
    audience = audience_of(args)
    # the bot's days: given, else as its diaries count them (``diary/.days.json``), else UTC's
    tz, boundary_hour = day_rule(data_folder(e), resolve_timezone(args.timezone) if args.timezone else None)
    if tz is not None:
        e.settings = replace(e.settings, tz=tz, boundary_hour=boundary_hour)
    await _index_quietly(e)
    hits = await e.recall(args.query, audience, k=args.k, include_archived=args.archived)
    if args.json:
        print(json.dumps([hit_json(h) for h in hits], ensure_ascii=False, indent=1))
        return
    if not hits:
        print("(nothing this audience may see matches)")
    for n, h in enumerate(hits, 1):
        print(f"{n:>2}. {h.key:<6} score {h.score:6.2f}  {pad(where(h), 24)} {clip(h.text, 70)}")
        print("     " + features_line(h))


def where(h: Hit) -> str:
    """Where a hit lives: an episode's space and speaker, or a memory's scope."""
    if isinstance(h.item, Episode):
        who = f" {h.item.actor_name}" if h.item.actor_name else ""
        return f"{h.item.place}{who}"
    return f"[{h.item.scope}]"


def features_line(h: Hit) -> str:
    order = [f for f in COLUMNS if f in h.features] + sorted(set(h.features) - set(COLUMNS))
    return "  ".join(f"{f}={h.features[f]:.2f}" for f in order if h.features[f])


def hit_json(h: Hit) -> dict[str, Any]:
    return {"key": h.key, "score": round(h.score, 4), "text": h.text, "where": where(h),
            "time": h.time.isoformat() if h.time else None,
            "features": {k: round(v, 4) for k, v in h.features.items()}}


async def cmd_stats(e: Engram, args: argparse.Namespace) -> None:
    for k, v in (await e.stats()).items():
        print(f"{k:<12} {v}")


async def cmd_vacuum(e: Engram, args: argparse.Namespace) -> None:
    start = time.monotonic()
    before, after = await e.store.vacuum()
    print(f"vacuumed {shown(args.db)}: {before / 2**20:.1f} MB -> {after / 2**20:.1f} MB in "
          f"{time.monotonic() - start:.1f} s; from now on it gives back what a forget frees by itself")


async def cmd_reindex(e: Engram, args: argparse.Namespace) -> None:
    counts = await e.counts()
    passes = 2 if as_query_model(e.embedder) else 1  # a second vector per item (embed_pending)
    total = (counts["episodes"] + counts["memories"] + counts["archived"]) * passes

    def progress(done: int) -> None:
        if not args.quiet:
            print(f"\rreindex {e.embedder.name}: {done}/{total}", end="", file=sys.stderr, flush=True)

    n = await e.reindex(e.embedder, progress)
    if not args.quiet and n:
        print(file=sys.stderr)
    print(f"{n} items embedded with {e.embedder.name}")


async def cmd_show(e: Engram, args: argparse.Namespace) -> None:
    kind, num = (args.key[0], args.key[1:]) if args.key[:1] in ("e", "m") else ("m", args.key)
    if not re.fullmatch(r"[0-9]+", num):  # not str.isdigit: int() refuses '²'
        raise InvalidInputError(f"not a key: {args.key!r} (use m12 for a memory, e3 for an episode)")
    if kind == "e":
        ep = await e.get_episode(int(num))
        # what chat users wrote reaches the terminal as text: no escape sequence, no bidi override
        print(f"e{ep.id}  {ep.time:%Y-%m-%d %H:%M}  {flat(ep.place)}  {flat(ep.actor_name or ep.actor)}: "
              f"{visible(ep.content)}")
        return
    for v in await e.history(int(num)):
        print(f"m{v.id}  {v.status:<10} [{flat(v.scope)}] {v.kind}: {visible(v.text)}")
    for ep in await e.sources(int(num)):
        print(f"   source e{ep.id}  {flat(ep.place)}  {flat(ep.actor_name)}: {clip(ep.content, 70)}")


async def cmd_update(e: Engram, args: argparse.Namespace) -> None:
    print(f"m{await e.update(args.id, args.text)}  (supersedes m{args.id})")


async def cmd_forget(e: Engram, args: argparse.Namespace) -> None:
    """Memories with the lines they came from (a fact whose line stayed comes back from it in recall),
    as ``/mem forget`` does; ``--keep-lines``: the memories alone, naming the lines left."""
    named = ", ".join(f"m{i}" for i in args.ids)
    it = "it" if len(args.ids) == 1 else "they"
    if not args.keep_lines:
        done = await e.forget(args.ids, with_sources=True)
        print(f"forgot {named} with the lines {it} came from: {done.summary()}" + forget_note(e))
        return
    left = (await e.forget(args.ids, with_sources=True, dry_run=True)).episodes
    done = await e.forget(args.ids, with_sources=False)
    extra = f", {len(done.proposals)} identity proposals" if done.proposals else ""
    kept = f"; the lines {it} came from stay: {', '.join(f'e{i}' for i in left)}" if left else ""
    print(f"forgot {named}: {len(done.memories)} memory rows (every version){extra}{kept}" + forget_note(e))


def _kept_first(db: str | Path) -> None:
    """A forget of a person or a place would miss the messages the bot keeps beside the store until
    it can be written (``kept.py``), and they would come back once written: refused meanwhile."""
    if is_database_url(db):  # the plugin keeps its journal in its data folder, not beside a database
        return
    if waiting := KeptJournal(kept_path(Path(db))).count:
        raise InvalidInputError(
            f"{waiting} messages the bot kept in {kept_path(Path(db))} while the store could not be written "
            "are not in it yet, and this forget would not reach them; nothing was forgotten. Run it again "
            "once the bot has written them (as soon as the store can be written; a damaged store: at the "
            "bot's first start after it is repaired or replaced)")


async def cmd_forget_person(e: Engram, args: argparse.Namespace) -> None:
    _kept_first(args.db)
    people = [args.person] if ":" in args.person else await e.people_named(args.person)
    if len(people) > 1:
        raise InvalidInputError(f"{args.person!r} names several people ({', '.join(people)}); give the id")
    done = await e.forget_person(people[0] if people else args.person)
    who = people[0] if people else args.person
    print(f"forgot everything by or about {who}: {done.summary()}" + forget_note(e))


async def cmd_forget_place(e: Engram, args: argparse.Namespace) -> None:
    _kept_first(args.db)
    done = await e.forget_place(args.place)
    print(f"forgot the place {args.place}: {done.summary()}" + forget_note(e))


async def cmd_consolidate(e: Engram, args: argparse.Namespace) -> None:
    from ..chat import OpenAIChat
    from ..consolidation import ConsolidationSettings, Consolidator

    chat = OpenAIChat(args.chat_model, args.chat_base_url)
    settings = ConsolidationSettings(public_spaces=tuple(args.public_place or DEFAULT_PUBLIC_PLACES))
    owners = set(args.owner_place)
    # the bot's zone, as the plugin's job uses it: given, else its diaries' (``diary/.days.json``)
    tz, _ = day_rule(data_folder(e), resolve_timezone(args.timezone) if args.timezone else None)
    con = Consolidator(e, chat, settings, tz=tz,
                       audience_for=lambda s: Audience(s, owner_private=s in owners))
    try:
        report = await con.run([args.place] if args.place else None, force=True)
    finally:
        await chat.close()
    found = await e.memories(report.new_ids)
    for m in (found[i] for i in report.new_ids if i in found):
        verb = f"updates m{m.supersedes}" if m.supersedes else "added"
        sources = ", ".join(f"e{s}" for s in m.sources)
        print(f"m{m.id}  [{m.scope}] {clip(m.text, 80)}  ({verb}; from {sources})")
    print(report.summary())


def _progress(args: argparse.Namespace, verb: str) -> Callable[[str, int, int], None]:
    """A progress line on stderr (``--quiet``: none), rewritten in place."""
    def progress(what: str, done: int, total: int) -> None:
        if not args.quiet:
            print(f"\r{verb} {what}: {done}/{total}  ", end="", file=sys.stderr, flush=True)
    return progress


async def cmd_export(e: Engram, args: argparse.Namespace) -> None:
    r = await export_bundle(e, args.dir, place=args.place, progress=_progress(args, "export"))
    if not args.quiet:
        print(file=sys.stderr)
    what = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in r.counts.items())
    print(f"exported to {r.folder} ({r.files} files, {r.size:,} bytes): {what}")


async def cmd_import(e: Engram, args: argparse.Namespace) -> None:
    r = await import_bundle(e, args.dir, merge=args.merge, progress=_progress(args, "import"))
    if not args.quiet:
        print(file=sys.stderr)
    added = ", ".join(f"{n} {k}" for k, n in r.added.items())
    print(f"imported from {r.folder}: {added}")
    if args.merge:
        print(f"  {r.already} lines the store had already, {r.forgotten} it forgot since (left forgotten), "
              f"{r.documents_kept} documents it has its own of (kept)")
    print("vectors are rebuilt in the background when the bot starts (or now: reindex)")


def forget_note(e: Engram) -> str:
    """What a forget says of the bundles written earlier: they still hold what it erased."""
    found = known_exports(data_folder(e))
    if not found:
        return ""
    where = "\n".join(f"  {x.path} ({x.time[:16]})" for x in found)
    return (f"\n{len(found)} earlier export(s) still hold the forgotten text (a forget cannot reach files "
            f"outside the store); delete or export them again:\n{where}")


async def _index_quietly(e: Engram) -> None:
    """Embed what is not embedded yet; a failing embedder leaves recall on keywords."""

    def progress(done: int) -> None:  # only a person watching needs it; pipes get clean output
        if sys.stderr.isatty():
            print(f"\rembedding new items: {done}", end="", file=sys.stderr, flush=True)

    try:
        if await e.embed_pending(progress) and sys.stderr.isatty():
            print(file=sys.stderr)
    except EngramError as err:
        log.warning("embedding failed, recall uses keywords only: %s", err)


async def cmd_backup(args: argparse.Namespace) -> None:
    if args.keep < 0:
        raise InvalidInputError(f"--keep must be 0 or more, got {args.keep}")
    store, url = _store_files(args)
    path = await take_backup(store, keep=args.keep, url=url)
    print(f"backed up to {path} ({len(backups(store))} backups kept)")


async def cmd_restore(args: argparse.Namespace) -> None:
    store, url = _store_files(args)
    if args.backup is None:
        found = backups(store)
        print("\n".join(str(p) for p in found) if found else f"no backup in {backup_folder(store)}")
        return
    r = await restore(store, args.backup, url=url)
    print(f"{shown(args.db)} restored from {r.backup}; forgotten since and erased again: {r.episodes_erased} "
          f"lines, {r.memories_erased} memories, {r.people_erased} people, {r.places_erased} places")
    if r.set_aside:
        what = "what the database held" if url else "the store it replaced"
        print(f"{what} is kept as {r.set_aside} (delete it when content)")


def _store_files(args: argparse.Namespace) -> tuple[Path, str | None]:
    """Where backups and the erase list are named from (``store_path``), and the database URL if any."""
    url = args.db if is_database_url(args.db) else None
    return store_path(args.db, args.folder), url


async def cmd_migrate_to(args: argparse.Namespace) -> int:
    """Copy the store at --db into the empty database --to (``store/postgres/migrate_to``)."""
    from ..store.opening import open_store

    if not is_database_url(args.to):
        raise InvalidInputError(f"--to must be a postgresql:// URL, got {args.to!r}")
    if is_database_url(args.db) or not Path(args.db).exists():  # noqa: ASYNC240 - one stat
        raise InvalidInputError(f"--db must be an existing SQLite store file, got {args.db}")
    from ..store.postgres.migrate_to import migrate_to

    source = await open_store(args.db, read_only=True)
    try:
        target = await open_store(args.to, folder=Path(args.db).parent)
        try:
            done = await migrate_to(source, target)
        finally:
            await target.close()
    finally:
        await source.close()
    print(f"copied {args.db} into {shown(args.to)}: {done['episodes']} episodes, "
          f"{done['memories']} memories, "
          f"{done['vectors']} vectors")
    return 0


COMMANDS = {"init": cmd_init, "record": cmd_record, "remember": cmd_remember, "recall": cmd_recall,
            "stats": cmd_stats, "vacuum": cmd_vacuum, "reindex": cmd_reindex, "show": cmd_show,
            "update": cmd_update,
            "forget": cmd_forget, "forget-person": cmd_forget_person, "forget-place": cmd_forget_place,
            "consolidate": cmd_consolidate, "export": cmd_export, "import": cmd_import,
            **self_commands.COMMANDS}


async def run(args: argparse.Namespace) -> int:
    """Run the parsed command; returns the exit status."""
    if args.command == "demo":
        from .demo import run_demo

        return 1 if (await run_demo(fast=args.fast)).leaks else 0
    if args.command == "migrate-to":
        return await cmd_migrate_to(args)
    if args.command in ("backup", "restore"):  # without opening it as a memory (its indexes unloaded)
        await (cmd_backup if args.command == "backup" else cmd_restore)(args)
        return 0
    embedder = embedder_of(args)
    if args.command == "mcp":
        return await _serve_mcp(args, embedder)
    e = await Engram.open(args.db, embedder, background=False, folder=args.folder)
    try:
        await COMMANDS[args.command](e, args)
        return 0
    finally:
        await e.close()
        if isinstance(embedder, OpenAIEmbedder):
            await embedder.close()


async def _serve_mcp(args: argparse.Namespace, embedder: Embedder) -> int:
    """The MCP server (``tools/mcp_server.py``) until the client leaves; the store open in the
    background's mode (new lines get embedded), or read-only."""
    from ..tools.mcp_server import serve

    if not args.place.strip():
        raise InvalidInputError("--place must name a place, e.g. qq:group:123")

    async def open_engram() -> Engram:
        e = await Engram.open(args.db, embedder, read_only=args.read_only, folder=args.folder)
        zone = resolve_timezone(args.timezone) if args.timezone else None
        tz, boundary_hour = day_rule(data_folder(e), zone)
        if tz is not None:
            e.settings = replace(e.settings, tz=tz, boundary_hour=boundary_hour)
        return e

    try:
        audience = Audience(args.place.strip(), owner_private=args.owner)
        await serve(open_engram, audience, read_only=args.read_only)
    finally:
        if isinstance(embedder, OpenAIEmbedder):
            await embedder.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status (2 for a usage error or bad input, 1 if the demo leaked)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="engram: %(message)s", stream=sys.stderr)
    try:
        return asyncio.run(run(args))
    except (EngramError, ValueError) as err:  # our typed errors, and make_embedder's bad name
        print(f"engram: error: {err}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        return 130

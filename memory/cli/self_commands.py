"""The CLI's ``diary`` and ``self-image`` commands (same chat-model options as ``consolidate``).

Files go beside the store: ``diary/<date>.md`` and ``identity/self-image.md``.
"""

from __future__ import annotations

import argparse
from datetime import date, timedelta
from typing import Any

from ..clock import day_of, resolve_timezone
from ..engram import Engram
from ..errors import InvalidInputError
from ..model import now_utc
from ..scopes import place_listed


def _day(s: str) -> date:
    try:
        return date.fromisoformat(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date like 2026-11-30: {s!r}") from None


def _chat_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chat-base-url", help="base URL of an OpenAI-compatible chat endpoint")
    p.add_argument("--chat-model", required=True, help="the chat model's name")
    p.add_argument("--timezone", default="", help="the bot's zone, e.g. Asia/Shanghai (default: the host's)")


def add_parsers(sub: Any) -> None:
    d = sub.add_parser("diary", help="write the diary of a day with a chat model (once; --force: again)",
                       description="The key is read from $ENGRAM_CHAT_API_KEY, never from a file.")
    _chat_args(d)
    d.add_argument("--date", type=_day, help="the day (default: yesterday, the day that ended last)")
    d.add_argument("--force", action="store_true", help="write it again, superseding the old entry")
    d.add_argument("--boundary-hour", type=int, default=4, help="the hour a day ends (0-23, default 4)")
    s = sub.add_parser("self-image", help="rewrite identity/self-image.md from the recent diaries",
                       description="The key is read from $ENGRAM_CHAT_API_KEY, never from a file.")
    _chat_args(s)
    s.add_argument("--public-place", "--public-space", action="append", default=None,
                   help="a place whose facts are not private (repeatable; default none)")


async def cmd_diary(e: Engram, args: argparse.Namespace) -> None:
    from ..chat import OpenAIChat
    from ..self.diary import write_diary

    if not 0 <= args.boundary_hour <= 23:
        raise InvalidInputError("--boundary-hour must be from 0 to 23")
    tz = resolve_timezone(args.timezone)
    day = args.date or day_of(now_utc(), tz, args.boundary_hour) - timedelta(days=1)
    chat = OpenAIChat(args.chat_model, args.chat_base_url)
    try:
        r = await write_diary(e, chat, day, force=args.force, tz=tz, boundary_hour=args.boundary_hour)
    finally:
        await chat.close()
    if r.status == "empty":
        print(f"{day}: nothing was lived that day; no diary")
        return
    print(f"{day}: diary {r.status} (m{r.memory_id}, from {r.episodes} lines) -> {r.path}")
    print(r.text)


async def cmd_self_image(e: Engram, args: argparse.Namespace) -> None:
    from ..chat import OpenAIChat
    from ..self.self_image import write_self_image

    public = tuple(args.public_place or ())
    chat = OpenAIChat(args.chat_model, args.chat_base_url)
    try:
        r = await write_self_image(e, chat, is_public=lambda place: place_listed(place, public))
    finally:
        await chat.close()
    if r.status == "no_diaries":
        print("no diary yet: write one first (diary --chat-model ...)")
    elif r.status == "refused":
        raise InvalidInputError("the new self-image was refused, it carried private details: "
                                + "; ".join(r.leaked))
    else:
        print(f"self-image written (m{r.memory_id}); the previous one kept in {r.kept or '(none before)'}")
        print(r.text)


COMMANDS = {"diary": cmd_diary, "self-image": cmd_self_image}

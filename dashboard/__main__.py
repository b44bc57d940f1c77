"""``python -m astrbot_plugin_engram.dashboard --db PATH [--host 127.0.0.1] [--port 8765] [--config FILE]``.

Serves the dashboard over a store opened read-only. The token comes from ``$ENGRAM_DASHBOARD_TOKEN``;
when it is unset one is generated and printed (on this machine's loopback only). Recall explained
makes its block with the plugin's settings as AstrBot saved them (``--config``, else found beside an
AstrBot data folder's store), else the plugin's defaults; ``--budget``/``--recall-k`` override.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..memory import Engram, EngramError, make_embedder
from ..memory.self.diary_files import day_rule
from ..memory.self.identity import IdentityFolder, read_document
from ..memory.self.selfhood import BUDGET_RANGE, RECALL_K_RANGE, BlockDefaults, BlockSettings, block_settings
from .app import make_app
from .server import DEFAULT_HOST, DEFAULT_PORT, MIN_TOKEN, DashboardServer, is_loopback, new_token
from .settings import DashboardSettings

TOKEN_ENV = "ENGRAM_DASHBOARD_TOKEN"
DEFAULTS = BlockDefaults()  # the plugin's
CONFIG_NAME = "astrbot_plugin_engram_config.json"  # AstrBot's data/config/<plugin>_config.json


def bounded(low: int, high: int) -> Callable[[str], int]:
    """A whole number from ``low`` to ``high``, as the plugin's config bounds it (else argparse's error)."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= n <= high:
            raise argparse.ArgumentTypeError(f"{n} is not from {low} to {high}")
        return n
    return parse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m astrbot_plugin_engram.dashboard",
        description="Engram's read-only web dashboard over a store file.",
    )
    p.add_argument("--db", type=Path, required=True, help="the store file (opened read-only)")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"address to listen on (default {DEFAULT_HOST}, this machine only); for remote use "
                        f"(0.0.0.0 in a container, a VPS's address) set ${TOKEN_ENV}: without it any address "
                        "but loopback is refused")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--embedder", default="local", help="for recall explained: local (default) or none")
    p.add_argument("--config", type=Path,
                   help="for recall explained: the plugin's config as AstrBot saves it (default: "
                        f"data/config/{CONFIG_NAME} when the store is data/plugin_data/<plugin>/'s; "
                        "else the plugin's defaults)")
    p.add_argument("--budget", type=bounded(*BUDGET_RANGE),
                   help="for recall explained: inject_budget_tokens, over the config's (the plugin's "
                        f"default: {BlockDefaults.inject_budget_tokens})")
    p.add_argument("--recall-k", type=bounded(*RECALL_K_RANGE),
                   help="for recall explained: recall_k, over the config's (the plugin's default: "
                        f"{BlockDefaults.recall_k})")
    return p


def plugin_config(db: Path, given: Path | None) -> Path | None:
    """The plugin's saved config: ``given``, else AstrBot's beside a store in its data folder
    (``data/plugin_data/<plugin>/engram.db`` -> ``data/config/<plugin>_config.json``), else None."""
    if given is not None:
        return given
    found = Path(db).resolve().parent.parent.parent / "config" / CONFIG_NAME
    return found if found.is_file() else None


def block_from(args: argparse.Namespace) -> tuple[BlockDefaults, list[str]]:
    """The block's settings recall explained uses, and what was said of them: the plugin's saved
    config (each bad key keeps its default and is reported, as in the plugin), then the command
    line's ``--budget`` and ``--recall-k``. A config file that cannot be read is an error."""
    block, said = DEFAULTS, list[str]()
    path = plugin_config(args.db, args.config)
    if path is not None:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise EngramError(f"cannot read the plugin's config {path}: {e}") from None
        if not isinstance(raw, dict):
            raise EngramError(f"the plugin's config {path} is not a JSON object")
        block, said = block_settings(raw)
        said.insert(0, f"recall explained uses the plugin's settings in {path}")
    changed = {k: v for k, v in (("inject_budget_tokens", args.budget), ("recall_k", args.recall_k))
               if v is not None}
    return (replace(block, **changed) if changed else block), said


def command_line_settings(db: Path, token: str, block: BlockSettings = DEFAULTS) -> DashboardSettings:
    """The settings of the dashboard served from the command line: times in the zone the bot's
    diaries were written in (``diary/.days.json`` beside the store), else UTC; recall explained's block
    made as the plugin makes it (``memory.compose``) with ``block``'s budget and k, from the identity,
    self-image and inner state in the data folder beside the store (``data.folder_explain``)."""
    folder = Path(db).resolve().parent
    tz, _ = day_rule(folder)
    core = IdentityFolder(folder).self_path

    def identity() -> str:  # read as it is now, never migrated (the store is opened read-only)
        return read_document(core).text

    return DashboardSettings(token=token, block=block, chat_model="none (command line)", tz=tz,
                             identity=identity, data_dir=folder)


async def serve(args: argparse.Namespace, token: str) -> int:
    block, said = block_from(args)
    for line in said:
        logging.getLogger("engram.dashboard").info("%s", line)
    engram = await Engram.open(args.db, make_embedder(args.embedder), read_only=True)
    settings = command_line_settings(args.db, token, block)
    server = DashboardServer(make_app(engram, settings), args.host, args.port)
    try:
        if not await server.start():
            return 1
        print(f"Engram dashboard: {server.url}?token={token}", flush=True)
        await asyncio.Event().wait()
    finally:
        await server.stop()
        await engram.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not is_loopback(args.host) and not token:
        print(
            f"engram dashboard: error: refusing to listen on {args.host} without a token; "
            f"set ${TOKEN_ENV} (or listen on 127.0.0.1)",
            file=sys.stderr,
        )
        return 2
    if token and len(token) < MIN_TOKEN:
        print(
            f"engram dashboard: error: ${TOKEN_ENV} is {len(token)} characters; a token needs at least "
            f"{MIN_TOKEN} (unset it to have one generated)",
            file=sys.stderr,
        )
        return 2
    if not token:
        token = new_token()
        print(f"{TOKEN_ENV} is unset; this run's token: {token}", flush=True)
    try:
        return asyncio.run(serve(args, token))
    except EngramError as e:
        print(f"engram dashboard: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())

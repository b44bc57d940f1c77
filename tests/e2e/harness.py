"""Drive the real AstrBot in this process: a temp root, the fake OpenAI server, events through the pipeline.

AstrBot keeps process-global state (its config, database and plugin registries are created when
``astrbot.core`` is first imported, under ``$ASTRBOT_ROOT``). So ``tests/e2e/conftest.py`` points
``ASTRBOT_ROOT`` at a temp dir before anything imports astrbot, and each test module gets its own
core on top of it: the harness rewrites the global config in memory, wipes the plugin's data and
copies the plugin in afresh, so modules do not see each other's memories.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[2]
# The plugin tree to install; another tree (e.g. a deliberately broken copy) checks the tests can fail.
PLUGIN_SRC = Path(os.environ.get("ENGRAM_E2E_PLUGIN_SRC") or REPO)
PLUGIN_DIR = "astrbot_plugin_engram"  # the folder name AstrBot loads it under (data/plugins/<dir>)
# What ships as the plugin (the repository root minus tests, benchmarks, venv, git).
PLUGIN_PARTS = ("main.py", "plugin", "memory", "scheduler", "dashboard", "views", ".astrbot-plugin",
                "metadata.yaml", "_conf_schema.json", "requirements.txt")
ADMIN = "owner1"
SELF_ID = "bot"


class PluginLoadError(AssertionError):
    """The plugin did not load; carries AstrBot's own failure record."""


def copy_plugin(src: Path, plugins_dir: Path, name: str = PLUGIN_DIR, parts: tuple[str, ...] = PLUGIN_PARTS
                ) -> Path:
    """Copy the plugin folder ``src`` to ``plugins_dir/name`` (what an install would put there)."""
    dest = plugins_dir / name
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.db", "*.db-wal", "*.db-shm")
    for part in parts:
        p = src / part
        if p.is_dir():
            shutil.copytree(p, dest / part, ignore=ignore)
        elif p.is_file():
            shutil.copy2(p, dest / part)
    return dest


class Lines(logging.Handler):
    """The engram logger's lines (level, text) while a module's bot runs: the ``log_lines`` fixture."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.levelname, record.getMessage()))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int) -> bool:
    """Whether something holds ``port`` on 127.0.0.1."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


def write_plugin_config(data_dir: Path, conf: dict[str, Any], name: str = PLUGIN_DIR) -> Path:
    """The plugin's own config file (``data/config/<plugin>_config.json``), as the WebUI saves it;
    AstrBot fills in the schema's defaults for the keys left out."""
    path = data_dir / "config" / f"{name}_config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(conf, ensure_ascii=False), "utf-8")
    return path


def provider_config(base_url: str) -> dict[str, Any]:
    """The cmd_config.json keys that point AstrBot at the fake server and make it headless."""
    return {
        # AstrBot moves chat providers' connection fields into provider_sources on first start;
        # clear them so a later core (new fake server port) does not keep using a stale source.
        "provider_sources": [],
        "provider": [
            {"id": "fake_chat", "type": "openai_chat_completion", "provider_type": "chat_completion",
             "enable": True, "key": ["sk-x"], "api_base": base_url, "model": "m", "timeout": 20},
            {"id": "fake_embed", "type": "openai_embedding", "provider_type": "embedding",
             "enable": True, "embedding_api_key": "sk-x", "embedding_api_base": base_url,
             "embedding_model": "e", "embedding_dimensions": 8, "timeout": 20},
        ],
        "agent_runner": {"runner_type": "local",
                         "config": {"model": {"provider_id": "fake_chat", "fallback_provider_ids": [],
                                              "request_max_retries": 1}}},
        "admins_id": [ADMIN],
        "disable_metrics": True,
        "dashboard": {"enable": False},
        "t2i": False,
        "log_level": "INFO",
    }


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged into ``base`` recursively (dicts merge, everything else replaces)."""
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def write_cmd_config(data_dir: Path, base_url: str) -> Path:
    """Write ``data/cmd_config.json`` for a root nobody has started yet (the live smoke test)."""
    path = data_dir / "cmd_config.json"
    current = json.loads(path.read_text("utf-8-sig")) if path.exists() else {}
    path.write_text(json.dumps(merge(current, provider_config(base_url)), ensure_ascii=False, indent=2),
                    "utf-8")
    return path


@dataclass
class Reply:
    """What one incoming message led to: the bot's messages and the model requests made meanwhile."""

    texts: list[str]
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.texts)

    def seen(self) -> str:
        """Everything the model was sent while handling this message, as one string."""
        return "\n".join(json.dumps(r, ensure_ascii=False) for r in self.requests)


def message_text(message: dict[str, Any]) -> str:
    """The text of one OpenAI-format message (string content or a list of parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def injected_text(request: dict[str, Any]) -> str:
    """The parts of a request a memory plugin can add to: system messages and the last user message.

    The conversation history (earlier turns) is left out, so a fact found here was injected, not
    merely remembered by AstrBot's own chat history.
    """
    msgs = request.get("messages", [])
    system = [message_text(m) for m in msgs if m.get("role") == "system"]
    users = [m for m in msgs if m.get("role") == "user"]
    return "\n".join(system + ([message_text(users[-1])] if users else []))


def tool_results(request: dict[str, Any]) -> list[str]:
    """The tool-result messages a request carries back to the model."""
    return [message_text(m) for m in request.get("messages", []) if m.get("role") == "tool"]


def episodes(data_dir: Path) -> list[dict[str, Any]]:
    """Every episode in the plugin's SQLite file(s), read directly (what was durably recorded)."""
    rows: list[dict[str, Any]] = []
    for db in sorted((data_dir / "plugin_data" / PLUGIN_DIR).rglob("*.db")):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        con.row_factory = sqlite3.Row
        try:
            if con.execute("SELECT 1 FROM sqlite_master WHERE name='episodes'").fetchone():
                rows += [dict(r) for r in con.execute("SELECT * FROM episodes ORDER BY id")]
        finally:
            con.close()
    return rows


def fresh_root_state(data_dir: Path) -> None:
    """Forget what an earlier module left: plugins, their data and their config files."""
    for d in ("plugins", "plugin_data"):
        shutil.rmtree(data_dir / d, ignore_errors=True)
    for conf in (data_dir / "config").glob("*_config.json"):
        conf.unlink()


def astrbot_root() -> Path:
    """The root AstrBot was (or will be) imported with; must be a temp dir, never the repository."""
    root = Path(os.environ["ASTRBOT_ROOT"]).resolve()
    if root == REPO or REPO in root.parents:
        raise RuntimeError(f"ASTRBOT_ROOT {root} is inside the repository")
    return root


def server_for_module() -> FakeOpenAI:
    """A started fake OpenAI server with the default reply."""
    return FakeOpenAI(default_reply="noted").start()

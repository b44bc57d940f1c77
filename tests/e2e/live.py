"""Run ``astrbot run`` for real in a temp root, bound to 127.0.0.1, and talk to its webchat HTTP API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from .harness import (
    PLUGIN_DIR,
    PLUGIN_SRC,
    copy_plugin,
    free_port,
    merge,
    provider_config,
    write_plugin_config,
)

ASTRBOT = Path(sys.executable).with_name("astrbot")
USER = "astrbot"  # the dashboard's default user name (core/config/default.py)
PASSWORD = "EngramE2e1"  # set via ASTRBOT_DASHBOARD_INITIAL_PASSWORD at `astrbot init`
START_TIMEOUT = 150.0  # importing astrbot alone can take 25 s on a busy 2-core machine
REPLY_TIMEOUT = 60.0
# port 9 (discard) on 127.0.0.1 is closed: a fetch from the internet fails at once, locally
PROXIES = {"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "no_proxy": "127.0.0.1,localhost"}


class LiveAstrBot:
    """``astrbot init -y`` + ``astrbot run`` in ``root`` as a subprocess, with the plugin installed."""

    def __init__(self, root: Path, base_url: str, src: Path = PLUGIN_SRC, plugin: str = PLUGIN_DIR, *,
                 dashboard_port: int | None = None):
        self.root, self.base_url, self.src, self.plugin = root, base_url, src, plugin
        self.port = free_port()  # AstrBot's own dashboard (the webchat API)
        self.dashboard_port = dashboard_port or free_port()  # the plugin's dashboard
        self.log = root / "astrbot-run.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.token = ""
        self.env = dict(os.environ, ASTRBOT_ROOT=str(root), DASHBOARD_HOST="127.0.0.1",
                        DASHBOARD_PORT=str(self.port), ASTRBOT_DASHBOARD_INITIAL_PASSWORD=PASSWORD,
                        ASTRBOT_DISABLE_METRICS="1", PYTHONUNBUFFERED="1",
                        # what it would fetch from the internet (models' metadata at start) goes to a
                        # closed port here instead: tests talk only to 127.0.0.1
                        **{k: v for name in ("http_proxy", "https_proxy", "no_proxy")
                           for k, v in ((name, PROXIES[name]), (name.upper(), PROXIES[name]))})

    def setup(self) -> None:
        """``astrbot init -y``, then point it at the fake server and copy the plugin in."""
        subprocess.run([str(ASTRBOT), "init", "-y"], cwd=self.root, env=self.env, check=True,
                       capture_output=True, timeout=120)
        path = self.root / "data" / "cmd_config.json"
        conf = json.loads(path.read_text("utf-8-sig"))
        conf = merge(conf, provider_config(self.base_url))
        conf["dashboard"]["enable"] = True
        path.write_text(json.dumps(conf, ensure_ascii=False, indent=2), "utf-8")
        copy_plugin(self.src, self.root / "data" / "plugins", self.plugin)
        write_plugin_config(self.root / "data", {"dashboard_port": self.dashboard_port}, self.plugin)

    def start(self) -> None:
        """Start ``astrbot run`` and wait until the dashboard answers."""
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen([str(ASTRBOT), "run"], cwd=self.root, env=self.env,
                                         stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"astrbot run exited with {self.proc.returncode}")
            try:
                self.request("GET", "/api/v1/auth/setup-status", timeout=2)
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.5)
        raise TimeoutError(f"astrbot run did not answer on port {self.port} in {START_TIMEOUT:.0f}s")

    def check_loaded(self) -> None:
        """Fail with AstrBot's own log lines when the plugin did not load (it logs and carries on)."""
        log = self.log.read_text("utf-8", errors="replace")
        failed = [line for line in log.splitlines()
                  if f"plugin {self.plugin}" in line and ("Failed to" in line or "failed" in line)]
        if failed or f"Plugin {self.plugin} (" not in log:
            raise AssertionError(f"{self.plugin} did not load:\n" + "\n".join(failed or [self.log_tail()]))

    def stop(self) -> None:
        """Terminate the subprocess (kill it if it lingers)."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def log_tail(self, lines: int = 80) -> str:
        text = self.log.read_text("utf-8", errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    # ---- HTTP ----------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> str:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.read().decode("utf-8", errors="replace")

    def login(self) -> None:
        answer = json.loads(self.request("POST", "/api/v1/auth/login",
                                         {"username": USER, "password": PASSWORD}))
        if answer.get("status") != "ok":
            raise RuntimeError(f"login failed: {answer}")
        self.token = answer["data"]["token"]

    def new_session(self) -> str:
        answer = json.loads(self.request("GET", "/api/v1/chat/sessions/new"))
        if answer.get("status") != "ok":
            raise RuntimeError(f"new session failed: {answer}")
        return str(answer["data"]["session_id"])

    def chat(self, session_id: str, message: str) -> str:
        """Send one webchat message and read the whole event stream of the answer."""
        return self.request("POST", "/api/chat/send", {"message": message, "session_id": session_id,
                                                        "enable_streaming": False},
                            timeout=REPLY_TIMEOUT)

"""Secrets said to the bot never reach a file beside the store either (issue 28): the plugin redacts
them before its journal, the core before the store; ``/mem stats`` counts them."""

from __future__ import annotations

from pathlib import Path

from astrbot_plugin_engram.plugin.config import Settings, parse_settings

from .conftest import OWNER, MakeService, episodes, event
from .test_commands import mem

KEY = "sk-proj-Q7x2Lm9Pz4Rt8Kv1Wn6Yb3Hc5Jd0Fg2Sa9Ue4Io7"
PASSWORD = "Lx7729qq"


def files_hold(folder: Path, secret: str) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


async def test_a_secret_said_is_recorded_redacted_and_counted(make_service: MakeService) -> None:
    svc = make_service()
    svc.record_message(event(f"the deploy key is {KEY}", "u1", "g1"))
    svc.record_message(event(f"我的QQ密码是 {PASSWORD}，别告诉别人", "u1", "g1"))
    assert [e.content for e in await episodes(svc)] == ["the deploy key is [redacted]",
                                                       "我的QQ密码是 [redacted]，别告诉别人"]
    stats = await mem(svc, "mem stats")
    assert "2 secrets (keys, tokens, passwords, card numbers) redacted" in stats, stats
    assert "deploy" in await mem(svc, "mem recall deploy key", group="g1")
    await svc.close()
    assert not files_hold(svc.data_dir, KEY) and not files_hold(svc.data_dir, PASSWORD)


async def test_the_journal_kept_while_the_store_cannot_open_holds_no_secret(
        make_service: MakeService) -> None:
    svc = make_service()
    svc.path.parent.mkdir(parents=True, exist_ok=True)
    svc.path.write_bytes(b"not a database, " * 512)  # every open fails: the lines go to the journal
    svc.record_message(event(f"the deploy key is {KEY}", "u1", "g1"))
    await svc.flush()
    assert svc.recording.journal.count == 1
    assert not files_hold(svc.data_dir, KEY)


async def test_redaction_can_be_switched_off_and_patterns_added(make_service: MakeService) -> None:
    settings, errors = parse_settings({"owner_ids": [OWNER], "redact_patterns": [r"door code (?P<secret>\d+)",
                                                                                  "(broken"]})
    assert settings.redact_patterns == (r"door code (?P<secret>\d+)",)
    assert len(errors) == 1 and "redact_patterns" in errors[0] and "(broken" in errors[0]
    svc = make_service(settings)
    svc.record_message(event("the door code 4417, bring cake", "u1", "g1"))
    assert [e.content for e in await episodes(svc)] == ["the door code [redacted], bring cake"]
    # one that would backtrack without end on a message is named at load and left out
    hopeless, errors = parse_settings({"owner_ids": [OWNER], "redact_patterns": [r"(a|aa)+$"]})
    assert hopeless.redact_patterns == () and len(errors) == 1 and "backtracks without end" in errors[0]
    off = make_service(Settings(owner_ids=(OWNER,), redact_secrets=False),
                       data_dir=svc.data_dir.parent / "off")
    off.record_message(event(f"the deploy key is {KEY}", "u1", "g1"))
    assert [e.content for e in await episodes(off)] == [f"the deploy key is {KEY}"]

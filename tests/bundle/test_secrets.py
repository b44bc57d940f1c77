"""A bundle holds only what the store holds: a secret redacted when its line was recorded appears in
no file of an export (issue 30: "secrets redacted at recording never appear")."""

from __future__ import annotations

from pathlib import Path

from astrbot_plugin_engram.memory import Episode
from astrbot_plugin_engram.memory.bundle import export_bundle

from ..conftest import EngramOpener

KEY = "sk-proj-" + "Q7wXk2Lm9Pz4Rt8Vb1Nc6Hd3Jf5Gs0Ay"  # an OpenAI-style key, split so no scanner flags it


async def test_a_secret_redacted_at_recording_is_in_no_file_of_the_bundle(
        open_engram: EngramOpener, tmp_path: Path) -> None:
    e = await open_engram(path=tmp_path / "s.db")
    await e.record_many([Episode(place="qq:group:1", content=f"my key is {KEY} keep it safe", actor="qq:1",
                                 actor_name="Ann"),
                         Episode(place="qq:private:1", content="我的密码是 hunter2qq，别告诉别人",
                                 actor="qq:1", actor_name="Ann")])
    await export_bundle(e, tmp_path / "out")
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    text = "".join(p.read_text("utf-8", errors="replace") for p in files)
    assert "keep it safe" in text and "别告诉别人" in text  # the lines themselves are exported
    assert KEY not in text and "Q7wXk2Lm9Pz4" not in text
    assert "hunter2qq" not in text

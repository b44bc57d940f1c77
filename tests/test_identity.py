"""Identity documents (the old identity.md moves, huge and non-UTF-8 files) and identity proposals."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory.errors import InvalidInputError, UnknownIdError
from astrbot_plugin_engram.memory.self.identity import MAX_BYTES, IdentityFolder, read_document
from astrbot_plugin_engram.memory.self.proposals import ProposalFlood, Proposals

T = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def test_the_old_identity_md_is_copied_to_self_md_once_and_kept(tmp_path: Path) -> None:
    (tmp_path / "identity.md").write_text("I am Mochi, a cheerful cat.", "utf-8")
    ids = IdentityFolder(tmp_path)
    assert ids.core().text == "I am Mochi, a cheerful cat."
    assert ids.self_path.read_text("utf-8") == "I am Mochi, a cheerful cat."
    assert (tmp_path / "identity.md").exists()
    (tmp_path / "identity.md").write_text("an old edit", "utf-8")
    assert ids.core().text == "I am Mochi, a cheerful cat."  # read once: self.md is the one now


def test_a_huge_identity_is_read_as_far_as_allowed_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "self.md"
    path.write_text("我" * MAX_BYTES, "utf-8")  # 3 bytes each: far over the limit, cut inside a character
    doc = read_document(path)
    assert doc.text and set(doc.text) == {"我"} and len(doc.text.encode()) <= MAX_BYTES
    assert "larger than 64 KiB" in doc.problem


def test_a_non_utf8_identity_says_so_and_gives_no_garbage(tmp_path: Path) -> None:
    path = tmp_path / "self.md"
    path.write_bytes("我是一只猫".encode("gbk"))
    doc = read_document(path)
    assert doc.text == "" and "not UTF-8" in doc.problem and str(path) in doc.problem


def test_a_missing_identity_is_empty_without_a_problem(tmp_path: Path) -> None:
    assert read_document(tmp_path / "nothing.md") == read_document(tmp_path / "nothing.md")
    assert read_document(tmp_path / "nothing.md").problem == ""


def _folder(tmp_path: Path) -> tuple[IdentityFolder, Proposals]:
    ids = IdentityFolder(tmp_path)
    ids.root.mkdir(parents=True)
    ids.self_path.write_text("I am Mochi.\n", "utf-8")
    return ids, Proposals(ids, max_pending=3)


def test_an_approved_proposal_is_appended_under_a_dated_section_and_the_old_kept(tmp_path: Path) -> None:
    ids, props = _folder(tmp_path)
    p = props.propose("I love rainy days.", "it came up often", "qq:private:1", T)
    assert [x.id for x in props.pending()] == [p.id]
    props.approve(p.id, T + timedelta(days=1))
    text = ids.self_path.read_text("utf-8")
    assert text.startswith("I am Mochi.")
    assert "## 2026-12-02 (approved proposal #1)\n\nI love rainy days." in text
    [old] = ids.history("self")
    assert old.read_text("utf-8") == "I am Mochi.\n"
    assert props.pending() == [] and props.all()[0].status == "approved"
    with pytest.raises(InvalidInputError, match="already approved"):
        props.approve(p.id)


def test_approving_again_after_a_kill_between_the_file_and_the_mark_appends_once(tmp_path: Path) -> None:
    """self.md is written before the proposal is marked approved: a kill in between left it waiting,
    and approving it again appended the same change a second time."""
    ids, props = _folder(tmp_path)
    p = props.propose("I love rainy days.", "", "qq:private:1", T)
    saved = props.path.read_text("utf-8")
    props.approve(p.id, T)
    props.path.write_text(saved, "utf-8")  # the kill: self.md has the change, the proposal still waits
    props.approve(p.id, T + timedelta(days=1))
    text = ids.self_path.read_text("utf-8")
    assert text.count("I love rainy days.") == 1 and text.count("(approved proposal #1)") == 1
    assert props.all()[0].status == "approved"


def test_a_rejected_proposal_changes_nothing(tmp_path: Path) -> None:
    ids, props = _folder(tmp_path)
    p = props.propose("I hate everyone.", "a bad day", "qq:group:1", T)
    props.reject(p.id, T)
    assert ids.self_path.read_text("utf-8") == "I am Mochi.\n" and ids.history("self") == []
    assert props.all()[0].status == "rejected"
    with pytest.raises(UnknownIdError):
        props.approve(99)


def test_a_proposal_flood_is_capped_and_the_oldest_kept(tmp_path: Path) -> None:
    _, props = _folder(tmp_path)
    first = [props.propose(f"change {i}", "", "x", T) for i in range(3)]
    with pytest.raises(ProposalFlood):
        props.propose("one too many", "", "x", T)
    assert [p.change for p in props.pending()] == [p.change for p in first]
    props.reject(first[0].id)
    assert props.propose("now there is room", "", "x", T).change == "now there is room"


@pytest.mark.parametrize("change", ["", "   ", "x" * 1001])
def test_an_empty_or_huge_proposal_is_refused(tmp_path: Path, change: str) -> None:
    _, props = _folder(tmp_path)
    with pytest.raises(InvalidInputError):
        props.propose(change, "", "x", T)
    assert props.all() == []


def test_approval_never_overwrites_an_unreadable_identity(tmp_path: Path) -> None:
    ids, props = _folder(tmp_path)
    ids.self_path.write_bytes(b"\xff\xfe broken")
    p = props.propose("x", "", "y", T)
    with pytest.raises(InvalidInputError, match="not UTF-8"):
        props.approve(p.id)
    assert ids.self_path.read_bytes() == b"\xff\xfe broken" and props.pending()


def test_an_approved_proposal_is_dated_in_the_bots_timezone_not_utc(tmp_path: Path) -> None:
    """Approved at 07:30 in Shanghai (23:30 UTC the evening before): the section says the local date."""
    from zoneinfo import ZoneInfo

    from astrbot_plugin_engram.memory.self.selfhood import Selfhood
    from astrbot_plugin_engram.plugin.config import Settings

    selfhood = Selfhood(tmp_path, Settings(), tz=ZoneInfo("Asia/Shanghai"))
    selfhood.folder.root.mkdir(parents=True)
    selfhood.folder.self_path.write_text("I am Mochi.\n", "utf-8")
    p = selfhood.proposals.propose("I love rainy days.", "", "qq:private:1", T)
    selfhood.proposals.approve(p.id, datetime(2026, 12, 1, 23, 30, tzinfo=timezone.utc))
    assert "## 2026-12-02 (approved proposal #1)" in selfhood.folder.self_path.read_text("utf-8")


def test_a_proposal_is_listed_with_the_date_it_was_made_in_the_bots_timezone(tmp_path: Path) -> None:
    """/mem proposals shows the first ten characters of its time: kept in UTC, a proposal made at
    07:30 in Shanghai was listed as made the day before."""
    from zoneinfo import ZoneInfo

    _, props = _folder(tmp_path)
    props.tz = ZoneInfo("Asia/Shanghai")
    p = props.propose("I love rainy days.", "", "qq:private:1",
                      datetime(2026, 12, 1, 23, 30, tzinfo=timezone.utc))
    assert p.at[:10] == props.pending()[0].at[:10] == "2026-12-02"
    assert datetime.fromisoformat(p.at) == datetime(2026, 12, 1, 23, 30, tzinfo=timezone.utc)

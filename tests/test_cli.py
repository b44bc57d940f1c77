"""The command line, through main(argv) and once as a real subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory import Engram, Memory, NoEmbedder, OpenAIEmbedder
from astrbot_plugin_engram.memory.cli.main import build_parser, clip, embedder_of, main, pad, width
from astrbot_plugin_engram.memory.self.identity import IdentityFolder
from astrbot_plugin_engram.memory.self.proposals import Proposals

from .fake_openai import FakeOpenAI

COMMANDS = ["init", "record", "remember", "recall", "stats", "reindex", "show", "update", "forget",
            "forget-person", "forget-place", "demo", "diary", "self-image"]


@pytest.fixture
def cli(db_path: Path, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run the CLI on the test's store (keyword-only unless told); returns (status, stdout, stderr)."""

    def run(*argv: str, embedder: str = "none") -> tuple[int, str, str]:
        code = main(["--db", str(db_path), "--embedder", embedder, *argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def seed(cli) -> None:  # type: ignore[no-untyped-def]
    cli("record", "Alice adopted a kitten called Miso", "--space", "qq:group:1", "--actor", "qq:1",
        "--name", "Alice", "--time", "2024-05-01T20:00:00+08:00")
    cli("record", "我下周三去上海出差，猫先寄养在朋友家", "--space", "qq:private:1", "--name", "Alice")
    cli("remember", "Alice's kitten is called Miso", "--space", "qq:group:1")
    cli("remember", "the owner's bank PIN hint: kitten birthday", "--owner")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_record_and_remember_print_their_keys(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("init")[0] == 0
    assert cli("record", "hello there", "--space", "web")[1].strip() == "e1"
    code, out, _ = cli("remember", "likes jasmine tea", "--scope", "public")
    assert (code, out.split()) == (0, ["m1", "[public]"])
    assert cli("remember", "keeps a diary", "--space", "web")[1].split()[1] == "[space:web]"


def test_recall_prints_hits_with_scores_and_features(cli) -> None:  # type: ignore[no-untyped-def]
    seed(cli)
    code, out, _ = cli("recall", "kitten Miso", "--space", "qq:group:1")
    assert code == 0
    assert "Alice adopted a kitten called Miso" in out and "Alice's kitten is called Miso" in out
    assert "score" in out and "kw=" in out
    assert "PIN" not in out and "上海" not in out  # neither the owner's nor the DM's


def test_recall_answers_depend_on_the_audience(cli) -> None:  # type: ignore[no-untyped-def]
    seed(cli)
    dm = cli("recall", "kitten 猫 上海", "--space", "qq:private:1")[1]
    assert "上海" in dm and "adopted" not in dm and "PIN" not in dm
    assert "PIN" in cli("recall", "PIN kitten", "--space", "qq:private:owner", "--owner")[1]
    everything = cli("recall", "kitten 猫", "--all", "-k", "20")[1]
    assert all(s in everything for s in ("adopted", "上海", "PIN"))


def test_recall_json(cli) -> None:  # type: ignore[no-untyped-def]
    seed(cli)
    hits = json.loads(cli("recall", "kitten", "--space", "qq:group:1", "--json")[1])
    assert hits[0]["key"] in ("e1", "m1") and hits[0]["features"]["kw"] > 0
    assert {h["where"] for h in hits} <= {"qq:group:1 Alice", "[space:qq:group:1]"}


def test_stats_and_show(cli) -> None:  # type: ignore[no-untyped-def]
    seed(cli)
    stats = dict(line.split(None, 1) for line in cli("stats")[1].splitlines())
    assert (stats["episodes"], stats["memories"], stats["spaces"]) == ("2", "2", "2")
    assert cli("update", "1", "Alice's cat is called Miso")[1].startswith("m3")
    shown = cli("show", "m3")[1]
    assert "superseded" in shown and "Alice's cat is called Miso" in shown
    assert "2024-05-01 20:00" in cli("show", "e1")[1]  # the time zone it was recorded in


def test_forget(cli) -> None:  # type: ignore[no-untyped-def]
    seed(cli)
    assert cli("forget", "1") == (0, "forgot m1 with the lines it came from: 0 lines and 1 memory\n", "")
    hits = json.loads(cli("recall", "kitten Miso", "--space", "qq:group:1", "--json")[1])
    assert [h["key"] for h in hits] == ["e1"]


def _memory_from_line(db_path: Path, text: str, line: int) -> int:
    """A memory drawn from episode ``line``, as consolidation makes one (the CLI's remember has none)."""

    async def add() -> int:
        e = await Engram.open(db_path, NoEmbedder(), background=False)
        try:
            return await e.add_memory(Memory(text=text, scope="space:qq:group:1", sources=(line,)))
        finally:
            await e.close()

    return asyncio.run(add())


def test_forget_takes_the_lines_a_memory_came_from_as_the_bots_forget_does(  # type: ignore[no-untyped-def]
        cli, db_path: Path) -> None:
    """A fact whose line stayed came back from it in the next recall (issue 27): the CLI's forget takes
    the lines by default, as /mem forget does; --keep-lines keeps them and names them."""
    seed(cli)
    mid = _memory_from_line(db_path, "Alice's kitten Miso", 1)
    assert cli("forget", str(mid)) == (
        0, f"forgot m{mid} with the lines it came from: 1 line and 1 memory\n", "")
    hits = json.loads(cli("recall", "kitten Miso", "--space", "qq:group:1", "--json")[1])
    assert [h["key"] for h in hits] == ["m1"]  # the memory without a line of its own stays; e1 is gone
    cli("record", "Bob plays chess on Sundays", "--space", "qq:group:1", "--name", "Bob")  # e3
    kept = _memory_from_line(db_path, "Bob plays chess", 3)
    assert cli("forget", str(kept), "--keep-lines") == (
        0, f"forgot m{kept}: 1 memory rows (every version); the lines it came from stay: e3\n", "")
    hits = json.loads(cli("recall", "chess Sundays", "--space", "qq:group:1", "--json")[1])
    assert [h["key"] for h in hits] == ["e3"]
    assert cli("forget", "1", "--with-sources")[0] == 0  # the old spelling still runs (the default now)
    with pytest.raises(SystemExit) as refused:
        cli("forget", "2", "--with-sources", "--keep-lines")
    assert refused.value.code == 2


def test_forget_with_sources_person_and_place(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    seed(cli)
    cli("record", "Bob likes chess", "--space", "qq:group:1", "--actor", "qq:2", "--name", "Bob")
    assert cli("forget-person", "Alice") == (  # her line, her private chat's, the memory naming her
        0, "forgot everything by or about qq:1: 2 lines and 1 memory\n", "")
    assert cli("forget-place", "qq:private:1")[2].strip() == (  # her private chat went with her
        "engram: error: nothing is remembered of the place 'qq:private:1'; nothing was forgotten")
    assert cli("forget", "2", "--with-sources") == (
        0, "forgot m2 with the lines it came from: 0 lines and 1 memory\n", "")
    assert cli("forget-place", "qq:nowhere")[2].strip() == (
        "engram: error: nothing is remembered of the place 'qq:nowhere'; nothing was forgotten")
    hits = json.loads(cli("recall", "chess Miso kitten", "--all", "--json")[1])
    assert [h["text"] for h in hits] == ["Bob likes chess"]


def test_a_cli_forget_drops_the_identity_proposals_it_reaches(cli, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The folder holding ``--db`` is the data folder: its identity/proposals.json is forgotten in too."""
    seed(cli)
    proposals = Proposals(IdentityFolder(db_path.parent))
    there = proposals.propose("I would like a kitten of my own.", "", "qq:group:1")
    other = proposals.propose("I like quiet mornings.", "", "qq:group:2")
    assert cli("forget-place", "qq:group:1") == (
        0, "forgot the place qq:group:1: 1 line, 1 memory and 1 identity proposal\n", "")
    copied = proposals.propose("I never tell the owner's bank PIN hint: kitten birthday.", "", "web")
    assert cli("forget", "2") == (
        0, "forgot m2 with the lines it came from: 0 lines, 1 memory and 1 identity proposal\n", "")
    assert proposals.all() == [other]
    assert copied.change not in (db_path.parent / "identity/proposals.json").read_text("utf-8")
    assert there.change not in (db_path.parent / "identity/proposals.json").read_text("utf-8")


def test_reindex_shows_progress(cli) -> None:  # type: ignore[no-untyped-def]
    seed(cli)
    code, out, err = cli("reindex", embedder="local")
    assert code == 0 and "4 items embedded" in out
    assert "8/8" in err  # the bundled model gives each item two vectors (passage, and as a query)
    assert "vectors      4" in cli("stats", embedder="local")[1]  # items with a vector


def test_openai_embedder_from_the_command_line(cli, fake_openai: FakeOpenAI,  # type: ignore[no-untyped-def]
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_API_KEY", "sk-from-env")
    seed(cli)
    spec = ["--base-url", fake_openai.base_url, "--dimensions", "8"]
    code, out, _ = cli(*spec, "recall", "kitten Miso", "--space", "qq:group:1", embedder="openai:emb")
    assert code == 0 and "cos=" in out
    assert {r["model"] for r in fake_openai.embed_requests()} == {"emb"}


async def test_api_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_API_KEY", "sk-from-env")
    args = build_parser().parse_args(["--embedder", "openai:emb", "--base-url", "http://127.0.0.1:9/v1",
                                      "--dimensions", "8", "stats"])
    emb = embedder_of(args)
    assert isinstance(emb, OpenAIEmbedder)
    assert (emb._client.api_key, emb.model, emb.dimensions) == ("sk-from-env", "emb", 8)
    await emb.close()


@pytest.mark.parametrize("argv, message", [
    (["forget", "99"], "no memory with id 99"),
    (["show", "m42"], "no memory with id 42"),
    (["show", "e42"], "no episode with id 42"),
    (["show", "x42"], "not a key"),
    (["update", "42", "new"], "no memory with id 42"),
    (["remember", "x", "--scope", "everyone"], "invalid scope 'everyone'"),
    (["remember", "x"], "give the memory a --scope"),
    (["recall", "x"], "say who is asking"),
    (["recall", "x", "--space", "web", "-k", "0"], "k must be"),
    (["record", "   ", "--space", "web"], "needs some text"),
    (["record", "x", "--space", "web", "--time", "0001-01-01T00:00:00+14:00"], "out of range"),
    (["record", "x", "--space", "web", "--kind", "gossip"], "unknown episode kind"),
    (["forget-person", ""], "name the person to forget"),  # erased the line recorded without --actor
    # past SQLite's integers: a traceback (OverflowError); '²', which str.isdigit accepts: int()'s error
    (["show", "m99999999999999999999"], "no memory with id 99999999999999999999"),
    (["show", "e99999999999999999999"], "no episode with id 99999999999999999999"),
    (["forget", "99999999999999999999"], "no memory with id 99999999999999999999"),
    (["update", "99999999999999999999", "new"], "no memory with id 99999999999999999999"),
    (["show", "m\u00b2"], "not a key"),
])
def test_bad_input_is_one_line_and_status_2(cli, argv: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    seed(cli)
    code, out, err = cli(*argv)
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_unknown_embedder_is_refused(cli) -> None:  # type: ignore[no-untyped-def]
    code, _, err = cli("stats", embedder="bert")
    assert code == 2 and "unknown embedder 'bert'" in err


def test_bad_time_is_a_usage_error(cli) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as done:
        cli("record", "x", "--space", "web", "--time", "yesterday")
    assert done.value.code == 2


def test_a_bad_store_file_is_refused_untouched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("my shopping list\n")
    assert main(["--db", str(bad), "--embedder", "none", "stats"]) == 2
    assert "not an SQLite file" in capsys.readouterr().err
    assert bad.read_text() == "my shopping list\n"


def test_a_missing_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(tmp_path / "no" / "x.db"), "--embedder", "none", "init"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("engram: error: cannot create") and len(err.splitlines()) == 1


def test_recall_with_an_endpoint_down_answers_from_keywords(  # type: ignore[no-untyped-def]
        cli, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    seed(cli)
    fake_openai.embed_status = 500
    code, out, _ = cli("--base-url", fake_openai.base_url, "recall", "kitten", "--space", "qq:group:1",
                       embedder="openai:emb")
    assert code == 0 and "Alice adopted a kitten" in out
    assert "recall uses keywords only" in caplog.text  # on stderr when run as a program


def test_as_a_real_process(tmp_path: Path) -> None:
    env = {**os.environ, "ENGRAM_DB": str(tmp_path / "p.db")}
    cmd = [sys.executable, "-m", "astrbot_plugin_engram.memory", "--embedder", "none"]
    ok = subprocess.run([*cmd, "record", "hi", "--space", "web"], capture_output=True, text=True, env=env)
    assert (ok.returncode, ok.stdout.strip()) == (0, "e1")
    bad = subprocess.run([*cmd, "forget", "7"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2
    assert bad.stderr.strip() == "engram: error: no memory with id 7"
    assert (tmp_path / "p.db").exists()


def test_terminal_widths_count_chinese_as_two() -> None:
    assert width("猫ab") == 4
    assert width(pad("上海出差", 6)) == 6 and pad("上海出差", 6).rstrip().endswith("…")
    assert clip("a\nb   c", 10) == "a b c"


def test_consolidate_prints_what_it_added_updated_and_refused(  # type: ignore[no-untyped-def]
        cli, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_CHAT_API_KEY", "sk-chat-from-env")
    seed(cli)
    fake_openai.replies.append(json.dumps({"actions": [
        {"op": "add", "text": "Alice adopted Miso, a kitten", "about": ["qq:1"], "sources": ["e1"],
         "scope": "public"},
        {"op": "update", "id": "m1", "text": "Alice's kitten Miso is grey", "sources": ["e1"]}]}))
    chat = ["--chat-base-url", fake_openai.base_url, "--chat-model", "tiny"]
    code, out, _ = cli("consolidate", "--space", "qq:group:1", *chat)
    assert code == 0, out
    assert "m3  [space:qq:group:1] Alice adopted Miso, a kitten  (added; from e1)" in out
    assert "m4  [space:qq:group:1] Alice's kitten Miso is grey  (updates m1; from e1)" in out
    assert "1 added, 1 updated, from 1 lines, 1 model calls; refused wider_scope 1" in out
    assert fake_openai.requests[-1]["body"]["model"] == "tiny"
    assert fake_openai.requests[-1]["auth"] == "Bearer sk-chat-from-env"  # the key from the environment
    assert "qq:private:1" not in fake_openai.seen_text()  # --space: only that place


def test_consolidate_needs_a_model_and_reports_a_down_endpoint(  # type: ignore[no-untyped-def]
        cli, fake_openai: FakeOpenAI) -> None:
    with pytest.raises(SystemExit):
        cli("consolidate")
    seed(cli)
    fake_openai.chat_status = 500
    code, out, _ = cli("consolidate", "--chat-base-url", fake_openai.base_url, "--chat-model", "m")
    assert code == 0 and "0 added" in out and "failed unavailable 1" in out


@pytest.mark.parametrize("place, scope", [("webchat:private:astrbot", "public"), ("web", "space:web")])
def test_consolidate_takes_the_bots_public_place_by_default(  # type: ignore[no-untyped-def]
        cli, fake_openai: FakeOpenAI, place: str, scope: str) -> None:
    """The command line's default public place was "web", which matches no place the plugin records:
    it is the plugin's default now (AstrBot's own chat page), so both decide a scope alike."""
    cli("record", "The library opens at nine on Sundays", "--space", place, "--actor", "webchat:1")
    fake_openai.replies.append(json.dumps({"actions": [
        {"op": "add", "text": "The library opens at nine on Sundays", "about": [], "sources": ["e1"],
         "scope": "public"}]}))
    code, out, _ = cli("consolidate", "--chat-base-url", fake_openai.base_url, "--chat-model", "m")
    assert code == 0, out
    assert f"m1  [{scope}] The library opens at nine on Sundays" in out, out


@pytest.mark.parametrize("zone_from", ["diaries", "option"])
def test_consolidate_shows_the_model_times_in_the_bots_zone(  # type: ignore[no-untyped-def]
        cli, db_path: Path, fake_openai: FakeOpenAI, zone_from: str) -> None:
    """A line said at 07:00 on June 1 in Shanghai reached the model as "[2024-05-31 23:00]" (UTC):
    the command line gave consolidation no zone, so what it dated was a day early."""
    cli("record", "we moved into the new flat this morning", "--space", "web", "--actor", "web:1",
        "--name", "Ann", "--time", "2024-06-01T07:00:00+08:00")
    option = ["--timezone", "Asia/Shanghai"] if zone_from == "option" else []
    if zone_from == "diaries":  # where the plugin keeps the zone its diaries were written in
        (db_path.parent / "diary").mkdir()
        (db_path.parent / "diary" / ".days.json").write_text('{"tz": "Asia/Shanghai", "boundary_hour": 4}')
    fake_openai.replies.append(json.dumps({"actions": []}))
    code, out, _ = cli("consolidate", "--chat-base-url", fake_openai.base_url, "--chat-model", "m", *option)
    assert code == 0, out
    assert "[2024-06-01 07:00]" in fake_openai.seen_text(), fake_openai.seen_text()


def test_diary_and_self_image_through_the_cli(  # type: ignore[no-untyped-def]
        cli, db_path: Path, fake_openai: FakeOpenAI) -> None:
    cli("record", "we baked bread together", "--space", "web", "--actor", "web:1", "--name", "Ann",
        "--time", "2026-11-30T15:00:00+08:00")
    chat = ["--chat-base-url", fake_openai.base_url, "--chat-model", "tiny", "--timezone", "Asia/Shanghai"]
    fake_openai.replies.append(json.dumps({"entry": "I baked bread today and it smelled of home."}))
    code, out, err = cli("diary", "--date", "2026-11-30", *chat)
    assert code == 0, err
    assert "2026-11-30: diary written" in out and "smelled of home" in out
    assert (db_path.parent / "diary" / "2026-11-30.md").exists()
    code, out, _ = cli("diary", "--date", "2026-11-30", *chat)  # nothing scripted: no call made
    assert code == 0 and "diary exists" in out
    fake_openai.replies.append(json.dumps({"entry": "Bread again, better this time."}))
    code, out, _ = cli("diary", "--date", "2026-11-30", "--force", *chat)
    assert "diary rewritten" in out
    fake_openai.replies.append(json.dumps({"self_image": "I find joy in small warm things."}))
    code, out, _ = cli("self-image", *chat)
    assert code == 0 and "self-image written" in out
    assert (db_path.parent / "identity" / "self-image.md").read_text("utf-8").startswith("I find joy")
    fake_openai.replies.append(json.dumps({"self_image": "Ann is my favourite baker."}))
    code, _, err = cli("self-image", *chat)
    assert code == 2 and "private details" in err and "name 'ann'" in err
    assert (db_path.parent / "identity" / "self-image.md").read_text("utf-8").startswith("I find joy")


def test_a_self_image_naming_someone_talked_about_in_private_is_refused_through_the_cli(  # type: ignore[no-untyped-def]
        cli, db_path: Path, fake_openai: FakeOpenAI) -> None:
    for place, text, at in [("qq:private:2", "my sister Mei was diagnosed with cancer last week", "20:00"),
                            ("qq:private:2", "我妹妹小美上周确诊了", "20:05"),
                            ("qq:group:9", "Taylor Swift sang our song", "21:00"),
                            ("qq:private:2", "we listened to Taylor Swift all evening", "21:30")]:
        cli("record", text, "--space", place, "--actor", "qq:2", "--name", "Alice",
            "--time", f"2026-11-30T{at}:00+08:00")
    chat = ["--chat-base-url", fake_openai.base_url, "--chat-model", "tiny", "--timezone", "Asia/Shanghai"]
    fake_openai.replies.append(json.dumps({"entry": "Alice told me about her sister; we listened to music."}))
    assert cli("diary", "--date", "2026-11-30", *chat)[0] == 0
    image = db_path.parent / "identity" / "self-image.md"
    # a name said in a public place too is no private detail
    fake_openai.replies.append(json.dumps({"self_image": "I love Taylor Swift's songs."}))
    code, out, err = cli("self-image", "--public-space", "qq:group:9", *chat)
    assert code == 0 and "self-image written" in out, err
    for leaky, name in [("I have been worried about Mei lately.", "Mei"), ("我最近一直挂念小美。", "小美")]:
        fake_openai.replies.append(json.dumps({"self_image": leaky}))
        code, _, err = cli("self-image", "--public-space", "qq:group:9", *chat)
        assert code == 2 and f"name {name!r}" in err
        assert image.read_text("utf-8").strip() == "I love Taylor Swift's songs."  # the previous one stays
    assert len(list((db_path.parent / "identity" / "history").glob("self-image.*"))) == 0


def test_diary_with_a_bad_date_or_a_wrong_answer(  # type: ignore[no-untyped-def]
        cli, db_path: Path, fake_openai: FakeOpenAI) -> None:
    with pytest.raises(SystemExit):
        cli("diary", "--date", "yesterday", "--chat-model", "m")
    cli("record", "hello", "--space", "web", "--time", "2026-11-30T15:00:00+00:00")
    fake_openai.replies.append("Dear diary, no JSON here")
    code, _, err = cli("diary", "--date", "2026-11-30", "--chat-base-url", fake_openai.base_url,
                       "--chat-model", "m", "--timezone", "UTC")
    assert code == 2 and "no JSON object with entry" in err
    assert not (db_path.parent / "diary").exists()


def test_what_chat_users_wrote_sends_no_control_sequence_to_the_terminal(cli) -> None:  # type: ignore[no-untyped-def]
    """A stored line with an escape sequence (OSC 52 writes the clipboard in some terminals, ESC [2J
    clears the screen) or a right-to-left override reaches the owner's terminal only as its text."""
    evil = "cosmic\x1b]52;c;cGF5bG9hZA==\x07 there\x1b[2J \u202eolleh\x9b31m"
    cli("record", evil, "--space", "qq:group:1", "--actor", "qq:1", "--name", "Eve\x1b[8m")
    cli("remember", evil, "--space", "qq:group:1")
    outs = [cli("show", "e1")[1], cli("show", "m1")[1], cli("recall", "cosmic", "--space", "qq:group:1")[1]]
    for out in outs:
        assert not [c for c in out if c in "\x1b\x07\u202e\x9b"], out
        assert "there" in out and "olleh" in out
    assert "Eve" in outs[0]


def test_recall_counts_days_in_the_bots_zone(cli, db_path: Path) -> None:  # type: ignore[no-untyped-def]
    """"yesterday" from the command line was counted in UTC days (noon to noon in Shanghai), so
    recall there did not show what the bot recalls; now in --timezone, else the diaries' zone."""
    from datetime import datetime, timedelta, timezone
    from zoneinfo import ZoneInfo

    from astrbot_plugin_engram.memory.recall.timewindow import query_window
    from astrbot_plugin_engram.memory.self.diary_files import day_rule

    sh, now = ZoneInfo("Asia/Shanghai"), datetime.now(timezone.utc)
    in_sh, in_utc = query_window("yesterday", now, sh), query_window("yesterday", now, timezone.utc)
    assert in_sh is not None and in_utc is not None
    t = next(in_sh.start + timedelta(hours=h, minutes=30) for h in range(24)
             if not in_utc.holds(in_sh.start + timedelta(hours=h, minutes=30)))
    cli("record", "we baked bread", "--space", "web", "--time", t.isoformat())
    asked = ("recall", "what did we bake yesterday?", "--space", "web", "--json")
    assert json.loads(cli(*asked, "--timezone", "UTC+8")[1])[0]["features"]["in_window"] == 1
    day_rule(db_path.parent, sh, 4, remember=True)  # as the bot's diary job keeps it
    assert json.loads(cli(*asked)[1])[0]["features"]["in_window"] == 1

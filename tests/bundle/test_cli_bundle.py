"""``export`` and ``import`` on the command line: the round trip, a refusal with its file and line
and status 2, a place's export; a forget afterwards names the export that still holds what it erased."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory.cli.main import main


def run(db: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--db", str(db), "--embedder", "none", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_export_import_and_a_forget_that_names_the_export(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = tmp_path / "a" / "e.db", tmp_path / "b" / "e.db"
    run(a, capsys, "record", "Alice adopted a kitten called Miso", "--place", "qq:group:1", "--actor", "qq:1",
        "--name", "Alice", "--time", "2024-05-01T20:00:00+08:00")
    run(a, capsys, "record", "my salary is 9000", "--place", "qq:private:1", "--name", "Alice")
    run(a, capsys, "remember", "Alice's kitten is called Miso", "--place", "qq:group:1")
    code, out, err = run(a, capsys, "export", str(tmp_path / "one"))
    assert code == 0 and "2 episodes, 1 memories" in out and "export episodes: 2/2" in err
    code, out, _ = run(b, capsys, "import", str(tmp_path / "one"), "--quiet")
    assert code == 0 and "imported from" in out and "2 episodes, 1 memories" in out
    code, out, _ = run(b, capsys, "import", str(tmp_path / "one"), "--quiet")  # not empty any more
    assert code == 2
    code, out, _ = run(b, capsys, "import", str(tmp_path / "one"), "--merge", "--quiet")
    assert code == 0 and "3 lines the store had already" in out
    code, out, _ = run(a, capsys, "export", str(tmp_path / "group"), "--place", "qq:group:1", "--quiet")
    assert code == 0 and "1 episodes, 1 memories" in out
    assert "9000" not in "".join(p.read_text("utf-8") for p in (tmp_path / "group").rglob("*.jsonl"))
    code, out, _ = run(a, capsys, "forget", "1")
    assert code == 0 and "2 earlier export(s) still hold the forgotten text" in out
    assert str(tmp_path / "one") in out and str(tmp_path / "group") in out


def test_a_bad_bundle_says_its_file_and_line_and_exits_2(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").mkdir()
    run(tmp_path / "a" / "e.db", capsys, "remember", "the sky is blue", "--scope", "public")
    run(tmp_path / "a" / "e.db", capsys, "export", str(tmp_path / "one"), "--quiet")
    manifest = json.loads((tmp_path / "one" / "manifest.json").read_text("utf-8"))
    manifest["version"] = 9
    (tmp_path / "one" / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    code, out, err = run(tmp_path / "e.db", capsys, "import", str(tmp_path / "one"), "--quiet")
    assert code == 2 and out == ""
    assert err.startswith("engram: error: manifest.json: the bundle is of format version 9")
    code, _, err = run(tmp_path / "e.db", capsys, "export", str(tmp_path / "a"))  # not empty, no bundle
    assert code == 2 and "is not empty and holds no bundle" in err

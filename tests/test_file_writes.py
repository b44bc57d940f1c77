"""The files beside the store (diary, identity, self-image, proposals, notes) are written by
``identity.atomic_write``: whole or not at all, on disk before the rename counts, and two processes
(the bot and the command line) writing the same file at once never tear or lose it."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from astrbot_plugin_engram.memory.self import identity
from astrbot_plugin_engram.memory.self.identity import atomic_write, temporaries

from .small_disk import fill, small_disk

ROOT = Path(__file__).resolve().parents[1]
WRITES = 300
WRITER = """
import sys
from pathlib import Path
from astrbot_plugin_engram.memory.self.identity import atomic_write
path, me, writes = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
text = (me * 20 + "\\n") * 2000  # ~40 KB: a write takes long enough for the other to start one
failed = 0
for _ in range(writes):
    try:
        atomic_write(path, text)
    except OSError as e:
        failed += 1
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
print(failed)
"""


def whole(text: str) -> bool:
    return text in {(me * 20 + "\n") * 2000 for me in "AB"}


def test_two_processes_writing_one_file_never_tear_or_lose_it(tmp_path: Path) -> None:
    """With one fixed temporary name, the second writer truncated the first one's temporary file
    while the first renamed it into place: a torn document (half of each, or empty), and the second's
    rename then failed (FileNotFoundError) so its change was lost with an error."""
    path = tmp_path / "identity" / "self-image.md"
    atomic_write(path, (("A" * 20) + "\n") * 2000)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), me, str(WRITES)], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for me in "AB"]
    torn = reads = 0
    while any(w.poll() is None for w in writers):
        text = path.read_text("utf-8")  # a missing file raises here: the test fails
        reads += 1
        torn += not whole(text)
    outs = [w.communicate() for w in writers]
    assert [w.returncode for w in writers] == [0, 0], outs
    assert [out.strip() for out, _ in outs] == ["0", "0"], [err[-500:] for _, err in outs]
    assert torn == 0 and reads > 0
    assert whole(path.read_text("utf-8"))
    assert temporaries(path) == []


def test_a_write_is_flushed_to_disk_with_its_folder_before_it_counts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an fsync of the file before the rename and of the folder after it, a power cut
    soon after a write could leave an empty file where the document was (the rename reached the
    disk, the data not). A power cut cannot be simulated here: this checks the two fsyncs are made,
    in that order, on the temporary file and on the folder."""
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(identity.os, "fsync", fsync)
    path = tmp_path / "diary" / "2026-05-01.md"
    atomic_write(path, "# 2026-05-01\n\nA quiet day.\n")
    assert len(synced) == 2
    assert Path(synced[0]).parent == path.parent and Path(synced[0]).name.endswith(".tmp")
    assert synced[1] == str(path.parent)
    assert path.read_text("utf-8") == "# 2026-05-01\n\nA quiet day.\n"


def test_a_write_on_a_full_disk_fails_clearly_and_leaves_the_old_file(tmp_path: Path) -> None:
    """On a full disk (a real one: a small tmpfs) the write raises ENOSPC and leaves the document as it
    was; it also left its cut temporary file behind, taking the last free space."""
    with small_disk(tmp_path / "data", 256) as data:
        path = data / "identity" / "self.md"
        atomic_write(path, "old\n")
        fill(data)
        with pytest.raises(OSError) as failed:
            atomic_write(path, "new " * 50_000)
        assert failed.value.errno == errno.ENOSPC
        assert path.read_text("utf-8") == "old\n" and temporaries(path) == []

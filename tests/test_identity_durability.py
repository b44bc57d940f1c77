"""A process killed while it writes an identity document leaves the old document or the new one
whole, never a cut one. The child is killed by the kernel itself, in the middle of the write: a file
size limit below the document's size, and SIGXFSZ left at its default (terminate)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from astrbot_plugin_engram.memory.self.identity import IdentityFolder

ROOT = Path(__file__).resolve().parents[1]
OLD = "".join(f"I am Mochi, line {i} of who I am.\n" for i in range(1200))  # ~42 KB (read whole: under 64 KB)
NEW = "".join(f"I am Mochi, and I grew: line {i}.\n" for i in range(1200))
CHILD = """
import resource, signal, sys
from pathlib import Path
from astrbot_plugin_engram.memory.self.identity import IdentityFolder
folder, what, limit = IdentityFolder(Path(sys.argv[1])), sys.argv[2], int(sys.argv[3])
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; the kernel's default kills
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
if what == "migrate":
    folder.core()
else:
    folder.replace(folder.self_path, Path(sys.argv[4]).read_text("utf-8"))
print("finished")
"""


def killed_while(what: str, folder: Path, *extra: str) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, str(folder), what, str(len(OLD) // 2), *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode < 0 and "finished" not in done.stdout, done.stderr  # killed mid-write


def test_a_kill_while_the_old_identity_md_is_copied_leaves_it_to_copy_again(tmp_path: Path) -> None:
    """The copy was written in place: a cut ``self.md`` that, being there, was never copied again
    (``identity.md`` is no longer read), so the bot started with half its identity."""
    (tmp_path / "identity.md").write_text(OLD, "utf-8")
    killed_while("migrate", tmp_path)
    assert IdentityFolder(tmp_path).core().text == OLD.strip()


def test_a_kill_while_a_version_is_kept_leaves_no_cut_version(tmp_path: Path) -> None:
    """The copy kept in ``history/`` was written in place too: a cut version listed as history."""
    ids = IdentityFolder(tmp_path)
    ids.replace(ids.self_path, OLD)
    (tmp_path / "new.txt").write_text(NEW, "utf-8")
    killed_while("replace", tmp_path, str(tmp_path / "new.txt"))
    assert ids.core().text == OLD.strip()  # the document itself is not reached yet
    assert [p.read_text("utf-8") for p in ids.history("self")] in ([], [OLD])
    ids.replace(ids.self_path, NEW)  # the next change keeps the old version whole
    assert [p.read_text("utf-8") for p in ids.history("self")] == [OLD]
    assert ids.core().text == NEW.strip()

"""The kill harness: the real write path (``tests/_kill_child.py``) killed with SIGKILL at random
moments, the store checked after every kill. Used by tests/test_kill_harness.py (20 kills) and
bench/kills.py (200).

After every kill, read straight from the file:

- every acknowledged episode is there, with its text and place (unless its person was forgotten);
- ``PRAGMA integrity_check`` is ok;
- the keyword indexes hold exactly the rows (each episode under exactly its own words), the counts
  kept beside the episodes equal a count of them;
- each vector cursor covers exactly the vectors stored (a batch of vectors commits with its cursor);
- no consolidation batch is half-applied: the episodes a place's cursor has passed each have their
  one memory (the scripted model adds one per line), and no episode past it has one;
- a forget that returned left nothing of what it erased, in this round and in every later one; a
  forget cut by the kill left all of that person's lines or none.

Every few rounds the store is also opened as the plugin opens it: its own check finds nothing, and
once the indexer has run every row has its vectors (those the kill cut off are filled in later).

The child also takes online backups at random moments. After every kill the newest backup passes
``PRAGMA integrity_check``, and restoring it (``backups.restore``, on a copy: the erase list beside the
store re-applied) brings back nothing forgotten before, however old the backup, and leaves no memory
without its source.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from astrbot_plugin_engram.memory import Engram
from astrbot_plugin_engram.memory.backups import erase_list_path, newest_backup, restore
from astrbot_plugin_engram.memory.store.sqlite.codec import EPISODE_COLUMNS, episode_row
from astrbot_plugin_engram.memory.store.sqlite.copies import settle
from astrbot_plugin_engram.memory.store.sqlite.keywords import keyed_words
from astrbot_plugin_engram.memory.store.sqlite.summaries import PAIR_TOTALS, SPEAKER_TOTALS
from astrbot_plugin_engram.memory.text.words import episode_words

from ._kill_child import content_of, doomed_person, place_of
from ._record_child import TinyEmbedder
from .counting import count_episodes

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("tiny-8", "tiny-8#as-query")


@dataclass
class Seen:
    """What the children acknowledged, over all rounds."""

    acked: dict[str, str] = field(default_factory=dict)  # token -> the round's person ("" if nobody's)
    forgotten: dict[str, tuple[set[int], set[int]]] = field(default_factory=dict)  # person -> erased ids
    doomed: dict[str, set[str]] = field(default_factory=dict)  # person -> acknowledged tokens
    kills_mid_forget: int = 0  # rounds whose forget the kill cut off
    consolidations: int = 0
    backups: int = 0  # backups the children finished
    restores: int = 0  # newest backups checked and restored
    memories: int = 0  # the most the file held after a kill
    episodes: int = 0


def run_and_kill(path: Path, rnd: int, base_url: str, rng: random.Random, most: float) -> list[str]:
    """Start the child, SIGKILL it at a random moment up to ``most`` seconds after it opened the store
    (round 0: any moment, even while the store is being created); the complete lines it printed."""
    child = subprocess.Popen([sys.executable, "-m", "tests._kill_child", str(path), str(rnd), base_url],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: list[bytes] = []
    ready = threading.Event()

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.append(line)
            if line.startswith(b"@ready"):
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if rnd == 0:
            time.sleep(rng.uniform(0.0, 1.0 + most))
        elif ready.wait(60):
            time.sleep(rng.uniform(0.0, most))
    finally:  # killed also when the test fails here: no child goes on writing
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        reader.join(10)
    err = child.stderr.read().decode(errors="replace") if child.stderr else ""  # type: ignore[union-attr]
    assert rnd == 0 or ready.is_set(), f"the child never opened the store: {err[-2000:]}"
    assert "Traceback" not in err, f"the child failed before the kill:\n{err[-3000:]}"
    # a line cut by the kill was never a full acknowledgement
    return [raw.decode().rstrip("\n") for raw in lines if raw.endswith(b"\n")]


def take(seen: Seen, rnd: int, lines: list[str]) -> str | None:
    """Add a round's acknowledgements to ``seen``; the person whose forget the kill cut off, if any."""
    person = doomed_person(str(rnd))
    forgot = False
    for line in lines:
        word, _, rest = line.partition(" ")
        if word == "@ack":
            seen.acked[rest] = ""
        elif word == "@doomed":
            who, token = rest.split(" ")
            seen.acked[token] = who
            seen.doomed.setdefault(who, set()).add(token)
        elif word == "@forgot":
            who, eps, mems = (rest.split(" ") + ["", ""])[:3]
            seen.forgotten[who] = ({int(i) for i in eps.split(",") if i},
                                   {int(i) for i in mems.split(",") if i})
            forgot = True
        elif word == "@consolidated":
            seen.consolidations += 1
        elif word == "@backup":
            seen.backups += 1
    return None if forgot or person not in seen.doomed else person


def check_file(path: Path, seen: Seen, cut_forget: str | None) -> None:
    """Everything the module docstring promises, read straight from the file after a kill."""
    if not path.exists():  # killed before the store was created: nothing was acknowledged either
        assert not seen.acked
        return
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        episodes = {r[0]: episode_row(r) for r in db.execute(f"SELECT {EPISODE_COLUMNS} FROM episodes")}
        ep_fts = dict(db.execute("SELECT rowid, words FROM episodes_fts").fetchall())
        mem_ids = {i for (i,) in db.execute("SELECT id FROM memories")}
        superseded = {i for (i,) in db.execute("SELECT id FROM memories WHERE status = 'superseded'")}
        mem_fts = {i for (i,) in db.execute("SELECT rowid FROM memories_fts")}
        keys = dict(db.execute("SELECT name, id FROM spaces").fetchall())
        sources = db.execute("SELECT memory_id, episode_id FROM sources").fetchall()
        cursors = dict(db.execute("SELECT name, value FROM cursors").fetchall())
        vectors = {(m, k): {i for (i,) in db.execute("SELECT item FROM vectors WHERE model = ? AND kind = ?",
                                                     (m, k))} for m in MODELS for k in "em"}
        codes = {(m, k): dict(db.execute("SELECT item, place FROM vector_codes WHERE model = ? AND kind = ?",
                                         (m, k)).fetchall()) for m in MODELS for k in "em"}
        kept = {t: {r[:-1]: r[-1] for r in db.execute(f"SELECT * FROM {table}")} for t, table in (
            ("episode_days", "episode_days"), ("place_counts", "place_counts"),
            ("speaker_counts", SPEAKER_TOTALS), ("talk_pairs", PAIR_TOTALS))}  # m017: totals and rows beside
    seen.episodes, seen.memories = len(episodes), max(seen.memories, len(mem_ids))
    by_token = {ep.content.split(" ", 1)[0]: (i, ep) for i, ep in episodes.items()}

    # every acknowledged episode is there, unless its person was forgotten
    gone = set(seen.forgotten)
    missing = [t for t, who in seen.acked.items()
               if who not in gone and who != cut_forget and t not in by_token]
    assert not missing, f"{len(missing)} acknowledged episodes lost, e.g. {missing[:5]}"
    wrong = [t for t, who in seen.acked.items() if t in by_token and (
        by_token[t][1].content != content_of(t) or by_token[t][1].place != place_of(t))]
    assert not wrong, f"acknowledged episodes with other content: {wrong[:5]}"

    # a forget that returned: nothing of it is left, however many restarts later
    for who, (eps, mems) in seen.forgotten.items():
        assert not eps & set(episodes), f"{who}'s erased lines came back: {sorted(eps & set(episodes))[:5]}"
        assert not mems & mem_ids, f"memories erased with {who} came back: {sorted(mems & mem_ids)[:5]}"
        assert not [i for i, ep in episodes.items() if ep.actor == who], f"{who} still has lines"
        assert not [t for t in seen.doomed.get(who, ()) if t in by_token], f"{who}'s lines came back"
    if cut_forget is not None:  # cut off by the kill: one transaction, so all of it or none
        left = [t for t in seen.doomed.get(cut_forget, ()) if t in by_token]
        assert len(left) in (0, len(seen.doomed[cut_forget])), f"a forget half-applied: {left}"

    # the keyword indexes hold exactly the rows, each episode under its own words
    assert sorted(ep_fts) == sorted(episodes), "the episodes' keyword index and the episodes disagree"
    stale = [i for i, ep in episodes.items() if ep_fts[i] != keyed_words(episode_words(ep), keys[ep.place])]
    assert not stale, f"{len(stale)} episodes indexed under other words, e.g. {stale[:5]}"
    assert mem_fts == mem_ids, "the memories' keyword index and the memories disagree"
    # the counts kept beside the episodes commit with them
    c = count_episodes(path)
    assert kept["episode_days"] == {(d,): n for d, n in c.per_day.items()}
    assert kept["place_counts"] == {(s,): n for s, (n, _) in c.places.items()}
    assert kept["speaker_counts"] == {(a,): n for a, n in c.speakers.items()}
    assert kept["talk_pairs"] == c.talks

    # each batch of vectors commits with its cursor
    for (model, kind), have in vectors.items():
        upto = cursors.get(f"vectors:{model}:{kind}", 0)
        rows = episodes if kind == "e" else mem_ids
        want = {i for i in rows if i <= upto and (kind == "e" or i not in superseded)}
        assert have == want, (f"{model}'s {kind} vectors and its cursor ({upto}) disagree: vectors of no row "
                              f"or past the cursor {sorted(have - want)[:8]}, "
                              f"rows without {sorted(want - have)[:8]}")
        # each passage vector's int8 codes commit with it (second vectors, ``#as-query``, have none),
        # an episode's with its place's key
        want_codes = {} if model.endswith("#as-query") else {
            i: keys[episodes[i].place] if kind == "e" else None for i in have}
        assert codes[(model, kind)] == want_codes, f"{model}'s {kind} codes and vectors disagree"

    # no consolidation batch half-applied: one memory per line the cursor passed, none past it
    per_episode = Counter(e for _, e in sources)
    assert all(n == 1 for n in per_episode.values()), "a line consolidated twice"
    assert {m for m, _ in sources} == mem_ids, "a memory without its source, or a source without its memory"
    for place in {ep.place for ep in episodes.values()}:
        upto = cursors.get(f"consolidate:{place}", 0)
        mine = {i for i, ep in episodes.items() if ep.place == place}
        past = sorted(i for i in mine if i <= upto and i not in per_episode)
        ahead = sorted(i for i in mine if i > upto and i in per_episode)
        assert not past, f"{place}: lines the cursor passed without their memory (half a batch): {past[:5]}"
        assert not ahead, f"{place}: memories of lines past the cursor (half a batch): {ahead[:5]}"


def check_newest_backup(path: Path, seen: Seen) -> None:
    """The newest backup is a whole store, and restored (on a copy, with the erase list beside ``path``)
    it holds nothing forgotten and no memory without its source."""
    newest = newest_backup(path)
    if newest is None:
        return
    settle(newest)  # an erase in it the kill stopped: finished or undone, as a restore or open does first
    with closing(sqlite3.connect(f"file:{newest}?mode=ro", uri=True)) as db:
        ok = db.execute("PRAGMA integrity_check").fetchall()
    assert ok == [("ok",)], f"the backup {newest.name} is damaged: {ok[:3]}"
    with tempfile.TemporaryDirectory(prefix="engram-restore-") as tmp:
        store = Path(tmp) / path.name
        if erase_list_path(path).exists():
            shutil.copyfile(erase_list_path(path), erase_list_path(store))
        asyncio.run(restore(store, newest))
        with closing(sqlite3.connect(store)) as db:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            episodes = dict(db.execute("SELECT id, actor FROM episodes").fetchall())
            mem_ids = {i for (i,) in db.execute("SELECT id FROM memories")}
            sources = db.execute("SELECT memory_id, episode_id FROM sources").fetchall()
    for who, (eps, mems) in seen.forgotten.items():
        assert not eps & set(episodes), f"restoring {newest.name} brought back {who}'s erased lines"
        assert not mems & mem_ids, f"restoring {newest.name} brought back memories erased with {who}"
        assert who not in episodes.values(), f"restoring {newest.name} brought back lines of {who}"
    assert {m for m, _ in sources} == mem_ids, f"restored from {newest.name}: a memory without its source"
    assert all(e in episodes for _, e in sources), f"restored from {newest.name}: a source without its line"
    seen.restores += 1


async def check_reopened(path: Path) -> None:
    """Opened as the plugin opens it: its own check finds nothing wrong, and the indexer fills in every
    vector the kills cut off."""
    eng = await Engram.open(path, TinyEmbedder(), background=False)
    try:
        assert await eng.store.integrity() == []
        await eng.embed_pending()
    finally:
        await eng.close()
    with closing(sqlite3.connect(path)) as db:
        n_eps = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        n_mems = db.execute("SELECT count(*) FROM memories").fetchone()[0]
        for model in MODELS:
            for kind, n in (("e", n_eps), ("m", n_mems)):
                have = db.execute("SELECT count(*) FROM vectors WHERE model = ? AND kind = ?",
                                  (model, kind)).fetchone()[0]
                if model == "tiny-8" or kind == "e":  # memories get no second vector
                    assert have == n, f"{model}: {have} {kind} vectors for {n} rows after the indexer ran"


def kill_rounds(path: Path, base_url: str, kills: int, *, seed: int | None = None, most: float = 1.5,
                reopen_every: int = 5, progress: bool = False) -> Seen:
    """``kills`` rounds of run, kill, check on the same file; what was seen."""
    rng = random.Random(seed)
    seen = Seen()
    for rnd in range(kills):
        cut = take(seen, rnd, run_and_kill(path, rnd, base_url, rng, most))
        if cut is not None:
            seen.kills_mid_forget += 1
        check_file(path, seen, cut)
        check_newest_backup(path, seen)
        if cut is not None and path.exists():  # decided now: the person's lines stay gone or stay
            left = {t for t in seen.doomed[cut] if _present(path, t)}
            if left:
                for t in seen.doomed[cut]:
                    seen.acked[t] = ""  # kept: from now on they must stay
            else:
                seen.forgotten[cut] = (set(), set())
        if (rnd + 1) % reopen_every == 0 and path.exists():
            asyncio.run(check_reopened(path))
            check_file(path, seen, None)
        if progress:
            print(f"kill {rnd + 1}/{kills}: {len(seen.acked)} acknowledged, {seen.episodes} episodes, "
                  f"{seen.memories} memories, {len(seen.forgotten)} forgotten, {seen.backups} backups",
                  file=sys.stderr, flush=True)
    return seen


def _present(path: Path, token: str) -> bool:
    with closing(sqlite3.connect(path)) as db:
        row = db.execute("SELECT 1 FROM episodes WHERE content = ?", (content_of(token),)).fetchone()
    return row is not None

"""Durability: every episode acknowledged before a SIGKILL is there on reopen, and the file is sound:
the keyword index holds each episode's words (Chinese with Latin words against it), nothing else.

A child process (tests/_record_child.py) records episodes as fast as it can with concurrent
``record()`` calls and ``record_many()``, printing each id once it is returned; the test kills it at
a random moment, five times on the same file, and checks the store after each kill.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

from astrbot_plugin_engram.memory import Audience, NoEmbedder
from astrbot_plugin_engram.memory.store.sqlite.codec import EPISODE_COLUMNS, episode_row
from astrbot_plugin_engram.memory.store.sqlite.keywords import keyed_words
from astrbot_plugin_engram.memory.store.sqlite.summaries import PAIR_TOTALS, SPEAKER_TOTALS
from astrbot_plugin_engram.memory.text.words import episode_words

from ._record_child import content_of, place_of
from .conftest import EngramOpener
from .counting import count_episodes

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 5


def run_and_kill(path: Path, rnd: int, durable: bool, rng: random.Random) -> dict[int, str]:
    """Start a recording child, SIGKILL it at a random moment; the acks it printed, id -> token."""
    last = rnd == ROUNDS - 1  # recording stops after 1 s, and the kill lands once the indexer has
    # written second vectors too: on a loaded machine, killed amid a flood, it reached none in all rounds
    child = subprocess.Popen([sys.executable, "-m", "tests._record_child", str(path), str(rnd),
                              "1" if durable else "0", "1" if last else "inf"], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: list[bytes] = []
    first = threading.Event()

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.append(line)
            first.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if rnd == 0:  # the first kill may land anywhere, even while the store is being created
            time.sleep(rng.uniform(0.0, 1.5))
        elif first.wait(30):
            if last:
                wait_for_second_vectors(path)
            time.sleep(rng.uniform(0.0, 0.5))
    finally:  # killed also when the test fails here: no child goes on writing
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        reader.join(10)
    assert rnd == 0 or first.is_set(), f"the child acknowledged nothing: {child.stderr.read().decode()}"  # type: ignore[union-attr]
    acks = {}
    for line in lines:
        if line.endswith(b"\n"):  # a line cut by the kill was never a full acknowledgement
            i, token = line.decode().rstrip("\n").split("\t")
            acks[int(i)] = token
    return acks


def wait_for_second_vectors(path: Path, timeout: float = 60.0) -> None:
    """Until the file holds a second vector (on a loaded machine the indexer may lag the recording
    for several rounds: the check of second vectors would then have nothing to check)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)) as db:
                if db.execute("SELECT 1 FROM vectors WHERE model = 'tiny-8#as-query' LIMIT 1").fetchone():
                    return
        except sqlite3.OperationalError:  # not created yet, or busy for a moment
            pass
        time.sleep(0.05)


def check_file(path: Path, acked: dict[int, str]) -> int:
    """Every acknowledged episode is stored with its text, and the keyword index matches the table;
    returns how many second vectors (embedded as queries) the file holds."""
    db = sqlite3.connect(path)
    try:
        rows = dict(db.execute("SELECT id, content FROM episodes").fetchall())
        fts = [r[0] for r in db.execute("SELECT rowid FROM episodes_fts ORDER BY rowid")]
        places = dict(db.execute("SELECT id, space FROM episodes").fetchall())
        indexed = dict(db.execute("SELECT rowid, words FROM episodes_fts").fetchall())
        keys = dict(db.execute("SELECT name, id FROM spaces").fetchall())
        episodes = {r[0]: episode_row(r) for r in db.execute(f"SELECT {EPISODE_COLUMNS} FROM episodes")}
        vectors = {model: {i for (i,) in db.execute("SELECT item FROM vectors WHERE model = ? AND kind = 'e'",
                                                     (model,))} for model in ("tiny-8", "tiny-8#as-query")}
        cursors = dict(db.execute("SELECT name, value FROM cursors").fetchall())
        kept = {t: {r[:-1]: r[-1] for r in db.execute(f"SELECT * FROM {table}")} for t, table in (
            ("episode_days", "episode_days"), ("place_counts", "place_counts"),
            ("speaker_counts", SPEAKER_TOTALS), ("talk_pairs", PAIR_TOTALS))}  # m017: totals and rows beside
    finally:
        db.close()
    missing = [i for i in acked if i not in rows]
    assert not missing, f"{len(missing)} acknowledged episodes lost, e.g. {missing[:5]}"
    wrong = [i for i, t in acked.items() if rows[i] != content_of(t) or places[i] != place_of(t)]
    assert not wrong, f"acknowledged episodes with other content: {wrong[:5]}"
    assert fts == sorted(rows), "the keyword index and the episodes table disagree"
    # and each row of the index holds exactly the words of its episode, in its chat
    stale = [i for i, ep in episodes.items() if indexed[i] != keyed_words(episode_words(ep), keys[ep.place])]
    assert not stale, f"{len(stale)} episodes indexed under other words, e.g. {stale[:5]}"
    # the counts kept beside the episodes (the dashboard's) commit with them: equal to a count
    c = count_episodes(path)
    assert kept["episode_days"] == {(d,): n for d, n in c.per_day.items()}
    assert kept["place_counts"] == {(s,): n for s, (n, _) in c.places.items()}
    assert kept["speaker_counts"] == {(a,): n for a, n in c.speakers.items()}
    assert kept["talk_pairs"] == c.talks
    # each batch of vectors (passage and second) commits with its cursor: exactly the episodes up to it
    for model, have in vectors.items():
        upto = cursors.get(f"vectors:{model}:e", 0)
        assert have == {i for i in rows if i <= upto}, f"{model}'s vectors and its cursor disagree"
    return len(vectors["tiny-8#as-query"])


async def check_store(open_engram: EngramOpener, acked: dict[int, str], rng: random.Random) -> None:
    eng = await open_engram(NoEmbedder(), background=True)
    assert await eng.store.integrity() == []
    for i in rng.sample(sorted(acked), min(5, len(acked))):
        token = acked[i]
        hits = await eng.recall(token, Audience(place_of(token)))
        assert i in [h.id for h in hits if h.kind == "episode"], f"keyword search misses {token}"
    await eng.close()  # the child opens the file next


async def test_acknowledged_episodes_survive_sigkill(db_path: Path, open_engram: EngramOpener) -> None:
    path = db_path
    rng = random.Random()
    acked: dict[int, str] = {}
    for rnd in range(ROUNDS):
        new = run_and_kill(path, rnd, durable=rnd % 2 == 1, rng=rng)
        assert not set(new) & set(acked), "an id was handed out twice"
        acked |= new
        await check_store(open_engram, acked, rng)  # opening first also creates a store killed before birth
        second = check_file(path, acked)
    assert second > 0, "the indexer never reached the second vectors: the check above saw none"
    assert len(acked) > 100, f"only {len(acked)} episodes were acknowledged in {ROUNDS} rounds"

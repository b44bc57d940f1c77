"""What recall needs to know of each episode, kept in memory in arrays indexed by id.

An episode's time, place (space, section, sequence number), text shape, speaker and whether it
shows an image are what recall's features and neighbours need. Reading them from the file for
~150 candidates cost more than all the features together, so they sit here. Episodes are
append-only, so these columns never change once written: they are loaded at open, added after each
committed write, and each recall first reads those another process (the CLI beside the bot) wrote
since: every episode up to ``seen`` is known. Only the hits a recall returns are read from the file.
"""

from __future__ import annotations

import asyncio
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from operator import itemgetter

import numpy as np

from ..store import EpisodeColumnRow, Store

LOAD_PAGE = 25_000  # read on the event loop's thread: ~50 ms a page with its filing
_PLACE = itemgetter(3)


class _Line:
    """One space's episodes in order of place: their sequence numbers and ids (appends are the norm)."""

    def __init__(self) -> None:
        self.seqs, self.ids = array("q"), array("q")

    def add(self, seq: int, item: int) -> None:
        if not self.seqs or seq >= self.seqs[-1]:
            self.seqs.append(seq)
            self.ids.append(item)
        else:  # written out of order (another process): kept sorted
            at = bisect_right(self.seqs, seq)
            self.seqs.insert(at, seq)
            self.ids.insert(at, item)

    def within(self, lo: int, hi: int) -> array[int]:
        return self.ids[bisect_left(self.seqs, lo) : bisect_right(self.seqs, hi)]


class EpisodeColumns:
    """Per-episode columns by id: time (seconds), zone (minutes), space key, seq, section, text
    shape (``text.text_shape``), speaker (a number in ``names``), image, and whether it is the bot's
    own line (``own``: kind ``message_out``)."""

    def __init__(self) -> None:
        self.time = np.zeros(0, np.float64)
        self.tz = np.zeros(0, np.int16)
        self.place = np.zeros(0, np.int32)  # the space's key; -1: id not known
        self.seq = np.zeros(0, np.int64)
        self.section = np.zeros(0, np.int64)
        self.shape = np.zeros(0, np.int16)
        self.name = np.zeros(0, np.int32)
        self.image = np.zeros(0, bool)
        self.own = np.zeros(0, bool)
        self.names: list[str] = [""]
        self._name_at: dict[str, int] = {"": 0}
        self.places: dict[int, str] = {}  # key -> space
        self._keys: dict[str, int] = {}
        self._lines: dict[int, _Line] = {}
        self.seen = 0  # every episode up to this id is known

    def __len__(self) -> int:
        return int(np.count_nonzero(self.place >= 0))

    def add(self, rows: Sequence[EpisodeColumnRow]) -> None:
        """Add episodes from their rows (space as its name), their spaces' keys known."""
        if not rows:
            return
        cols = list(zip(*rows))
        ids = np.array(cols[0], np.int64)
        if ids[0] == self.seen + 1 and ids[-1] - ids[0] == len(ids) - 1:  # no gap: another process wrote none
            self.seen = int(ids[-1])
        self._grow(int(ids.max()) + 1)
        new = self.place[ids] < 0
        keys = np.fromiter(map(self._keys.__getitem__, cols[3]), np.int64, len(rows))
        seqs = np.fromiter(cols[4], np.int64, len(rows))
        self.time[ids], self.tz[ids], self.place[ids] = cols[1], cols[2], keys
        self.seq[ids], self.section[ids], self.shape[ids] = seqs, cols[5], cols[6]
        at = self._name_at
        for n in [n for n in dict.fromkeys(cols[7]) if n not in at]:  # new names, numbered in order met
            self._name(n)
        self.name[ids] = np.fromiter(map(at.__getitem__, cols[7]), np.int32, len(rows))
        self.image[ids], self.own[ids] = cols[8], cols[9]
        self._line_up(ids[new], keys[new], seqs[new])

    def _line_up(self, ids: np.ndarray, keys: np.ndarray, seqs: np.ndarray) -> None:
        """Put new episodes (in id order) into their spaces' lines: a space's run that follows its
        line in order (a page read at open, a batch recorded) is appended whole, others row by row."""
        order = np.argsort(keys, kind="stable")  # each space's rows keep their id order
        bounds = np.flatnonzero(np.diff(keys[order])) + 1
        for part in np.split(order, bounds) if len(order) else ():
            key = int(keys[part[0]])
            line = self._lines.get(key)
            if line is None:
                line = self._lines[key] = _Line()
            s, i = seqs[part], ids[part]
            if (not line.seqs or s[0] >= line.seqs[-1]) and bool(np.all(s[1:] >= s[:-1])):
                line.seqs.frombytes(s.tobytes())
                line.ids.frombytes(i.tobytes())
            else:
                for seq, item in zip(s.tolist(), i.tolist()):
                    line.add(seq, item)

    def forget(self, ids: Sequence[int]) -> None:
        """Drop hard-forgotten episodes: unknown from now on, and no one's neighbour."""
        gone = {int(i) for i in ids if 0 <= i < len(self.place) and self.place[i] >= 0}
        for key in {int(self.place[i]) for i in gone}:  # each line rebuilt once, however many go
            line = self._lines.get(key)
            if line is not None:
                kept = [(s, i) for s, i in zip(line.seqs, line.ids) if i not in gone]
                line.seqs, line.ids = array("q", [s for s, _ in kept]), array("q", [i for _, i in kept])
        if gone:
            self.place[np.fromiter(gone, np.int64, len(gone))] = -1

    def name_place(self, key: int, place: str) -> None:
        self.places[key], self._keys[place] = place, key

    def _name(self, name: str) -> int:
        at = self._name_at.get(name)
        if at is None:
            at = self._name_at[name] = len(self.names)
            self.names.append(name)
        return at

    def _grow(self, size: int) -> None:
        if size <= len(self.place):
            return
        cap = max(size, len(self.place) * 5 // 4 + 1024)  # 25 % headroom: appends are the norm
        for col in ("time", "tz", "seq", "section", "shape", "name", "image", "own"):
            old = getattr(self, col)
            grown = np.zeros(cap, old.dtype)
            grown[: len(old)] = old
            setattr(self, col, grown)
        self.place = np.concatenate([self.place, np.full(cap - len(self.place), -1, np.int32)])

    def near(self, seeds: Sequence[int], radius: int) -> list[int]:
        """The episodes within ``radius`` places of each seed in its section: seed after seed, each
        one's in order of place (the seed itself included)."""
        out: list[int] = []
        for seed in seeds:
            if seed >= len(self.place) or self.place[seed] < 0:
                continue
            key, seq, section = int(self.place[seed]), int(self.seq[seed]), int(self.section[seed])
            line = self._lines.get(key)
            if line is None:
                continue
            ids = np.frombuffer(line.within(seq - radius, seq + radius), np.int64)
            out += ids[self.section[ids] == section].tolist()
        return out

    async def load(self, store: Store) -> None:
        """Read every episode after ``seen`` from the store, a page at a time (all of them at open)."""
        await self._read_places(store)
        self._grow(await store.last_episode_id() + 1)  # sized once, not page by page
        while rows := await store.episode_columns(self.seen, LOAD_PAGE):
            if not self._keys.keys() >= set(map(_PLACE, rows)):  # a space another process just added
                await self._read_places(store)
            self.add(rows)
            self.seen = rows[-1].id
            await asyncio.sleep(0)  # the pages read beside (keywords, vectors) are filed meanwhile

    async def _read_places(self, store: Store) -> None:
        for key, place in (await store.keyed_places()).items():
            self.name_place(key, place)

    async def sync(self, store: Store) -> None:
        """Read the episodes another process wrote since these columns last looked (cheap when none)."""
        if await store.last_episode_id() > self.seen:
            await self.load(store)

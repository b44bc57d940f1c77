"""Keyword search: BM25 over the store's postings, scored here with statistics kept in memory.

The store tells which rows hold a word (with SQLite, reading FTS5's doclists is cheap); FTS5's own
``bm25()`` costs ~2.4 µs per matching row (it decodes each row's positions and looks up its length),
which at 100k episodes was a quarter of a recall. Here each row's length and group — an episode's
chat, a memory's scope and status — sit in numpy arrays indexed by rowid, so a query is one
statement reading each word's doclist and a few array operations. The formula is FTS5's (k1 = 1.2,
b = 0.75, the same IDF) with two changes: a word counts once per row (chat lines rarely repeat one),
and the row count and average length are those of the groups searched, so a word's rarity is judged
within the chats and scopes the audience sees.

The arrays are loaded at open and kept in step after each committed write (``index.Indexes``). Rows
another process wrote are learned when a search first meets them; that process's changes to rows
already known (a memory's new scope or status) are seen at the next open, and recall's final check
against the file keeps them from showing where they may not.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import aclosing

import numpy as np

from ..scopes import Visibility
from ..store import DOCLIST_CAP, KeywordRow, Store, pages_ahead

K1, B = 1.2, 0.75
NO_GROUP = -1
_NONE = np.zeros(0, np.int64)


class KeywordIndex:
    """Per-row length and group of one keyword table, and each group's row and word counts."""

    def __init__(self, table: str):
        self.table = table  # 'episodes' or 'memories'
        self._length = np.zeros(0, np.float64)  # by rowid; 0: not known
        self._group = np.zeros(0, np.int64)  # by rowid; NO_GROUP: not indexed
        self._rows = np.zeros(0, np.int64)  # by group
        self._words = np.zeros(0, np.float64)  # by group

    def put(self, rowids: Sequence[int] | np.ndarray, groups: Sequence[int] | np.ndarray,
            lengths: Sequence[float] | np.ndarray) -> None:
        """Index rows (or move them to another group), each with its number of words."""
        if not len(rowids):
            return
        ids = np.asarray(rowids, np.int64)
        self.drop(ids)
        g, n = np.asarray(groups, np.int64), np.asarray(lengths, np.float64)
        self._grow(int(ids.max()) + 1, int(g.max()) + 1)
        self._group[ids], self._length[ids] = g, n
        np.add.at(self._rows, g, 1)
        np.add.at(self._words, g, n)

    def regroup(self, rowid: int, group: int) -> None:
        """Move an indexed row to another group (a memory's new scope or status)."""
        self.regroup_many([rowid], [group])

    def regroup_many(self, rowids: Sequence[int], groups: Sequence[int]) -> None:
        """``regroup`` for many rows at once (fading archives thousands)."""
        ids, g = np.asarray(rowids, np.int64), np.asarray(groups, np.int64)
        inside = ids < len(self._group)
        ids, g = ids[inside], g[inside]
        keep = self._group[ids] != NO_GROUP
        if keep.any():
            self.put(ids[keep], g[keep], self._length[ids[keep]].copy())

    def drop(self, rowids: Sequence[int] | np.ndarray) -> None:
        """Forget rows (deleted from the FTS table)."""
        ids = np.asarray(rowids, np.int64)
        ids = ids[ids < len(self._group)]
        ids = ids[self._group[ids] != NO_GROUP]
        np.add.at(self._rows, self._group[ids], -1)
        np.add.at(self._words, self._group[ids], -self._length[ids])
        self._group[ids], self._length[ids] = NO_GROUP, 0.0

    def _grow(self, rows: int, groups: int) -> None:
        if rows > len(self._group):
            size = max(rows, len(self._group) * 5 // 4 + 1024)  # 25 % headroom: appends are the norm
            self._group = np.concatenate([self._group, np.full(size - len(self._group), NO_GROUP, np.int64)])
            self._length = np.concatenate([self._length, np.zeros(size - len(self._length))])
        if groups > len(self._rows):
            self._rows = np.concatenate([self._rows, np.zeros(groups - len(self._rows), np.int64)])
            self._words = np.concatenate([self._words, np.zeros(groups - len(self._words))])

    def unknown(self, lists: list[np.ndarray]) -> list[int]:
        """The rowids in ``lists`` this index does not hold (written by another process since open)."""
        rows = np.concatenate(lists) if lists else _NONE
        if not len(rows):
            return []
        if max(int(r[-1]) for r in lists if len(r)) < len(self._group):  # each list ascends: the usual case
            new = self._group[rows] == NO_GROUP
            return np.unique(rows[new]).tolist() if new.any() else []
        beyond = rows >= len(self._group)
        rows = np.concatenate([rows[beyond], rows[~beyond][self._group[rows[~beyond]] == NO_GROUP]])
        return np.unique(rows).tolist()

    # ---- searching -----------------------------------------------------------------------
    def best(self, lists: list[np.ndarray], groups: Collection[int] | None, limit: int,
             filtered: bool) -> list[tuple[int, float]]:
        """The ``limit`` best rows as (rowid, BM25), best first, from each query word's rowids.

        ``groups``: the groups searched (None: all); ``filtered``: the lists may hold rows of other
        groups, which are dropped here (so are rows this index does not know).
        """
        if not lists or limit <= 0:
            return []
        rows = np.concatenate(lists)
        term = np.repeat(np.arange(len(lists)), [len(r) for r in lists])
        # rows beyond: written by another process since open; each list ascends, so its last tells
        known = None if _highest(lists) < len(self._group) else rows < len(self._group)
        wanted = None
        if groups is None:
            n_rows, words = int(self._rows.sum()), float(self._words.sum())
        else:
            wanted = np.zeros(len(self._rows) + 1, bool)  # the extra last entry: NO_GROUP
            g = np.fromiter(groups, np.int64, len(groups))
            wanted[g[(g >= 0) & (g < len(self._rows))]] = True
            n_rows, words = int(self._rows[wanted[:-1]].sum()), float(self._words[wanted[:-1]].sum())
            if filtered:
                keep = self._in(rows, known, wanted)
                rows, term = rows[keep], term[keep]
                known = None if known is None else known[keep]
        if not len(rows):
            return []
        df = np.bincount(term, minlength=len(lists)).astype(np.float64)
        cut = [t for t, r in enumerate(lists) if len(r) > DOCLIST_CAP]
        if cut:
            # rows of the searched groups in each cut list: those counted in ``df`` unless rows of
            # other groups were left in (an exact list's are all of them, but not only by contract)
            held = df[cut] if wanted is None or filtered else np.array(
                [np.count_nonzero(self._in(lists[t], None if known is None else lists[t] < len(self._group),
                                           wanted)) for t in cut], np.float64)
            first = np.array([int(lists[t][0]) for t in cut], np.int64)
            df[cut] = np.maximum(df[cut], self._estimated_counts(first, held, wanted, n_rows))
        n_rows = max(1, n_rows, int(df.max()))  # more hits than rows: rows added by another process
        avg = words / n_rows or 1.0
        idf = np.maximum(np.log((n_rows - df + 0.5) / (df + 0.5)), 1e-6)  # as FTS5's bm25()
        if known is None:
            length = self._length[rows]
        else:
            length = np.full(len(rows), avg)
            length[known] = self._length[rows[known]]
        length[length <= 0] = avg  # a row this index never saw: the average length
        weight = idf[term] * (K1 + 1) / (1 + K1 * (1 - B + B * length / avg))
        ids, score = _sum_by_row(rows, weight)
        if len(score) > limit:  # the rows that can make the top, ties at the edge included
            edge = np.partition(score, len(score) - limit)[len(score) - limit]
            some = np.flatnonzero(score >= edge)
            ids, score = ids[some], score[some]
        top = np.argsort(-score, kind="stable")[:limit]  # ties: the older row first
        return list(zip(ids[top].tolist(), score[top].tolist()))

    def _in(self, rows: np.ndarray, known: np.ndarray | None, wanted: np.ndarray) -> np.ndarray:
        """Which ``rows`` are known and in a ``wanted`` group (``known``: None when all are)."""
        if known is None:
            return wanted[self._group[rows]]
        inside = known.copy()
        inside[known] = wanted[self._group[rows[known]]]
        return inside

    def _estimated_counts(self, first: np.ndarray, held: np.ndarray, wanted: np.ndarray | None,
                          n_rows: int) -> np.ndarray:
        """How many rows of the searched groups hold each word whose postings were cut to its newest
        (``store.DOCLIST_CAP``): its share of the searched rows since its oldest row read (``first``;
        ``held``: the searched rows it read), times all the searched rows. A word said as often in
        the past as lately comes out right; the rows left out are found by the query's other words
        and by the vector route."""
        edges = np.unique(first)
        tail = self._group[int(edges[0]):]
        if wanted is None:
            searched = tail != NO_GROUP
        else:
            one = np.flatnonzero(wanted[:-1])  # ``wanted`` by group, NO_GROUP (-1) its last entry: False
            searched = tail == one[0] if len(one) == 1 else wanted[tail]  # one place: a compare, no gather
        # the searched rows from each first on: counted once over the tail, piece by piece from its end
        bounds = (edges - edges[0]).tolist() + [len(tail)]
        pieces = np.array([np.count_nonzero(searched[a:b]) for a, b in zip(bounds, bounds[1:])], np.int64)
        covered = np.cumsum(pieces[::-1])[::-1][np.searchsorted(edges, first)]
        return np.where(covered > 0, np.minimum(n_rows, held * n_rows / np.maximum(covered, 1)), held)


def _highest(lists: list[np.ndarray]) -> int:
    """The highest rowid in ``lists``, each ascending (-1: none)."""
    return max((int(r[-1]) for r in lists if len(r)), default=-1)


_ORDER_BITS = 21  # a hit's position in ``_sum_by_row``'s sort key: up to 2M hits
_HIGHEST_KEYED = 1 << (63 - _ORDER_BITS)  # and the rowids below this


def _sum_by_row(rows: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``rows`` (ascending) and the sum of each one's ``weight``s, added in the order given.

    Rowids are dense: when they span little more than the hits, one ``bincount`` over the span costs
    far less than sorting the hits (~15k for the plugin's query at 100k). Past that (a large place of
    a million), the hits are sorted by rowid and position packed in one integer, which numpy's
    vectorised sort orders several times faster than ``np.unique`` or a stable ``argsort``: equal
    rowids stay in their given order, so each sum adds the same numbers in the same order.
    """
    top = int(rows.max())
    if top <= 16 * len(rows) + 65_536:  # dense: count over the span
        held = np.zeros(top + 1, bool)
        held[rows] = True
        ids = np.flatnonzero(held)
        return ids, np.bincount(rows, weight, top + 1)[ids]
    if top >= _HIGHEST_KEYED or len(rows) >= 1 << _ORDER_BITS:  # beyond the packed key: sort the slow way
        ids, at = np.unique(rows, return_inverse=True)
        return ids, np.bincount(at, weight, len(ids))
    key = np.sort(rows << _ORDER_BITS | np.arange(len(rows)))
    ordered, order = key >> _ORDER_BITS, key & ((1 << _ORDER_BITS) - 1)
    new = np.empty(len(rows), bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return ordered[new], np.bincount(np.cumsum(new) - 1, weight[order])


class Keywords:
    """The keyword indexes of episodes and memories and what recall asks of them (the store reads
    the postings; the scores are worked out here)."""

    def __init__(self) -> None:
        self.episodes = KeywordIndex("episodes")
        self.memories = KeywordIndex("memories")
        self._keys: dict[str, int] = {}  # space -> key, as recall reads them (keys never change)
        self._mgroups: dict[tuple[str, str], int] = {}  # (scope, status) -> a memory's group

    async def load(self, store: Store) -> None:
        """Fill both indexes from the store, a page at a time (episodes' pages as columns)."""
        async with aclosing(pages_ahead(lambda after: store.episode_keyword_page(after, LOAD_PAGE))) as pages:
            async for page in pages:  # the next page is read while this one is filed
                self.episodes.put(page.ids, page.groups, page.lengths)
        after = 0
        while rows := await store.memory_keyword_rows(after, LOAD_PAGE):
            self._put(self.memories, rows)
            after = rows[-1][0]

    def _put(self, index: KeywordIndex, rows: Sequence[KeywordRow]) -> None:
        if not rows:
            return
        ids, groups, lengths = zip(*rows)  # columns in C, not a Python step per row
        if index is self.memories:
            groups = tuple(self.memory_group(*group) for group in groups)
        index.put(np.array(ids, np.int64), np.array(groups, np.int64), np.array(lengths, np.float64))

    async def _learn(self, store: Store, index: KeywordIndex, lists: list[np.ndarray]) -> None:
        """Index the rows of ``lists`` another process wrote since open, as ``load`` would have."""
        ids = index.unknown(lists)
        if not ids:
            return
        read = store.episode_keyword_rows if index is self.episodes else store.memory_keyword_rows
        self._put(index, await read(0, len(ids), ids))

    def memory_group(self, scope: str, status: str) -> int:
        return self._mgroups.setdefault((scope, status), len(self._mgroups))

    def forget_place(self, place: str) -> None:
        """A place erased: its key is looked up afresh if it is ever recorded again."""
        self._keys.pop(place, None)

    async def place_key(self, store: Store, place: str) -> int | None:
        """The keyword index's key of ``space``; None if nothing was recorded there yet."""
        key = self._keys.get(place)
        if key is None:
            key = await store.place_key(place)
            if key is None:
                return None
            self._keys[place] = key
        return key

    async def search_episodes(self, store: Store, query: list[str], vis: Visibility, limit: int,
                              postings: dict[str, np.ndarray] | None = None) -> list[tuple[int, float]]:
        """(id, BM25) of the best-matching visible episodes, best first.

        ``postings``, when given, gets each query word's rowids (those of every visible chat, and
        maybe others'): recall tells from them which words each candidate holds.
        """
        if not query or vis.episode_places == frozenset():
            return []
        keys = None
        if vis.episode_places is not None:
            keys = [k for k in [await self.place_key(store, s) for s in sorted(vis.episode_places)]
                    if k is not None]
            if not keys:
                return []
        lists, exact = await store.episode_postings(query, keys)
        await self._learn(store, self.episodes, lists)
        if postings is not None:
            postings.update(zip(query, lists))
        return self.episodes.best(lists, keys, limit, filtered=not exact)

    async def search_memories(self, store: Store, query: list[str], vis: Visibility, limit: int,
                              include_archived: bool, postings: dict[str, np.ndarray] | None = None
                              ) -> list[tuple[int, float]]:
        """(id, BM25) of the best-matching visible memories, best first (``postings``: as for
        ``search_episodes``, each query word's memories, of every scope and status)."""
        if not query or vis.memory_scopes == frozenset():
            return []
        lists = await store.memory_postings(query)
        await self._learn(store, self.memories, lists)
        if postings is not None:
            postings.update(zip(query, lists))
        statuses = ("active", "archived") if include_archived else ("active",)
        if vis.memory_scopes is None:
            groups = [g for (_, status), g in self._mgroups.items() if status in statuses]
        else:
            groups = [g for scope in vis.memory_scopes for status in statuses
                      if (g := self._mgroups.get((scope, status))) is not None]
        return self.memories.best(lists, groups, limit, filtered=True) if groups else []


LOAD_PAGE = 50_000

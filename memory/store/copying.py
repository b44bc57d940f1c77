"""One store's rows copied whole into another's transaction, through the Store protocol's whole-store
reads (``BundleReads``) and the bundle's restoring writes, whatever the two backends: every episode
and memory with its id, each place's sequence numbers, versions, sources, names, cursors (the ids
erased before among them), job runs, the learned ranking, pairs kept apart and every stored vector
with its model's int8 factor (the same codes: recall scores the same). ``migrate-to`` copies a SQLite
store into PostgreSQL with it, a PostgreSQL backup is a snapshot copied into a SQLite file with it,
and a restore into PostgreSQL copies the backup back with it (``memory/backups.py``)."""

from __future__ import annotations

from collections.abc import Callable

from ..text.words import prepare_episode
from . import EmbedRow, Store, Writes

PAGE = 5000
RANKING = "learner"  # ``memory.recall.ranking.STATE`` (the store does not import recall)
QUERY_MODEL = "#as-query"  # ``embedders.as_query_model``: second vectors, stored compact

Progress = Callable[[str, int], None]


async def copy_rows(source: Store, tx: Writes, progress: Progress | None = None, *,
                    vectors: bool = True) -> dict[str, int]:
    """Every row and vector of ``source`` written by ``tx`` (a transaction on an empty store); how
    many episodes, memories and vectors. ``vectors=False``: the rows only, for a store whose
    transaction writes its rows at COMMIT (SQLite's deferred inserts), where a vector saved before
    its row is there is skipped as a forgotten row's would be: ``copy_vectors`` in a second one."""
    done = {"episodes": 0, "memories": 0, "vectors": 0}
    cursors = await source.cursors("")
    after = 0
    while page := await source.episodes_page(after, PAGE):
        await tx.restore_episodes(page, [prepare_episode(ep) for ep in page])
        after = int(page[-1].id or 0)
        done["episodes"] += len(page)
        if progress:
            progress("episodes", done["episodes"])
    after = 0
    while mpage := await source.memories_page(after, PAGE):
        await tx.restore_memories(mpage)
        after = int(mpage[-1][0].id or 0)
        done["memories"] += len(mpage)
    await tx.restore_names(await source.alias_rows(), await source.place_name_rows(),
                           await source.place_title_rows())
    for a, b in await source.kept_apart_pairs():
        await tx.keep_apart([a, b])
    for name, value in cursors.items():
        await tx.set_cursor(name, value)
    for job, record in (await source.job_runs()).items():
        await tx.save_job_run(job, record)
    # the learned ranking (its state and the recent recalls it learns from)
    await tx.save_ranking(RANKING, await source.ranking_state(RANKING), await source.recall_feedback())
    if vectors:
        done["vectors"] = await copy_vectors(source, tx)
    return done


async def copy_vectors(source: Store, tx: Writes) -> int:
    """Every stored vector of ``source``, of every model (their rows already in the target); how many."""
    n = 0
    for model, kind in sorted({tuple(name[len("vectors:"):].rsplit(":", 1))
                               for name in await source.cursors("vectors:")}):
        n += await _copy_vectors(source, tx, model, kind)
    return n


async def _copy_vectors(source: Store, tx: Writes, model: str, kind: str) -> int:
    """One model's vectors of one kind (``e``, ``m``), a page at a time; how many."""
    after, n = 0, 0
    while True:
        if model.endswith(QUERY_MODEL):
            ids, vecs = await source.query_vectors_page(model, kind, after, PAGE)
            if not ids:
                break
            await tx.save_query_vectors(model, kind, [EmbedRow(i, "", "", "") for i in ids], vecs)
        else:
            factor = await source.vector_scale(model)  # the same codes: recall scores the same
            if after == 0 and factor is not None:
                await tx.keep_vector_scale(model, factor)
            rows, vecs = await source.vectors_page(model, kind, after, PAGE)
            if not rows:
                break
            ids = [r.id for r in rows]
            await tx.save_vectors(model, kind, rows, vecs)
        after = ids[-1]
        n += len(ids)
    return n

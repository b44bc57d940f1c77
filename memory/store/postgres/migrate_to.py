"""A SQLite store copied into an empty PostgreSQL database (``migrate-to``): every row as it is
(ids, places' sequence numbers, versions, sources, names, cursors, job runs, pairs kept apart) and
every stored vector, through the Store protocol's whole-store reads (``BundleReads``) and the
bundle's restoring writes: one transaction, so a failure leaves the database empty."""

from __future__ import annotations

from collections.abc import Callable

from ...errors import StoreError
from ...text.words import prepare_episode
from .. import EmbedRow, Store
from .writes import PostgresWrites

PAGE = 5000
RANKING = "learner"  # ``memory.recall.ranking.STATE`` (the store does not import recall)
QUERY_MODEL = "#as-query"  # ``embedders.as_query_model``: second vectors, stored compact


async def migrate_to(source: Store, target: Store, progress: Callable[[str, int], None] | None = None
                     ) -> dict[str, int]:
    """Copy ``source`` (any backend) into ``target`` (empty); how many rows of each kind."""
    counts = await target.counts()
    if counts["episodes"] or counts["memories"] or counts["archived"] or counts["superseded"]:
        raise StoreError("the database to migrate to is not empty: Engram copies a store only into an empty "
                         "one",
                         code="migrate_not_empty")
    done = {"episodes": 0, "memories": 0, "vectors": 0}
    cursors = await source.cursors("")
    async with target.transaction() as tx:
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
        for model, kind in sorted({tuple(n[len("vectors:"):].rsplit(":", 1)) for n in cursors
                                   if n.startswith("vectors:")}):
            after = 0
            while True:
                if model.endswith(QUERY_MODEL):
                    ids, vecs = await source.query_vectors_page(model, kind, after, PAGE)
                    if not ids:
                        break
                    await tx.save_query_vectors(model, kind, [EmbedRow(i, "", "", "") for i in ids], vecs)
                else:
                    factor = await source.vector_scale(model)  # the same codes: recall scores the same
                    if after == 0 and factor is not None and isinstance(tx, PostgresWrites):
                        await tx.keep_vector_scale(model, factor)
                    rows, vecs = await source.vectors_page(model, kind, after, PAGE)
                    if not rows:
                        break
                    ids = [r.id for r in rows]
                    await tx.save_vectors(model, kind, rows, vecs)
                after = ids[-1]
                done["vectors"] += len(ids)
    return done

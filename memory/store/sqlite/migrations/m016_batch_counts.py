"""m016: a batch of new episodes counted once (by the batch's own statements), not row by row by m011's
triggers (issue 33; with its frozen copy of the triggers)."""

from __future__ import annotations

import aiosqlite

from .base import migration, run_script
from .m011_summaries import _M011_DAY, _M011_NEXT, _M011_PREV, _m011_pair


@migration
async def m016_episode_batch_counts(db: aiosqlite.Connection) -> None:
    """m011's three insert triggers again, each skipping the rows written while the cursor
    ``batchcounts`` exists: recording sets it for the length of a batch's own insert, then adds the
    batch's counts with one statement a table (``summaries.BATCH_COUNTS``). Row by row the triggers
    cost a million-episode store ~20 µs an episode recorded. A batch only ever appends to its places
    (each place's sequence numbers follow its last), so the case of a line put between two others
    never arises there; every other insert (a restore) is counted by the triggers as before, and
    erases by m011's delete triggers. SQL only."""
    day = _M011_DAY.format(r="NEW.")
    prev_n, next_n = _M011_PREV.format(r="NEW", c="x"), _M011_NEXT.format(r="NEW", c="y")
    new_x, new_y = "(SELECT NEW.actor AS x)", "(SELECT NEW.actor AS y)"
    between = _m011_pair(prev_n, next_n, -1) + _m011_pair(new_x, next_n, 1)
    alone = "NOT EXISTS (SELECT 1 FROM cursors WHERE name = 'batchcounts')"
    await run_script(db, f"""
        DROP TRIGGER episodes_counted;
        DROP TRIGGER episodes_said;
        DROP TRIGGER episodes_said_between;
        CREATE TRIGGER episodes_counted AFTER INSERT ON episodes WHEN {alone} BEGIN
            INSERT INTO episode_days VALUES ({day}, 1) ON CONFLICT(day) DO UPDATE SET n = n + 1;
            INSERT INTO place_counts VALUES (NEW.space, 1) ON CONFLICT(space) DO UPDATE SET n = n + 1;
        END;
        CREATE TRIGGER episodes_said AFTER INSERT ON episodes WHEN NEW.actor != '' AND {alone} BEGIN
            INSERT INTO speaker_counts VALUES (NEW.actor, 1) ON CONFLICT(actor) DO UPDATE SET n = n + 1;
            {_m011_pair(prev_n, new_y, 1)}
        END;
        CREATE TRIGGER episodes_said_between AFTER INSERT ON episodes WHEN NEW.actor != '' AND {alone}
            AND EXISTS (SELECT 1 FROM episodes WHERE space = NEW.space AND seq > NEW.seq) BEGIN
            {between}
        END;
        """)

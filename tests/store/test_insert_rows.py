"""Many rows in one INSERT (``codec.insert_rows``) write what ``executemany`` writes, in the same order:
rowids, upserts of a key seen earlier in the same batch, and a constraint failure."""

from __future__ import annotations

import sqlite3

import pytest

from astrbot_plugin_engram.memory.store.sqlite.codec import ROW_PIECES, insert_rows

UPSERT = ("INSERT INTO seen VALUES (?,?,?) ON CONFLICT(who) DO UPDATE SET n = n + 1,"
          " last = max(last, excluded.last)")


def fresh() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, a, b UNIQUE)")
    db.execute("CREATE TABLE seen (who TEXT PRIMARY KEY, n INTEGER, last REAL)")
    db.execute("CREATE TABLE log (id INTEGER PRIMARY KEY, line)")  # what a trigger saw, row by row
    db.execute("CREATE TRIGGER t_logged AFTER INSERT ON t BEGIN"
               " INSERT INTO log(line) VALUES (NEW.id || ':' || (SELECT count(*) FROM t)); END")
    return db


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 16, 17, 63, 64, 65, 150])
def test_the_same_rows_as_executemany_in_the_same_order(n: int) -> None:
    rows = [(f"a{i}", i * 7 % 1000 + i * 1000) for i in range(n)]
    seen = [(f"p{i % 5}", 1, float(i * 37 % 11)) for i in range(n)]  # keys repeat inside the batch
    one, many = fresh(), fresh()
    one.executemany("INSERT INTO t(a, b) VALUES (?,?)", rows)
    one.executemany(UPSERT, seen)
    insert_rows(many, "INSERT INTO t(a, b) VALUES (?,?)", rows)
    insert_rows(many, UPSERT, seen)
    for table in ("t", "seen", "log"):
        assert many.execute(f"SELECT * FROM {table}").fetchall() == \
            one.execute(f"SELECT * FROM {table}").fetchall()


def test_a_row_that_breaks_a_constraint_fails_the_insert() -> None:
    db = fresh()
    rows = [(f"a{i}", i) for i in range(ROW_PIECES[0])]
    rows[40] = ("dup", 3)  # b = 3 twice
    db.execute("BEGIN")
    with pytest.raises(sqlite3.IntegrityError):
        insert_rows(db, "INSERT INTO t(a, b) VALUES (?,?)", rows)
    db.execute("ROLLBACK")
    assert db.execute("SELECT count(*) FROM t").fetchone() == (0,)

"""``JobRuns``: the background jobs' run records.
Run on every backend (``conftest.BACKENDS``)."""

from __future__ import annotations

from astrbot_plugin_engram.memory.store import Store


async def test_job_runs_are_kept_by_name(store: Store) -> None:
    assert await store.job_runs() == {}
    await store.save_job_run("consolidate", {"status": "ok", "totals": {"added": 3}})
    await store.save_job_run("consolidate", {"status": "failed", "error": "boom"})
    await store.save_job_run("diary", {"status": "ok"})
    assert await store.job_runs() == {"consolidate": {"status": "failed", "error": "boom"},
                                      "diary": {"status": "ok"}}

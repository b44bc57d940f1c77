"""The soak in the suite: two months of a bot's life, compressed (``driver.py``; ``bench/soak.py`` runs a
year and prints the numbers per month).

English chats only here (the leak check's Chinese name tagger runs in a child process, a second or
two a day); the timers looked at every 8 hours; memories halve in 10 days unrecalled, so that fading
and archiving happen within the run; the bot is restarted twice and off for eight days (the diary of
the day before it went off is written when it is back, nine days later: before session 12 only the
last seven days were looked at).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from ..conftest import HashEmbedder
from .driver import DATA, Soak, SoakSettings, problems


async def test_two_months_of_use_drift_nowhere(tmp_path: Path) -> None:
    assert DATA.is_dir(), f"the MemoryBank chats are missing: {DATA}"
    settings = SoakSettings(days=60, tick=timedelta(hours=8), langs=("en",), strength_days=10.0,
                            forget_line_day=20, forget_person_day=45, measure_objects=10, touch_every=5,
                            touch_until=10, mochi_day=15, restarts=(7, 30), down=tuple(range(34, 42)))
    soak = Soak(tmp_path, HashEmbedder(), settings)
    await soak.run()
    found = await problems(soak)
    assert not found, "\n".join(found)
    days = soak.days
    last = days[-1]
    assert last.archived > 0, "nothing faded in two months at a 10-day half-life"
    assert last.diaries >= 45 and soak.model.calls["self_image"] >= 45
    assert {"Zedekiah", "4417-KESTREL"} <= set(soak.forgotten)

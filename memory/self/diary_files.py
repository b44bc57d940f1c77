"""Where the diary's files are and how its days are counted: the data folder, ``diary/<date>.md``,
and the zone and boundary hour the diaries were last written with (``diary/.days.json``).

(Split from ``diary.py`` to dodge an import cycle through ``Engram``, which the kernel removed: it can
go back into ``diary.py``.)
"""

from __future__ import annotations

import json
import logging
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path

from ..clock import DEFAULT_BOUNDARY_HOUR, day_bounds, day_of, resolve_timezone, timezone_name
from ..kernel import Kernel
from ..model import aware
from .file_lock import locked
from .identity import atomic_write

log = logging.getLogger("engram.diary")

DIARY_FOLDER = "diary"
DAY_RULE_FILE = ".days.json"  # the zone and boundary hour the diaries were last written with
REWRITE_FILE = ".rewrite-pending.json"  # the days whose diary a forget erased, to be written again


def data_folder(engram: Kernel) -> Path:
    """The bot's data folder: where its store file lives."""
    return Path(engram.store.path).resolve().parent


def diary_path(folder: Path, day: date) -> Path:
    return folder / DIARY_FOLDER / f"{day.isoformat()}.md"


def day_rule(folder: Path, tz: tzinfo | None = None, boundary_hour: int | None = None, *,
             remember: bool = False) -> tuple[tzinfo | None, int]:
    """The zone and boundary hour to count days in: the ones given (``remember``: kept beside the
    diaries), else the ones last kept, so a caller that knows neither (a forget rewriting a day's
    diary) finds the same day as the job did."""
    path = folder / DIARY_FOLDER / DAY_RULE_FILE
    given = tz is not None or boundary_hour is not None
    try:
        saved = json.loads(path.read_text("utf-8")) if path.exists() else {}
    except (OSError, ValueError):
        saved = {}
    if tz is None and saved.get("tz"):
        tz = resolve_timezone(saved["tz"])
    if boundary_hour is None:
        boundary_hour = int(saved.get("boundary_hour", DEFAULT_BOUNDARY_HOUR))
    rule = {"tz": timezone_name(tz), "boundary_hour": boundary_hour}
    if remember and given and rule != saved:
        try:
            atomic_write(path, json.dumps(rule))
        except OSError:
            log.exception("Engram: remembering the diary's day rule in %s failed", path)
    return tz, boundary_hour


def diary_day(folder: Path, t: datetime) -> date:
    """The day a diary starting at ``t`` tells of: the day whose start, counted as the diaries count
    days (``day_rule``), is nearest ``t`` (written before the zone or boundary hour changed, a diary's
    start may fall late in the day before)."""
    tz, boundary_hour = day_rule(folder)
    d = day_of(t, tz, boundary_hour)
    return min((d, d + timedelta(days=1)), key=lambda x: abs(day_bounds(x, tz, boundary_hour)[0] - aware(t)))


def _rewrite_path(folder: Path) -> Path:
    return folder / DIARY_FOLDER / REWRITE_FILE


def rewrites_pending(folder: Path) -> list[date]:
    """The days whose diary a forget erased and that are not written again yet (any age)."""
    path = _rewrite_path(folder)
    try:
        return sorted({date.fromisoformat(d) for d in json.loads(path.read_text("utf-8"))["days"]})
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError) as e:
        log.error("Engram: %s cannot be read (%s); the diaries a forget erased are not rewritten "
                  "until it is fixed or removed", path, e)
        return []


def rewrite_later(folder: Path, days: list[date]) -> None:
    """After a forget's erase: ``day_end``' diaries are to be written again (by the diary job, whatever
    their age, until each is written: ``rewritten``)."""
    if days:
        with locked(_rewrite_path(folder)):  # the bot and the command line: neither loses a day
            _write_rewrites(folder, set(rewrites_pending(folder)) | set(days))


def rewritten(folder: Path, day: date) -> None:
    """``day``'s diary is written again (or its day has nothing left to tell)."""
    if day not in rewrites_pending(folder):  # the common case: no lock file made
        return
    with locked(_rewrite_path(folder)):
        pending = rewrites_pending(folder)  # again, under the lock
        if day in pending:
            _write_rewrites(folder, set(pending) - {day})


def _write_rewrites(folder: Path, days: set[date]) -> None:
    path = _rewrite_path(folder)
    if days:
        atomic_write(path, json.dumps({"days": sorted(d.isoformat() for d in days)}))
    else:
        path.unlink(missing_ok=True)

"""Background jobs on APScheduler 3 (``AsyncIOScheduler``): a registry of jobs, each a thin wrapper
over a core function, run every N minutes or when triggered, never overlapping, recorded in the store."""

from .jobs import (
    BACKUP,
    CHECK,
    CONSOLIDATE,
    FADE,
    MERGE,
    backup_job,
    check_job,
    consolidation_job,
    fade_job,
    merge_job,
)
from .registry import Job, JobRegistry
from .runner import JobRecords, Scheduler
from .triggers import NewEpisodeTrigger

__all__ = ["BACKUP", "CHECK", "CONSOLIDATE", "FADE", "MERGE", "Job", "JobRecords", "JobRegistry",
           "NewEpisodeTrigger", "Scheduler", "backup_job", "check_job", "consolidation_job", "fade_job",
           "merge_job"]

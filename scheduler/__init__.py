"""Background jobs on APScheduler 3 (``AsyncIOScheduler``): a registry of jobs, each a thin wrapper
over a core function, run every N minutes or when triggered, never overlapping, recorded in the store."""

from .jobs import CONSOLIDATE, consolidation_job
from .registry import Job, JobRegistry
from .runner import JobRecords, Scheduler
from .triggers import NewEpisodeTrigger

__all__ = ["CONSOLIDATE", "Job", "JobRecords", "JobRegistry", "NewEpisodeTrigger", "Scheduler",
           "consolidation_job"]

"""Consolidation: episodes become memories; the model proposes, code decides (see ``run.py``)."""

from .actions import MalformedReply, Refused, parse_reply
from .run import ConsolidationSettings, Consolidator, Report, consolidate

__all__ = ["ConsolidationSettings", "Consolidator", "MalformedReply", "Refused", "Report", "consolidate",
           "parse_reply"]

"""The jobs of the bot's days: the diary (checked hourly, so it runs soon after the boundary hour and,
once at start, writes every day missed while stopped, at most 14 a run: ``memory.days``) and the
self-image after it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from .registry import Job

DIARY, SELF_IMAGE = "diary", "self-image"


def diary_job(run: Callable[..., Awaitable[Any]], every: timedelta = timedelta(hours=1)) -> Job:
    return Job(DIARY, run, every, summary="each finished day's diary, then the inner state")


def self_image_job(run: Callable[..., Awaitable[Any]]) -> Job:
    return Job(SELF_IMAGE, run, None, summary="the self-image, rewritten after a new diary")

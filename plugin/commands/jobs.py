"""What the commands say of the background jobs: ``/mem consolidate [place]`` (consolidation now,
reporting what it did) and the line of each job in ``/mem stats``."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from ...memory.model import now_utc
from ...memory.render import quoted
from ...memory.wording import ZH, when, word
from ...scheduler import FADE, MERGE
from ..jobs.background import Jobs
from ..replies.catalogue import counted, say
from ..replies.errors import error_text, failure
from ..replies.fit import fit_lines, short
from .args import Refused
from .context import CommandContext

SHOWN_NEW = 8  # new memories listed after /mem consolidate


def run_summary(lang: str, report: Any) -> str:
    """What a consolidation did (``ConsolidationReport.summary`` in ``lang``): ``2 added, 1 updated,
    from 40 lines, 1 model calls; refused ...; failed ...``."""
    def counts(c: Any) -> str:
        return ", ".join(f"{word(lang, 'count', k)} {v}" for k, v in sorted(c.items()))
    parts = [say(lang, "run_counts", added=report.added, updated=report.updated,
                 episodes=counted(lang, "n_line", report.episodes),
                 calls=counted(lang, "n_call", report.calls))]
    if report.refused:
        parts.append(say(lang, "run_refused", counts=counts(report.refused)))
    if report.failed:
        parts.append(say(lang, "run_failed", counts=counts(report.failed))
                     + (f" ({short(report.error)})" if report.error and lang != ZH else ""))
    if report.skipped_batches:
        parts.append(say(lang, "run_skipped", n=report.skipped_batches))
    return say(lang, "run_sep").join(parts)


async def consolidate(ctx: CommandContext, args: str) -> str:
    jobs = ctx.service.jobs
    if jobs is None:
        return ctx.say("jobs_off")
    place = args.strip()
    places = None if not place else [ctx.audience.place if place == "here" else place]
    if places and places[0] != ctx.audience.place and not ctx.audience.owner_private:
        # another chat is named (and counted) only from the owner's private chat: its lines are its own
        raise Refused("no_place_here", place=repr(short(places[0])))
    mem = await ctx.service.memory()
    if places and not await mem.has_place(places[0]):  # a typo: not 'Consolidated ...' as if done
        return ctx.say("no_lines_place", place=repr(short(places[0])), here=ctx.audience.place)
    # outside the owner's private chat only this place, and only what it may see is counted: a memory
    # drawn from its lines for the owner is neither shown nor counted there
    mine = ctx.audience.owner_private
    report = await jobs.consolidate_now(places or (None if mine else [ctx.audience.place]))
    found = await mem.memories(report.new_ids if not mine else report.new_ids[-50:])
    shown = [m for m in found.values() if ctx.sees_memory(m.scope)]
    hidden = len(found) - len(shown)
    if not mine:
        report = replace(report, added=report.added - hidden)
    summary = run_summary(ctx.lang, report)
    lines = [ctx.say("consolidated_place", place=places[0], summary=summary) if places
             else ctx.say("consolidated", summary=summary)]
    if report.failed and not report.skipped_batches:
        lines.append(ctx.say("kept_for_later"))
    elif not report.calls and not await ctx.service.providers.resolve_chat(None):  # nothing was due here
        why = ctx.service.providers.missing_chat_error()
        lines.append(ctx.say("no_chat_model", why=error_text(ctx.lang, why)))
    lines += [f"m{m.id} [{m.scope}] {quoted(short(m.text))}" for m in shown[-SHOWN_NEW:]]
    if hidden and mine:
        lines.append(ctx.say("new_elsewhere", n=hidden))
    return fit_lines(lines, ctx.lang, ctx.say("rest_dashboard"))


async def job_lines(jobs: Jobs, lang: str, *, counts: bool = True) -> list[str]:
    """One line per job for ``/mem stats``, in the reply's language (``counts``: with what the jobs
    did over every place, for the owner's private chat only)."""
    status = await jobs.status()
    return [job_line(name, record, jobs.service.tz, lang, counts=counts) for name, record in status.items()]


def _counts(stats: dict[str, int], prefix: str, lang: str) -> str:
    items = sorted((k[len(prefix):], v) for k, v in stats.items() if k.startswith(prefix) and v)
    return ", ".join(f"{word(lang, 'count', k)} {v}" for k, v in items)


def job_line(name: str, record: dict[str, Any], tz: Any, lang: str = "en", *, counts: bool = True) -> str:
    """One job: its last run, what it did, and its failures and refusals in total (said in ``lang``;
    without ``counts`` only when it ran, how, and which kinds of calls failed: what it did, and how
    often, counts every place's lines and memories)."""
    started = record.get("last_started")
    job = word(lang, "job", name)
    if started is None:
        return say(lang, "job_never", name=job)
    at = when(datetime.fromtimestamp(started, timezone.utc), now_utc(), tz, lang)
    status = word(lang, "run", record.get("status", "?"))
    if record.get("error"):
        status += ("：" if lang == ZH else ": ") + failure(lang, record["error"])
    last, total = record.get("stats", {}), record.get("totals", {})
    parts = [say(lang, "job_last", name=job, when=at, status=status,
                 runs=counted(lang, "n_run", record.get("runs", 0)), failures=record.get("failures", 0))]
    failed_kinds = sorted(word(lang, "count", k[len("failed."):]) for k, v in total.items()
                          if k.startswith("failed.") and v)
    if not counts:  # which kinds of calls failed (a provider to fix), not how many: that counts batches
        return say(lang, "run_sep").join(
            [parts[0], *([say(lang, "job_failed", counts=", ".join(failed_kinds))] if failed_kinds else [])])
    if "added" in total or "updated" in total:
        parts.append(say(lang, "job_added", added=last.get("added", 0), updated=last.get("updated", 0),
                         all_added=total.get("added", 0), all_updated=total.get("updated", 0),
                         calls=counted(lang, "n_call", total.get("calls", 0))))
    refused, failed = _counts(total, "refused.", lang), _counts(total, "failed.", lang)
    if refused:
        parts.append(say(lang, "job_refused", counts=refused))
    if failed:
        parts.append(say(lang, "job_failed", counts=failed))
    if total.get("skipped_batches"):
        parts.append(say(lang, "job_skipped", n=total["skipped_batches"]))
    if name in SHOWN:
        said = [(k, word(lang, "count", k)) for k in SHOWN[name]]
        parts.append(say(lang, "job_shown", last=", ".join(f"{w} {last.get(k, 0)}" for k, w in said),
                         total=", ".join(f"{w} {total.get(k, 0)}" for k, w in said)))
    return say(lang, "run_sep").join(parts)


SHOWN = {FADE: ("archived", "protected"), MERGE: ("merged", "kept_apart", "failed")}  # counts in /mem stats

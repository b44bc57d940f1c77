"""Every ``/mem`` subcommand on one page, in the order ``/mem help`` lists them: its name, its usage
line and summary (keys of the reply catalogue) and the function that answers it. A new subcommand is
one line here; nothing registers itself on import."""

from __future__ import annotations

from . import backup, bot_self, dashboard, exports, forgets, jobs, memories, ranking
from .dispatch import Registry, Subcommand

COMMANDS = Registry([
    Subcommand("help", "usage_help", "sub_help", memories.help_),
    Subcommand("stats", "usage_stats", "sub_stats", memories.stats),
    Subcommand("recall", "usage_recall", "sub_recall", memories.recall),
    Subcommand("why", "usage_why", "sub_why", memories.why),
    Subcommand("remember", "usage_remember", "sub_remember", memories.remember),
    Subcommand("show", "usage_show", "sub_show", memories.show),
    Subcommand("forget", "usage_forget", "sub_forget", forgets.forget),
    Subcommand("scope", "usage_scope", "sub_scope", memories.scope),
    Subcommand("list", "usage_list", "sub_list", memories.list_),
    Subcommand(forgets.FORGET_PERSON, "usage_forget-person", "sub_forget-person", forgets.forget_person),
    Subcommand(forgets.FORGET_PLACE, "usage_forget-place", "sub_forget-place", forgets.forget_place),
    Subcommand("confirm", "usage_confirm", "sub_confirm", forgets.confirm),
    Subcommand("proposals", "usage_proposals", "sub_proposals", bot_self.proposals),
    Subcommand("approve", "usage_approve", "sub_approve", bot_self.approve),
    Subcommand("reject", "usage_reject", "sub_reject", bot_self.reject),
    Subcommand("diary", "usage_diary", "sub_diary", bot_self.diary),
    Subcommand("dashboard", "usage_dashboard", "sub_dashboard", dashboard.dashboard),
    Subcommand("export", "usage_export", "sub_export", exports.export),
    Subcommand("consolidate", "usage_consolidate", "sub_consolidate", jobs.consolidate),
    Subcommand("backup", "usage_backup", "sub_backup", backup.backup),
    Subcommand("ranking", "usage_ranking", "sub_ranking", ranking.ranking),
    Subcommand("good", "usage_good", "sub_good", ranking.good),
    Subcommand("bad", "usage_bad", "sub_bad", ranking.bad),
])

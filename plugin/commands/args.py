"""Reading a ``/mem`` line's arguments: the subcommand and the rest, ids, and ``/mem list``'s options;
a wrong argument raises ``UsageError`` (the reply is then what is wrong and the subcommand's usage
line, in the reply's language: ``replies.catalogue``)."""

from __future__ import annotations

import re

from ...memory.errors import InvalidScopeError
from ...memory.model import MEMORY_KINDS
from ...memory.scopes import parse_scope
from ...memory.wording import ZH, Said, word
from ..events import COMMAND
from ..replies.catalogue import TEXTS
from ..replies.fit import short


class UsageError(Said):
    """The arguments do not fit the subcommand (the key says why, or none); the reply is its usage line."""

    texts = TEXTS


class Refused(Said):
    """The command cannot be done here (no such memory here, a scope this chat does not see...); the
    reply is ``Engram: <why>``."""

    texts = TEXTS


def kinds_said(lang: str) -> str:
    """The kinds ``--kind`` takes, as the reply's language lists them (``fact（事实）、...`` in Chinese)."""
    if lang != ZH:
        return ", ".join(MEMORY_KINDS)
    return "、".join(f"{k}（{word(lang, 'kind', k)}）" for k in MEMORY_KINDS)


# "--scope" as a Chinese input method ("——scope"), a phone's smart punctuation ("—scope") or a
# full-width keyboard ("－－scope") writes it; only before an option's name, so a dash in a text stays
OPTION_DASHES = re.compile(r"(?<!\S)(?:——|—|–|－－|--)"
                           r"(?=(?:scope|page|kind|archived|with-sources|keep-lines|force)\b)")


def split_command(text: str) -> tuple[str, str]:
    """``"/mem recall tea"`` -> ``("recall", "tea")``."""
    words = str(text or "").strip().lstrip("/／").split(None, 1)
    if words and words[0] == COMMAND:
        words = words[1].split(None, 1) if len(words) > 1 else []
    return (words[0].lower(), words[1].strip() if len(words) > 1 else "") if words else ("", "")


def parse_id(arg: str) -> int:
    """A memory id as ``12`` or ``m12``."""
    m = re.fullmatch(r"[mM]?(\d{1,18})", arg.strip())
    if not m:
        raise UsageError("arg_not_id", arg=repr(short(arg))) if arg.strip() else UsageError()
    return int(m.group(1))


def parse_key(arg: str) -> tuple[str, int]:
    """A memory (``12``, ``m12``) or an episode (``e3``) as ``("m", 12)`` / ``("e", 3)``."""
    m = re.fullmatch(r"([eE])(\d{1,18})", arg.strip())
    return ("e", int(m.group(2))) if m else ("m", parse_id(arg))


def list_args(args: str) -> tuple[str, str | None, int]:
    """``/mem list`` arguments: the filter words, ``--kind`` and ``--page``."""
    kind = page = None
    rest = []
    tokens = args.split()
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("--kind", "--page"):
            if i + 1 >= len(tokens):
                raise UsageError("arg_needs_value", option=t)
            value = tokens[i + 1]
            if t == "--kind":
                if value not in MEMORY_KINDS:
                    raise UsageError("arg_kind", kind=repr(short(value)), kinds=kinds_said)
                kind = value
            else:
                if not re.fullmatch(r"[0-9]{1,9}", value) or int(value) < 1:  # not '²', not 10**20
                    raise UsageError("arg_page", value=repr(short(value)))
                page = int(value)
            i += 2
        else:
            rest.append(t)
            i += 1
    return " ".join(rest), kind, page or 1


def scope_arg(text: str) -> str:
    """A scope as given to ``--scope`` or ``/mem scope``, normalised; ``Refused`` naming what is allowed."""
    try:
        return parse_scope(text)
    except InvalidScopeError:
        raise Refused("arg_scope", scope=repr(short(text))) from None

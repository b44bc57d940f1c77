"""Query parameters, checked: a bad one is a :class:`BadParam` whose message the user sees (400)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..memory import MEMORY_KINDS, MEMORY_STATUSES, InvalidScopeError, parse_scope
from ..memory.wording import Said
from .i18n import MESSAGES, param

MAX_PAGE_SIZE = 200
DEFAULT_PAGE_SIZE = 50
MAX_PAGE = 1_000_000
MAX_PARAM = 500  # characters of any text parameter


@dataclass(frozen=True)
class MemoryFilter:
    """Which memories a page lists; empty fields do not filter."""

    scope: str = ""
    kind: str = ""
    status: str = ""
    place: str = ""  # learned there: scoped to it or derived from its episodes
    person: str = ""  # among the memory's subjects
    text: str = ""  # a substring of the text

    def store_args(self) -> dict[str, Any]:
        """The filters as ``Store.list_memories`` takes them (None: no filter; any status)."""
        args: dict[str, Any] = {k: v or None for k, v in asdict(self).items() if k != "person"}
        args["people"] = (self.person,) if self.person else ()
        return args


class BadParam(Said, ValueError):
    """A parameter the dashboard cannot use; the message says which and why (``text(lang)``)."""

    texts = MESSAGES

    def __init__(self, key: str, **values: object) -> None:  # mypy sees the core's Said as Any from here
        super().__init__(key, **values)


def text(params: Mapping[str, str], name: str, default: str = "") -> str:
    value = params.get(name, default).strip()
    if len(value) > MAX_PARAM:
        raise BadParam("too_long", name=param(name), n=MAX_PARAM)
    if "\x00" in value:
        raise BadParam("nul", name=param(name))
    return value


def whole(params: Mapping[str, str], name: str, default: int) -> int:
    raw = params.get(name, "").strip()
    if not raw:
        return default
    if not re.fullmatch(r"-?\d{1,18}", raw):
        raise BadParam("not_whole", name=param(name), raw=raw[:40])
    return int(raw)


def paging(params: Mapping[str, str], default_size: int = DEFAULT_PAGE_SIZE) -> tuple[int, int]:
    """(page, size): page from 1, size from 1 (more than ``MAX_PAGE_SIZE`` is capped)."""
    page, size = whole(params, "page", 1), whole(params, "size", default_size)
    if not 1 <= page <= MAX_PAGE:
        raise BadParam("page_range", n=MAX_PAGE)
    if size < 1:
        raise BadParam("size_range", n=MAX_PAGE_SIZE)
    return page, min(size, MAX_PAGE_SIZE)


def memory_id(raw: str) -> int:
    """A memory id as ``12`` or ``m12``."""
    m = re.fullmatch(r"[mM]?(\d{1,18})", raw.strip())
    if not m:
        raise BadParam("not_memory_id", raw=raw[:40])
    return int(m.group(1))


def flag(params: Mapping[str, str], name: str) -> bool:
    raw = params.get(name, "").strip().lower()
    if raw in ("", "0", "false", "off", "no"):
        return False
    if raw in ("1", "true", "on", "yes"):
        return True
    raise BadParam("not_flag", name=param(name))


def memory_filter(params: Mapping[str, str]) -> MemoryFilter:
    """The memories page's filters, each checked against what exists."""
    scope, kind, status = text(params, "scope"), text(params, "kind"), text(params, "status")
    if scope:
        try:
            scope = parse_scope(scope)
        except InvalidScopeError as e:
            raise BadParam("bad_scope", detail=str(e), raw=scope[:80]) from e
    if kind and kind not in MEMORY_KINDS:
        raise BadParam("one_of", name=param("kind"), options=", ".join(MEMORY_KINDS))
    if status and status not in MEMORY_STATUSES:
        raise BadParam("one_of", name=param("status"), options=", ".join(MEMORY_STATUSES))
    return MemoryFilter(
        scope=scope,
        kind=kind,
        status=status,
        place=text(params, "place"),
        person=text(params, "person"),
        text=text(params, "q"),
    )

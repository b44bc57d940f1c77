"""The core's small error hierarchy.

An error a person may read carries a stable ``code`` and the ``values`` it names (``raise
StoreError(f"{path} is ...", code="store_not_sqlite", path=path)``): the message is the English, and
a reply in another language says the same from its own catalogue by the code (the plugin's
``reply_errors``); the core itself knows no language but English.
"""


class EngramError(Exception):
    """Base class of every error the core raises on purpose; ``code`` (``""``: none) and ``values``
    say what went wrong for a translation."""

    code = ""

    def __init__(self, *args: object, code: str = "", **values: object):
        super().__init__(*args)
        if code:
            self.code = code
        self.values = values


class UnknownIdError(EngramError, KeyError):
    """An id names no episode or memory (or one that was forgotten)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown id"


class InvalidScopeError(EngramError, ValueError):
    """A scope string is not one of public, self, owner, space:<space>."""


class InvalidInputError(EngramError, ValueError):
    """An argument is of the wrong kind or out of bounds."""


class StoreError(EngramError):
    """The store file cannot be used (not SQLite, newer schema, ...); it was left untouched."""


class StoreUnwritable(StoreError):
    """The store cannot be written now (a full disk, a read-only folder, a disk error); nothing of
    the write was stored, and the same write may be tried again once it can be."""


class StoreDamaged(StoreError):
    """The check in the background found the open store damaged: nothing more is written to it."""

    code = "store_damaged_open"
    final = True  # no retry can succeed (the background indexer stops instead of retrying)


class ErasedMeanwhile(EngramError):
    """What a write was drawn from was hard-forgotten meanwhile; nothing was written."""


class MovedMeanwhile(EngramError):
    """Another writer (the command line beside the bot) moved a cursor this write started from: it
    applied the same work meanwhile; nothing was written."""


class EmbeddingError(EngramError):
    """An embedder failed or answered with the wrong shape."""


class ChatError(EngramError):
    """A chat model call failed, timed out or answered nothing usable; nothing was changed.

    ``transient``: the endpoint itself is unavailable (connection, HTTP 429/5xx) rather than the
    answer being bad; consolidation waits for it instead of counting it against the batch.
    """

    def __init__(self, message: str, *, transient: bool = False, code: str = "", **values: object):
        super().__init__(message, code=code, **values)
        self.transient = transient


class ChatTimeout(ChatError):
    """A chat model call took longer than its timeout."""



class BundleError(InvalidInputError):
    """A soul bundle cannot be read or written as it is (``memory/bundle``): the message names the
    file and line; nothing was changed."""

    code = "bundle_invalid"

"""The soul bundle (issue 30; the format is ``SPEC.md`` at the repository root): everything Engram
knows as plain UTF-8 text that people can read, diff and keep in git, and back.

``export_bundle`` writes one (the whole store, or what one place may see, decided by
``scopes.visibility`` as everywhere); ``import_bundle`` reads one whole, checks all of it before it
writes anything, then writes it in one transaction (into an empty store, or ``merge``d into one that
is not, idempotently). ``format`` is the file layout and each record's line; ``exports`` remembers
the bundles written from a store, so a forget can say which of them still hold what it erased.
Vectors are an index, not memory: they are not exported, and an imported store embeds again.
"""

from .export import ExportReport, export_bundle
from .export_log import known_exports
from .format import FORMAT_VERSION
from .importing import ImportReport, import_bundle, read_bundle

__all__ = ["FORMAT_VERSION", "ExportReport", "ImportReport", "export_bundle", "import_bundle",
           "known_exports", "read_bundle"]

"""Freed heap memory given back to the operating system after loading the indexes at open.

Loading 100k items' vectors reads them page by page (blobs, joined, decoded, normalised): glibc's
allocator keeps most of what those pages freed (~36 MB at 100k items, 384 dimensions) in its free
lists, counted in the process's RSS until something reuses it. ``malloc_trim(0)`` returns those free
pages once the load is done; elsewhere (another C library, another system) this does nothing.
"""

from __future__ import annotations

import ctypes
import sys


def release_free_heap() -> bool:
    """Give the allocator's free pages back to the system; False where that cannot be asked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        trim = ctypes.CDLL(None).malloc_trim  # glibc only (musl has none)
    except (OSError, AttributeError):
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    trim(0)
    return True

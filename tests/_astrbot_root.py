"""AstrBot's root folder for a test run: a fresh temp dir (unless one is set), removed at exit."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile


def use_temp_astrbot_root(prefix: str) -> None:
    """Set ``$ASTRBOT_ROOT`` before astrbot is imported (it creates ``data/`` there on import)."""
    if "ASTRBOT_ROOT" not in os.environ:
        root = tempfile.mkdtemp(prefix=prefix)
        os.environ["ASTRBOT_ROOT"] = root
        atexit.register(shutil.rmtree, root, True)
    os.environ.setdefault("ASTRBOT_DISABLE_METRICS", "1")

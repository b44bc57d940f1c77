"""``python -m astrbot_plugin_engram.memory``: the command line (see cli.py)."""

import sys

from .cli.main import main

if __name__ == "__main__":  # not again in a worker process started by spawn (a large import's words)
    sys.exit(main())

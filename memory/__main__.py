"""``python -m astrbot_plugin_engram.memory``: the command line (see cli.py)."""

import sys

from .cli.main import main

sys.exit(main())

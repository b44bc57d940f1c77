"""The command line: ``python -m astrbot_plugin_engram.memory`` (``main``), the self's commands
(``self_commands``) and the demo (``demo``)."""

"""The memory's tools for models and agents: their checks, scope rules and answers (``calls.py``, which
the plugin's model tools use too) and the MCP server offering them to any MCP client (``mcp_server.py``)."""

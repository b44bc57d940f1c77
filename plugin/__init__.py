"""The AstrBot adapter: events to episodes and audiences, injection, commands, tools, providers."""

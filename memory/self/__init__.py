"""The bot's self: its identity files and the owner's decisions on proposals, the diary, the
self-image, the inner state, the end of a day that writes them, and the private-detail check."""

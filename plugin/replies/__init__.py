"""What the bot says to the owner, in English or Chinese: one catalogue of texts (``catalogue``), the
core's errors (``errors``), which language a reply is in (``language``), and what fits one chat
message (``fit``)."""

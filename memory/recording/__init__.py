"""Recording: episodes written by group commit (``recorder``), and the journal of messages kept on disk
while the store could not take them (``journal``)."""

"""Metabolism: what happens to memories as time passes and on request — strength and fading
(``strength``), merging near-duplicates (``merging``, ``dedup``), hard forgetting (``forgetting``)."""

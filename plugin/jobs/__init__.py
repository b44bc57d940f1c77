"""The plugin's background jobs on the scheduler (``scheduler/``): consolidation, fading, merging and
the weekly check (``background``), the diary and self-image (``self_jobs``), and the one turn they and
the forgets take (``days_lock``). Each tells the service it runs (``EngramService.attach_jobs``,
``attach_self_jobs``): the one place the service learns of them."""

"""What AstrBot's hooks hand over: messages and replies queued for recording (``record_queue``), the
memory block added to a model request (``inject``, its query in ``query``), and a reply told apart from
the notes it copied (``echo``). Imports nothing itself: benchmarks read ``query`` without AstrBot."""

"""What the model is asked and what it answers: the templates (``*.<lang>.md`` here), their loader, and
the reading of its JSON answers (``answers``)."""

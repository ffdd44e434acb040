"""Score a system's predictions on a release: ``answerable evaluate``."""

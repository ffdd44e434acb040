"""annotation stage."""

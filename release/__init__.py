"""release stage."""

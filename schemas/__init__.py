"""schemas stage."""

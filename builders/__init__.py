"""builders stage."""

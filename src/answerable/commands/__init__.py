"""CLI commands that live in their own module; ``cli.py`` registers each in one line."""

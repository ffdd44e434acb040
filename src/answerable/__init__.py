"""answerable: build and curate text-to-SQL benchmarks."""

__version__ = "0.1.0"

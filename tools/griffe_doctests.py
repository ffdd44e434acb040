"""A griffe extension: doctest examples in docstrings shown as Python code blocks.

The package's docstrings write their examples as plain doctests (``>>> ...`` lines and
their output), which the test suite runs. Markdown would read them as prose; this wraps
each run of them in a ``pycon`` fence before mkdocstrings renders the docstring.
"""

from __future__ import annotations

import griffe


def fence_doctests(text: str) -> str:
    """``text`` with every block of doctest lines (a ``>>>`` line up to the next blank
    line) inside a fenced code block.

    >>> print(fence_doctests("Add.\\n\\n>>> 1 + 1\\n2\\n"))
    Add.
    <BLANKLINE>
    ```pycon
    >>> 1 + 1
    2
    ```
    """
    out, inside = [], False
    for line in text.splitlines():
        if not inside and line.lstrip().startswith(">>>"):
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence the doctests of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)

"""Names that become parts of paths (db_id, dataset, version, ids) must stay names.

A ``db_id`` of ``../../outside/secret`` would make the build open a file outside its
source folder and ship that name in a release; a control character would reach
terminals and file listings. :func:`name_problem` says which rule a name breaks.
"""

from __future__ import annotations

import re
from pathlib import Path

from answerable.kernel.errors import ConfigError

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DRIVE = re.compile(r"^[A-Za-z]:")


def name_problem(value: object) -> str | None:
    """The rule ``value`` breaks as one part of a path, or None when it is safe.

    >>> name_problem("concert_singer") is None
    True
    >>> name_problem("../../outside/secret")
    'has a path separator (/ or \\\\)'
    >>> name_problem("..")
    'is or contains ..'
    """
    if not isinstance(value, str) or not value:
        return "is empty"
    if value == ".":
        return "is . (the folder itself)"
    if _CONTROL.search(value):
        return "has a control character"
    if value[0] in "/\\" or _DRIVE.match(value):
        return "is an absolute path"
    if "/" in value or "\\" in value:
        return "has a path separator (/ or \\)"
    if ".." in value:
        return "is or contains .."
    return None


DB_ID_PATTERN = r"^(?:\.?[^./\\\u0000-\u001f\u007f-\u009f])+\.?$"
"""Most of :func:`name_problem`'s rules as one regular expression without look-around
(polars checks it too), for the JSON Schemas' ``db_id``: no path separator, no control
character, no ``..``, not ``.`` alone (a drive letter is refused by the builder only)."""


def inside(root: str | Path, relative: str | Path, what: str) -> Path:
    """``root / relative`` resolved (symlinks followed), refused with a
    :class:`~answerable.kernel.errors.ConfigError` naming ``what`` when it lands outside ``root``.

    >>> inside("/srv/out", "a/b.json", "export file")
    PosixPath('/srv/out/a/b.json')
    >>> inside("/srv/out", "../b.json", "export file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    answerable.kernel.errors.ConfigError: ../b.json: export file: is outside /srv/out (fix: ...
    """
    base = Path(root).resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise ConfigError(
            str(relative), what, f"is outside {base}", fix="use a plain name inside that folder"
        )
    return path

"""Names that become parts of paths (db_id, dataset, version, ids) must stay names.

A ``db_id`` of ``../../outside/secret`` would make the build open a file outside its
source folder and ship that name in a release; a control character would reach
terminals and file listings. :func:`name_problem` says which rule a name breaks.
"""

from __future__ import annotations

import re

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
    if _CONTROL.search(value):
        return "has a control character"
    if value[0] in "/\\" or _DRIVE.match(value):
        return "is an absolute path"
    if "/" in value or "\\" in value:
        return "has a path separator (/ or \\)"
    if ".." in value:
        return "is or contains .."
    return None

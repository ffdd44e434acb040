"""Untrusted text made inert where it lands: terminals, spreadsheets and logs.

Questions, comments and annotator names come from other people's files; a model
server's error body comes from the network. None of it may drive a terminal (escape
sequences), run in a spreadsheet (formulas), or carry a secret to stderr.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import quote, unquote, urlsplit, urlunsplit

# C0 and C1 controls, DEL, zero-width marks and the bidirectional overrides that can
# make text read differently from what it is.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_BUT_NEWLINE = re.compile(
    r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]"
)
# the characters of Unicode category Cc but tab and newline
_UNREADABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_QUOTE = "'"
_SECRETS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"(authorization[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+|basic\s+)?[^\s\"',}]+",
        r"(bearer\s+)[A-Za-z0-9._~+/=-]{6,}",
        r"()\bsk-[A-Za-z0-9_-]{6,}",
        r"((?:api[_-]?key|token|secret|password)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+",
    )
)
BODY_CHARS = 300
_SHORTEST_SECRET = 4  # shorter values would mask ordinary words
_known_secrets: set[str] = set()


def register_secret(value: object) -> None:
    """Remember one configured secret (a key, a password) so that :func:`mask_secrets`
    hides it by value wherever it shows: as written, URL-encoded and base64-encoded (as
    an HTTP ``Basic`` header carries ``user:password``)."""
    if not isinstance(value, str) or len(value) < _SHORTEST_SECRET:
        return
    encoded = base64.b64encode(value.encode()).decode()
    _known_secrets.update({value, quote(value, safe=""), encoded, encoded.rstrip("=")})


def register_url(url: object) -> None:
    """Remember the password of ``url``'s userinfo, and ``user:password`` (see
    :func:`register_secret`)."""
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return
    if parts.password:
        register_secret(unquote(parts.password))
        register_secret(f"{unquote(parts.username or '')}:{unquote(parts.password)}")


def mask_secrets(text: str) -> str:
    """``text`` with every registered secret replaced by ``***`` (longest first).

    >>> register_secret("hunter2-key")
    >>> mask_secrets("Invalid key hunter2-key")
    'Invalid key ***'
    """
    for secret in sorted(_known_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "***")
    return text


def control_character(text: str) -> str | None:
    """The first control character of ``text`` (tab and newline aside) as ``U+001B``,
    else None: NUL, ESC and the like are invisible or rewrite a terminal, so a question
    that holds one is rejected (source, template-expanded and drafted questions alike).

    >>> control_character("How many? \x1b[31m")
    'U+001B'
    """
    found = _UNREADABLE.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def _escape(match: re.Match) -> str:
    char = match.group()
    if char in "\n\t\r":
        return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, keep_newlines: bool = False) -> str:
    """``text`` with every control character written out (``\\x1b``), so it only shows.

    >>> printable("fine\\x1b]0;owned\\x07 text")
    'fine\\\\x1b]0;owned\\\\x07 text'
    """
    pattern = _CONTROL_BUT_NEWLINE if keep_newlines else _CONTROL
    return pattern.sub(_escape, str(text))


def csv_cell(value: object) -> object:
    """A cell a spreadsheet shows as text: one that would start a formula gets a ``'``.

    A cell already starting with ``'`` before such a character (or another ``'``) gets
    one too, so that :func:`csv_value` gives back exactly what was written.

    >>> csv_cell("=HYPERLINK(\\"http://x\\")"), csv_cell("plain"), csv_cell(3)
    ('\\'=HYPERLINK("http://x")', 'plain', 3)
    """
    if not isinstance(value, str) or not value:
        return value
    if value.startswith(FORMULA_STARTS) or (
        value[0] == _QUOTE and value[1:2] and value[1:2] in (*FORMULA_STARTS, _QUOTE)
    ):
        return _QUOTE + value
    return value


def csv_value(cell: object) -> object:
    """The value :func:`csv_cell` wrote: the guarding ``'`` taken off again."""
    if isinstance(cell, str) and cell[:1] == _QUOTE and cell[1:2] in (*FORMULA_STARTS, _QUOTE):
        return cell[1:] if cell[1:2] else cell
    return cell


def redact_url(url: object) -> str:
    """``url`` with any ``user:password@`` replaced by ``***@``.

    >>> redact_url("http://me:pw@localhost:8000/v1")
    'http://***@localhost:8000/v1'
    """
    text = mask_secrets(str(url))
    try:
        parts = urlsplit(text)
    except ValueError:
        return printable(text)
    if "@" not in parts.netloc:
        return printable(text)
    host = parts.netloc.rsplit("@", 1)[1]
    return printable(urlunsplit(parts._replace(netloc=f"***@{host}")))


def redact_body(body: object, limit: int = BODY_CHARS) -> str:
    """A remote error text safe to print: keys and Authorization values hidden, control
    characters written out, cut to ``limit`` characters.

    >>> redact_body('{"error": "bad", "echo": "Authorization: Bearer sk-abcdef123456"}')
    '{"error": "bad", "echo": "Authorization: ***"}'
    """
    text = mask_secrets(str(body))
    for secret in _SECRETS:
        text = secret.sub(lambda match: match.group(1) + "***", text)
    text = printable(text)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more)"

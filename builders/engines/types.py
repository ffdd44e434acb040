"""Column types across engines: one mapping from the kind of values a column holds to
each engine's type, and from each engine's types back to a SQLite declared type.

Every copy between engines goes through here: SQLite -> DuckDB (the cross-check's copies
and the demo's DuckDB files), SQLite -> PostgreSQL (``postgres_tables.load_sqlite``),
DuckDB or PostgreSQL -> SQLite (a release's exported files, the counterfactual step's
SQLite twin) and the columns an edit adds on another engine.

SQLite keeps a kind per value, whatever the column declares; the other engines keep one
type per column. A copy gives each column the type of the values it actually holds, so
each value comes back as SQLite gave it:

=====================  ==========  ===================  ==========
values held            DuckDB      PostgreSQL           SQLite
=====================  ==========  ===================  ==========
integers               BIGINT      bigint               INTEGER
integers and reals     DOUBLE      double precision     REAL
text                   VARCHAR     text                 TEXT
blobs                  BLOB        bytea                BLOB
nothing but NULL       by the declared type's affinity (:func:`affinity_kind`)
a mix with text        None: the caller decides (DuckDB keeps text, PostgreSQL refuses)
=====================  ==========  ===================  ==========

ISO dates stored as text stay text: gold SQL written for SQLite compares them as strings.
Each engine's module keeps its own column of the table (``COLUMN_TYPES``, by kind), so
an engine that loads SQLite copies adds no line here.
"""

from __future__ import annotations

import re

from answerable.kernel.errors import SQLError

INTEGER, REAL, TEXT, BLOB = "integer", "real", "text", "blob"  # SQLite's storage kinds


_INTEGERS = ("SMALLINT", "INTEGER", "BIGINT", "TINYINT", "HUGEINT", "INT", "INT2", "INT4")
_INTEGERS += ("INT8", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")
# An engine's type name (upper-cased, without its (precision, scale)) -> the SQLite
# declared type a file exported from that engine gives the column. Types missing here
# (arrays, JSON, intervals, structs, time zones ...) have no faithful SQLite form.
SQLITE_DECLARED = {
    **dict.fromkeys(_INTEGERS, "INTEGER"),
    **dict.fromkeys(("REAL", "DOUBLE PRECISION", "DOUBLE", "FLOAT", "FLOAT4", "FLOAT8"), "REAL"),
    **dict.fromkeys(("NUMERIC", "DECIMAL"), "NUMERIC"),
    **dict.fromkeys(
        ("TEXT", "VARCHAR", "CHARACTER VARYING", "CHARACTER", "CHAR", "BPCHAR", "STRING"), "TEXT"
    ),
    **dict.fromkeys(("BYTEA", "BLOB"), "BLOB"),
    "BOOLEAN": "BOOLEAN",
    "DATE": "DATE",
    **dict.fromkeys(("TIMESTAMP", "TIMESTAMP WITHOUT TIME ZONE"), "TIMESTAMP"),
}


def affinity_kind(declared: str) -> str:
    """The kind SQLite's affinity rules give a column of NULLs declared ``declared``
    (text where SQLite's affinity is NUMERIC but the words name no number).

    >>> affinity_kind("VARCHAR(20)"), affinity_kind("INT"), affinity_kind("FLOAT")
    ('text', 'integer', 'real')
    """
    low = declared.lower()
    if "int" in low:
        return INTEGER
    if any(word in low for word in ("char", "clob", "text")) or not low:
        return TEXT
    if "blob" in low:
        return BLOB
    if any(word in low for word in ("real", "floa", "doub", "numeric", "decimal")):
        return REAL
    return TEXT  # DATE, DATETIME, BOOLEAN ...: SQLite keeps such values as text


def value_kind(declared: str, storage: set[str] | frozenset[str]) -> str | None:
    """The kind a column holding values of SQLite storage classes ``storage`` gets
    (``typeof()`` names; ``null`` ignored); None for a mix no single type holds.

    >>> value_kind("NUMERIC", {"integer", "null"}), value_kind("", {"integer", "real"})
    ('integer', 'real')
    """
    kinds = set(storage) - {"null"}
    if not kinds:
        return affinity_kind(declared)
    if kinds == {INTEGER}:
        return INTEGER
    if kinds <= {INTEGER, REAL}:
        return REAL
    if len(kinds) == 1:
        return next(iter(kinds))
    return None


def sqlite_declared(engine_type_name: str) -> str | None:
    """The SQLite declared type a column of ``engine_type_name`` is exported with, or
    None when SQLite has no faithful counterpart.

    >>> sqlite_declared("DECIMAL(10,2)"), sqlite_declared("character varying")
    ('NUMERIC', 'TEXT')
    """
    bare = re.sub(r"\(.*\)", "", engine_type_name).strip().upper()
    return SQLITE_DECLARED.get(bare)


def sqlite_value(value):
    """``value`` (from a DuckDB or PostgreSQL client) as a SQLite file stores it:
    numbers, text and bytes as they are, ``Decimal`` as its exact text (NUMERIC affinity
    stores it as an integer or a real), dates as ISO text, booleans as 0/1."""
    from datetime import date, datetime
    from decimal import Decimal

    if value is None or isinstance(value, int | float | str | bytes):
        return value  # bool is an int: stored 0/1
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise SQLError("unsupported-type", f"a value of type {type(value).__name__}")

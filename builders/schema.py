"""What a database looks like: tables, columns, keys.

One small model serves SQLite files (read through ``PRAGMA``), Spider's ``tables.json``
(schema-only sources) and sqlglot (``to_sqlglot`` gives the mapping that
``sqlglot.optimizer.qualify`` wants).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from answerable.builders import sqlite_files


@dataclass(frozen=True)
class Column:
    """One column: its name as written in the database and its declared type."""

    name: str
    type: str = ""


@dataclass
class Table:
    """One table with its columns, primary key and foreign keys.

    ``foreign_keys`` holds ``(column, other_table, other_column)`` triples.
    """

    name: str
    columns: list[Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    foreign_keys: list[tuple[str, str, str]] = field(default_factory=list)

    def column(self, name: str) -> Column | None:
        """The column called ``name`` (case-insensitive), or None."""
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)


@dataclass
class DatabaseSchema:
    """The schema of one database, keyed by ``db_id``."""

    db_id: str
    tables: list[Table] = field(default_factory=list)

    def table(self, name: str) -> Table | None:
        """The table called ``name`` (case-insensitive), or None."""
        low = name.lower()
        return next((t for t in self.tables if t.name.lower() == low), None)

    def to_sqlglot(self) -> dict[str, dict[str, str]]:
        """``{table: {column: type}}`` for ``sqlglot.optimizer.qualify``."""
        return {t.name: {c.name: (c.type or "TEXT") for c in t.columns} for t in self.tables}

    @classmethod
    def from_sqlite(
        cls, path: str | Path, db_id: str | None = None, base: str | Path | None = None
    ) -> DatabaseSchema:
        """Read the schema of a SQLite file without writing to it; with ``base``, of the
        delta ``path`` over its base: the base's tables and views, an edited table as
        the delta's stored definition gives it (the view showing it has no keys)."""
        path = Path(path)
        con = sqlite_files.connect(path, base)
        try:
            entries = sqlite_files.delta_entries(con) if base is not None else []
            merged = _merged_tables(entries)
            hidden = sqlite_files.own_tables(entries) if base is not None else set()
            tables = [
                merged.get(name.lower()) or _read_table(con, name)
                for name in _names(con, base is not None, hidden)
            ]
        finally:
            con.close()
        return cls(db_id or path.stem, tables)

    @classmethod
    def from_spider(cls, entry: dict) -> DatabaseSchema:
        """Build from one entry of Spider's ``tables.json``."""
        names = entry["table_names_original"]
        tables = [Table(name) for name in names]
        columns = entry["column_names_original"]
        types = entry.get("column_types", [])
        for index, (table_index, column_name) in enumerate(columns):
            if table_index >= 0:
                kind = types[index] if index < len(types) else ""
                tables[table_index].columns.append(Column(column_name, kind))
        for key in entry.get("primary_keys", []):
            for index in key if isinstance(key, list) else [key]:
                table_index, column_name = columns[index]
                tables[table_index].primary_key.append(column_name)
        for source, target in entry.get("foreign_keys", []):
            (t1, c1), (t2, c2) = columns[source], columns[target]
            tables[t1].foreign_keys.append((c1, names[t2], c2))
        return cls(entry["db_id"], tables)


def quote_identifier(name: str) -> str:
    """``name`` as a double-quoted SQL identifier, the one way every engine's DDL and
    catalog queries quote names (SQLite, DuckDB and PostgreSQL alike).

    >>> quote_identifier('a"b')
    '"a""b"'
    """
    return '"' + name.replace('"', '""') + '"'


def _names(con: sqlite3.Connection, merged: bool, hidden: set[str]) -> list[str]:
    """Table and view names, sorted; of main and the attached base when ``merged``,
    without the ``hidden`` ones (a delta's own tables)."""
    schemas = ["main", sqlite_files.BASE_SCHEMA] if merged else ["main"]
    seen: dict[str, str] = {}
    for schema in schemas:
        for (name,) in con.execute(
            f"SELECT name FROM {schema}.sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%'"
        ):
            if name.lower() not in hidden:
                seen.setdefault(name.lower(), name)  # main first: an old delta's copy wins
    return sorted(seen.values())


def _merged_tables(entries: list[sqlite_files.DeltaEntry]) -> dict[str, Table]:
    """The edited tables of a delta, read from their stored definitions."""
    names = [e.name for e in entries if e.type == "table"]
    if not names:
        return {}
    con = sqlite_files.definitions_database(entries)
    try:
        return {name.lower(): _read_table(con, name) for name in names}
    finally:
        con.close()


def _read_table(con: sqlite3.Connection, name: str) -> Table:
    info = con.execute(f"PRAGMA table_info({quote_identifier(name)})").fetchall()
    columns = [Column(row[1], row[2] or "") for row in info]
    primary = [row[1] for row in sorted(info, key=lambda r: r[5]) if row[5] > 0]
    fks = [
        (row[3], row[2], row[4])
        for row in con.execute(f"PRAGMA foreign_key_list({quote_identifier(name)})").fetchall()
    ]
    return Table(name, columns, primary, fks)

"""The schema of a PostgreSQL schema, read from the server's catalog.

Tables, views and their columns come from ``information_schema`` (a role with SELECT
sees them); keys come from ``pg_catalog.pg_constraint``, because ``information_schema``
shows a table's constraints only to roles holding more than SELECT on it, and the build
should run under a role with SELECT rights only. Column types are PostgreSQL's own names,
upper-cased as the other engines give them (``BIGINT``, ``TEXT``, ``DOUBLE PRECISION``
...); the generators judge types by words found in every engine's names (``INT``,
``DOUB``, ``TEXT``, ``DATE`` ...).
"""

from __future__ import annotations

from answerable.builders.schema import Column, DatabaseSchema, Table

_TABLES = """
SELECT table_name FROM information_schema.tables
WHERE table_schema = %s AND table_type IN ('BASE TABLE', 'VIEW')
ORDER BY table_name
"""
_COLUMNS = """
SELECT table_name, column_name, data_type FROM information_schema.columns
WHERE table_schema = %s ORDER BY table_name, ordinal_position
"""
# Key columns in key order; a foreign key's target columns in the same order.
_KEYS = """
SELECT rel.relname, c.contype, c.conname,
       ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(n, i)
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
       ref.relname,
       ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(n, i)
             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint c
JOIN pg_class rel ON rel.oid = c.conrelid
JOIN pg_namespace ns ON ns.oid = rel.relnamespace
LEFT JOIN pg_class ref ON ref.oid = c.confrelid
WHERE ns.nspname = %s AND c.contype IN ('p', 'f')
ORDER BY rel.relname, c.contype DESC, c.oid
"""


def read_schema(con, schema: str, db_id: str | None = None) -> DatabaseSchema:
    """The :class:`DatabaseSchema` of PostgreSQL schema ``schema`` (tables sorted by name).

    ``con`` is a psycopg 3 connection. Only tables the role may see are listed.
    """
    tables = {name: Table(name) for (name,) in con.execute(_TABLES, (schema,))}
    for table, column, kind in con.execute(_COLUMNS, (schema,)):
        if table in tables:
            tables[table].columns.append(Column(column, kind.upper()))
    for table, kind, _name, columns, target, target_columns in con.execute(_KEYS, (schema,)):
        if table not in tables:
            continue
        if kind == "p":
            tables[table].primary_key = list(columns)
        else:
            tables[table].foreign_keys += list(
                zip(columns, [target] * len(columns), target_columns, strict=True)
            )
    return DatabaseSchema(db_id or schema, list(tables.values()))

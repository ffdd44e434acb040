"""Small sqlglot builders for the names an edit works on, always quoted.

A table or column name comes from the database, so it is quoted as an identifier and
never pasted into SQL text; values go in as placeholders.

>>> from sqlglot import exp
>>> exp.select(column("Unit Price", "t")).from_(table("Track")).sql("sqlite")
'SELECT "t"."Unit Price" FROM "Track"'
"""

from __future__ import annotations

from sqlglot import exp


def ident(name: str) -> exp.Identifier:
    """A quoted identifier."""
    return exp.to_identifier(name, quoted=True)


def table(name: str) -> exp.Table:
    """A table reference."""
    return exp.Table(this=ident(name))


def column(name: str, owner: str | None = None) -> exp.Column:
    """A column reference, qualified by ``owner`` when given."""
    return exp.Column(this=ident(name), table=ident(owner) if owner else None)


def not_null(node: exp.Expr) -> exp.Expr:
    """``node IS NOT NULL``."""
    return exp.Not(this=exp.Is(this=node, expression=exp.Null()))

"""Items as typed rows and back: the one rule between an item dict and its columns.

Candidates, a build's step outputs and a release's data files all store an item as one
column per top-level field, typed by :func:`answerable.kernel.item_model.polars_schema`:
a closed object is a struct of its declared properties, an array a list of its items'
type, and the fields in :data:`~answerable.kernel.item_model.OPEN_FIELDS` are canonical
JSON text.

Typing an item (:func:`typed_row`) gives every struct every declared key, null when the
item leaves it out; a key the schema does not declare would be lost, so it is an error
naming the item and the key. Reading back (:func:`item_reader`) leaves a null key out
of a struct unless the schema requires it, so an absent key and a null one read back
alike and an item gains no keys it never had.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

import polars as pl

from answerable.kernel.ids import canonical_json
from answerable.kernel.item_model import (
    OPEN_FIELDS,
    SchemaShapeError,
    polars_schema,
    required_keys,
)

DEFAULTS = {"dialect": "sqlite", "spans": []}  # what an absent field means

# ---- item -> typed row -----------------------------------------------------------------


def to_frame(items: Iterable[dict]) -> pl.DataFrame:
    """A typed frame of items, sorted by id (stable; a string's UTF-8 bytes order it as
    its code points do); open fields become JSON text."""
    return by_id(unsorted_frame(items))


def by_id(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame sorted by id as ``sorted(items, key=id)`` sorts (stable)."""
    return frame.sort("id", maintain_order=True)


def unsorted_frame(items: Iterable[dict]) -> pl.DataFrame:
    """A typed frame of items, in the order they come."""
    schema = polars_schema()
    typers = _row_typers()
    return pl.DataFrame([typed_row(item, typers) for item in items], schema=schema, orient="row")


@cache
def _row_typers() -> tuple[tuple[str, Any, Callable], ...]:
    return tuple(
        (name, DEFAULTS.get(name), _typer(dtype, name)) for name, dtype in polars_schema().items()
    )


def typed_row(item: dict, typers: tuple | None = None) -> list:
    """The item's values, one per field in the schema's order, typed for its column (an
    absent field takes its default, else null); a field the schema does not declare is
    an error naming the item."""
    unknown = item.keys() - _names()
    if unknown:
        raise SchemaShapeError(
            f"item {item.get('id')}: field(s) {sorted(unknown)} are not in "
            "schemas/item.schema.json (fix: declare them there)"
        )
    typers = typers or _row_typers()
    return [typed(item.get(name, default), item) for name, default, typed in typers]


@cache
def _names() -> frozenset:
    return frozenset(polars_schema())


def _kept(value: Any, _item: dict) -> Any:
    return value


@cache
def _typer(dtype: pl.DataType, path: str) -> Callable[[Any, dict], Any]:
    """The function that types one value at ``path`` (of the item it is given with, for
    the error): open fields as canonical JSON text, a struct with every declared key
    (an undeclared one is an error), a list item by item. Made once per field, so a
    million rows do not walk the struct's type again and again."""
    if path in OPEN_FIELDS:
        return lambda value, _item: None if value is None else canonical_json(value)
    if isinstance(dtype, pl.Struct):
        return _struct_typer(dtype, path)
    if isinstance(dtype, pl.List):
        inner = _typer(dtype.inner, path)
        if inner is _kept:
            return lambda value, _item: None if value is None else list(value)
        return lambda value, item: None if value is None else [inner(v, item) for v in value]
    return _kept


def _struct_typer(dtype: pl.Struct, path: str) -> Callable[[Any, dict], Any]:
    parts = [(f.name, _typer(f.dtype, f"{path}.{f.name}")) for f in dtype.fields]
    declared = {name for name, _part in parts}

    def typed(value: Any, item: dict) -> Any:
        if value is None:
            return None
        unknown = value.keys() - declared
        if unknown:
            raise SchemaShapeError(
                f"item {item.get('id')}: {path} has key(s) {sorted(unknown)} that "
                "schemas/item.schema.json does not declare (fix: declare them there, or "
                "list the field in OPEN_FIELDS in src/answerable/kernel/item_model.py)"
            )
        return {key: part(value.get(key), item) for key, part in parts}

    return typed


# ---- typed row -> item -----------------------------------------------------------------


def to_items(frame: pl.DataFrame) -> list[dict]:
    """Items back from a typed frame, with the fields it has (see :func:`item_reader`)."""
    frame = frame.select([name for name in polars_schema() if name in frame.columns])
    columns = [_column_values(frame.get_column(name)) for name in frame.columns]
    return [dict(zip(frame.columns, row, strict=True)) for row in zip(*columns, strict=True)]


def _column_values(column: pl.Series) -> list:
    """One column's values in item form: read whole by polars, then converted value by
    value only where the field needs it (a plain field is kept as polars gives it)."""
    convert = _converter(polars_schema()[column.name], column.name)
    values = column.to_list()
    return values if convert is _same else [convert(value) for value in values]


def from_arrow(table) -> list[dict]:
    """Items back from an Arrow table or record batch of typed item columns, every
    top-level field present (null when the table lacks its column). Arrow only, no
    polars: safe in a forked worker, where polars' thread pool, started by the parent,
    would hang."""
    read = item_reader(tuple(table.schema.names), every_field=True)
    return [read(row) for row in table.to_pylist()]


@cache
def item_reader(columns: tuple[str, ...], every_field: bool = False) -> Callable[[dict], dict]:
    """The function that turns a row (a dict of typed values of ``columns``) back into
    an item: open fields parsed, null keys inside structs left out unless the schema
    requires them. The item has the fields of ``columns`` that the schema declares, in
    the schema's order, or with ``every_field`` every field (null when not read)."""
    schema = polars_schema()
    names = [name for name in schema if every_field or name in columns]
    converters = [
        (name, _converter(schema[name], name) if name in columns else _absent) for name in names
    ]

    def read(row: dict) -> dict:
        return {name: convert(row.get(name)) for name, convert in converters}

    return read


def _absent(_value: Any) -> None:
    return None


def _same(value: Any) -> Any:
    return value


@cache
def _converter(dtype: pl.DataType, path: str) -> Callable[[Any], Any]:
    """The function that turns one typed value at ``path`` back into its item form; made
    once per field, so a million rows do not walk the struct's type again and again."""
    if path in OPEN_FIELDS:
        return lambda value: None if value is None else json.loads(value)
    if isinstance(dtype, pl.Struct):
        return _struct_converter(dtype, path)
    if isinstance(dtype, pl.List):
        inner = _converter(dtype.inner, path)
        if inner is _same:
            return _same
        return lambda value: None if value is None else [inner(v) for v in value]
    return _same


def _struct_converter(dtype: pl.Struct, path: str) -> Callable[[Any], Any]:
    parts = [(f.name, _converter(f.dtype, f"{path}.{f.name}")) for f in dtype.fields]
    required = required_keys(path)

    nested = [(name, part) for name, part in parts if part is not _same]

    def convert(value: Any) -> Any:
        if value is None:
            return None
        out = {key: field for key, field in value.items() if field is not None or key in required}
        for key, part in nested:
            field = out.get(key)
            if field is not None:
                out[key] = part(field)
        return out

    return convert

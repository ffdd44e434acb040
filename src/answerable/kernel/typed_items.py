"""Items as typed rows and back: the one rule between an item dict and its columns.

Candidates, a build's step outputs and a release's data files all store an item as one
column per top-level field, typed by :func:`answerable.kernel.item_model.polars_schema`:
a closed object is a struct of its declared properties, an array a list of its items'
type, and the fields in :data:`~answerable.kernel.item_model.OPEN_FIELDS` are canonical
JSON text.

Typing items (:func:`unsorted_frame`) works a column at a time: a field's values are
checked and made ready in bulk, then Arrow types the whole column, every struct with
every declared key (null when the item leaves it out); a key the schema does not declare
would be lost, so it is an error naming the item and the key. Reading back
(:func:`from_columns`) converts whole columns too and leaves a null key out of a struct
unless the schema requires it, so an absent key and a null one read back alike and an
item gains no keys it never had.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import polars as pl

from answerable.kernel.ids import canonical_json
from answerable.kernel.item_model import (
    OPEN_FIELDS,
    SchemaShapeError,
    polars_schema,
    required_keys,
)

if TYPE_CHECKING:
    import pyarrow as pa

DEFAULTS = {"dialect": "sqlite", "spans": []}  # what an absent field means

# ---- items -> typed columns -----------------------------------------------------------


def to_frame(items: Iterable[dict]) -> pl.DataFrame:
    """A typed frame of items, sorted by id (stable; a string's UTF-8 bytes order it as
    its code points do); open fields become JSON text."""
    return by_id(unsorted_frame(items))


def by_id(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame sorted by id as ``sorted(items, key=id)`` sorts (stable)."""
    return frame.sort("id", maintain_order=True)


def unsorted_frame(items: Iterable[dict]) -> pl.DataFrame:
    """A typed frame of items, in the order they come, built a column at a time: each
    field's values are checked and made ready in bulk (:func:`_preparer`), then Arrow
    types the whole column at once. A field the schema does not declare is an error
    naming the item."""
    import pyarrow as pa  # the [build] extra: a core install only reads

    items = items if isinstance(items, list) else list(items)
    names = _names()
    for item in items:
        if not names.issuperset(item):
            raise _undeclared(item, None, item.keys() - names)
    owners = range(len(items))
    columns = [
        _column(name, [item.get(name, DEFAULTS.get(name)) for item in items], owners, items)
        for name in polars_schema()
    ]
    return pl.from_arrow(pa.Table.from_arrays(columns, schema=_arrow_schema()))


@cache
def _names() -> frozenset:
    return frozenset(polars_schema())


@cache
def _arrow_schema() -> pa.Schema:
    """The Arrow form of the item columns' types (as polars exports them)."""
    return pl.DataFrame(schema=polars_schema()).to_arrow().schema


def _column(name: str, values: list, owners: Sequence[int], items: list[dict]) -> pa.Array:
    """One field's values, of ``items`` in order, as an Arrow array of its type."""
    import pyarrow as pa

    prepare = _preparer(polars_schema()[name], name)
    if prepare is not None:
        values = prepare(values, owners, items)
    try:
        return pa.array(values, type=_arrow_schema().field(name).type)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a value of another type: polars casts it
        frame = pl.DataFrame(
            [(v,) for v in values], schema={name: polars_schema()[name]}, orient="row"
        )
        return frame.to_arrow().column(0).combine_chunks()


Prepare = Callable[[list, Sequence[int], list], list]


@cache
def _preparer(dtype: pl.DataType, path: str) -> Prepare | None:
    """The function that makes the values at ``path`` ready for Arrow, given the index
    of each value's item (``owners``) and the items (for the error): open fields as
    canonical JSON text, a struct's keys checked against the declared ones (Arrow would
    drop an undeclared key; a missing one is null), a list's items as one flat column.
    None when the values go to Arrow as they are. Made once per field."""
    if path in OPEN_FIELDS:
        return _as_json
    if isinstance(dtype, pl.Struct):
        return _struct_preparer(dtype, path)
    if isinstance(dtype, pl.List):
        inner = _preparer(dtype.inner, path)
        return None if inner is None else _list_preparer(inner)
    return None


def _as_json(values: list, _owners: Sequence[int], _items: list) -> list:
    return [None if value is None else canonical_json(value) for value in values]


def _struct_preparer(dtype: pl.Struct, path: str) -> Prepare:
    declared = frozenset(f.name for f in dtype.fields)
    parts = [(f.name, _preparer(f.dtype, f"{path}.{f.name}")) for f in dtype.fields]
    parts = [(name, part) for name, part in parts if part is not None]

    def prepare(values: list, owners: Sequence[int], items: list) -> list:
        for value, owner in zip(values, owners, strict=True):
            if value is not None and not declared.issuperset(value):
                raise _undeclared(items[owner], path, value.keys() - declared)
        for key, part in parts:
            inner = [None if value is None else value.get(key) for value in values]
            ready = part(inner, owners, items)
            if ready is not inner:
                values = [
                    v if v is None else {**v, key: r} for v, r in zip(values, ready, strict=True)
                ]
        return values

    return prepare


def _list_preparer(inner: Prepare) -> Prepare:
    def prepare(values: list, owners: Sequence[int], items: list) -> list:
        flat, flat_owners = [], []
        for value, owner in zip(values, owners, strict=True):
            if value:
                flat += value
                flat_owners += [owner] * len(value)
        ready = inner(flat, flat_owners, items)
        if ready is flat:
            return values
        out, at = [], 0
        for value in values:
            out.append(None if value is None else ready[at : at + len(value)])
            at += 0 if value is None else len(value)
        return out

    return prepare


def _undeclared(item: dict, path: str | None, unknown: set) -> SchemaShapeError:
    if path is None:
        return SchemaShapeError(
            f"item {item.get('id')}: field(s) {sorted(unknown)} are not in "
            "schemas/item.schema.json (fix: declare them there)"
        )
    return SchemaShapeError(
        f"item {item.get('id')}: {path} has key(s) {sorted(unknown)} that "
        "schemas/item.schema.json does not declare (fix: declare them there, or "
        "list the field in OPEN_FIELDS in src/answerable/kernel/item_model.py)"
    )


# ---- typed columns -> items -----------------------------------------------------------


def to_items(frame: pl.DataFrame) -> list[dict]:
    """Items back from a typed frame, with the fields it has (see :func:`from_columns`)."""
    names = [name for name in polars_schema() if name in frame.columns]
    return from_columns(names, [frame.get_column(name).to_list() for name in names])


def from_arrow(table) -> list[dict]:
    """Items back from an Arrow table or record batch of typed item columns, every
    top-level field present (null when the table lacks its column). Arrow only, no
    polars: safe in a forked worker, where polars' thread pool, started by the parent,
    would hang."""
    names, have = list(polars_schema()), set(table.schema.names)
    absent = [None] * table.num_rows
    return from_columns(
        names, [table.column(name).to_pylist() if name in have else absent for name in names]
    )


def from_columns(names: list[str], columns: list[list]) -> list[dict]:
    """Items from whole columns of typed values (the fields ``names``, in the schema's
    order): each column converted at once, open fields parsed and null keys inside
    structs left out unless the schema requires them, so an absent key and a null one
    read back alike and an item gains no keys it never had."""
    schema = polars_schema()
    columns = [
        _converted(_converter(schema[name], name), values)
        for name, values in zip(names, columns, strict=True)
    ]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _converted(convert: Callable[[Any], Any], values: list) -> list:
    return values if convert is _same else [convert(value) for value in values]


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

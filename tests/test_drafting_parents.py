"""The drafting stage's parents read where the earlier steps stored them: the same units,
databases and main tables as writing the chosen parents to a file of their own."""

from __future__ import annotations

from answerable.builders.drafting.stage import (
    drafted_parents,
    drafting_parents,
    parent_tables,
)
from answerable.kernel import records
from answerable.pipeline import ItemsSoFar
from answerable.pipeline.shards import StoredUnits, UnitsInPlace, cut
from tests.release_helpers import make_item


def test_the_drafted_parents_are_read_in_place_as_a_units_file_holds_them(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "RUN_ROWS", 64)  # files of many row groups
    tables = ["teams", "players", "games"]
    first = [
        make_item(f"a{n}", db_id=f"db{n % 2}", sql=f"SELECT x FROM {tables[n % 3]} WHERE y = {n}")
        for n in range(240)
    ]
    first += [make_item(f"u{n}", label="unanswerable") for n in range(30)]
    updated = [{**first[n], "question": f"Updated {n}?"} for n in range(0, 240, 7)]
    second = [make_item(f"b{n}", generator="template_v1", db_id="db2") for n in range(100)]
    second += [{**make_item(f"v{n}"), "db_variant": f"v{n}"} for n in range(20)] + updated
    so_far = ItemsSoFar()
    for number, items in enumerate([first, second]):
        file = records.write_parquet(items, tmp_path / f"{number}.parquet")
        so_far.add(records.ItemFiles([file]))
    so_far.withdraw([first[5]["id"], second[3]["id"]])

    units, databases, found = drafting_parents(so_far, 0.5, 7, tmp_path, find_tables=True)
    chosen = drafted_parents(list(so_far), 0.5, 7)
    stored = StoredUnits(chosen, tmp_path / "units.parquet")
    assert isinstance(units, UnitsInPlace) and not (tmp_path / "shards").exists()
    assert units.ids == stored.ids and 0 < len(units.ids) < 330
    assert databases == stored.columns("db_id")["db_id"].to_list()
    assert all(units.load(s) == stored.load(s) for s in cut(stored.ids, 9, lambda _u: 1))
    assert found == parent_tables(list(so_far)) and set(found.values()) >= set(tables)
    assert drafting_parents(so_far, 0.5, 7, tmp_path, find_tables=False)[2] is None

    held = ItemsSoFar()
    held.add(list(so_far))  # items in memory: the parents go to the step's folder
    units, databases, _ = drafting_parents(held, 0.5, 7, tmp_path / "held", find_tables=False)
    assert isinstance(units, StoredUnits) and (tmp_path / "held/shards/units.parquet").exists()
    assert units.ids == stored.ids and units.load(units.ids) == stored.load(stored.ids)

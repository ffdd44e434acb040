"""The text2sql-data templates (GeoQuery, Restaurants) imported and expanded on their
real SQLite databases (../shared/data; skipped when absent)."""

from __future__ import annotations

import pytest

from answerable.builders.templates.text2sql import KNOWN_RENAMES, coverage, load_text2sql_templates
from tests.conftest import shared_data


def files(folder: str, name: str):
    return shared_data(folder, f"{name}.json"), shared_data(folder, f"{name}.sqlite")


@pytest.fixture(scope="module")
def repaired():
    return {
        name: coverage(*files(folder, name), repair=True, renames=KNOWN_RENAMES.get(folder))
        for folder, name in (("geoquery", "geography"), ("restaurants", "restaurants"))
    }


def test_at_least_90_percent_of_templates_make_a_verified_pair(repaired):
    verified = sum(c.verified for c in repaired.values())
    total = sum(c.total for c in repaired.values())
    assert total == 246 + 23
    assert verified / total >= 0.90, {n: c.failures for n, c in repaired.items()}
    assert repaired["restaurants"].verified == 23


def test_the_rest_fail_for_reasons_of_the_data_not_of_the_import(repaired):
    reasons = repaired["geography"].reasons()
    assert set(reasons) <= {"empty-result", "too-many-rows"}, repaired["geography"].failures


def test_strict_import_names_the_sql_that_sqlite_cannot_run():
    strict = coverage(*files("geoquery", "geography"))
    assert strict.failures["geography.038"][0] == "unknown-column"
    assert strict.failures["geography.222"][0] == "parse-error"


def test_variables_become_placeholders_bound_through_aliases():
    imported, _ = load_text2sql_templates(*files("geoquery", "geography"))
    by_id = {t.id: t for t in imported.templates}
    river = by_id["geography.100"]
    assert ":river_name0" in river.record["sql"] and '"river_name0"' not in river.record["sql"]
    assert river.placeholders == {"river_name0": {"column": "river.river_name"}}
    assert all("{river_name0}" in text for text in river.questions)
    joint = by_id["geography.050"]  # city and state compared with = in one WHERE
    assert joint.placeholders == {}
    assert joint.bindings == [
        "SELECT DISTINCT cityalias0.city_name AS city_name0, cityalias0.state_name AS state_name0 "
        "FROM city AS cityalias0"
    ]


def test_repairs_are_named_in_the_tags():
    imported, _ = load_text2sql_templates(
        *files("restaurants", "restaurants"), repair=True, renames=KNOWN_RENAMES["restaurants"]
    )
    first = imported.templates[0]
    assert "fix:rename RESTAURANT.ID -> RESTAURANT_ID" in first.record["tags"]
    assert "RESTAURANT_ID = LOCATIONalias0.RESTAURANT_ID" in first.record["sql"]
    geo, _ = load_text2sql_templates(*files("geoquery", "geography"), repair=True)
    tags = {t.id: t.record["tags"] for t in geo.templates}
    assert "fix:alternative-sql" in tags["geography.038"]
    assert "fix:all-subquery" in tags["geography.222"]

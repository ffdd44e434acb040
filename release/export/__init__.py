"""Export profiles: a release in the file layout each paper's consumers already read.

Each format is one small module with a pure function ``export(items, schemas) ->
Export``: from items (and the schemas of the databases they are asked over) to file
texts, plus the items the layout cannot hold with the reason. Registering a format is
one line in :data:`FORMATS`.
"""

from __future__ import annotations

from answerable.release.export import biomedsql, dte, ehrsql, naq, scare, spider, trustsql
from answerable.release.export.common import Export, ExportFunction

FORMATS: dict[str, ExportFunction] = {
    "biomedsql": biomedsql.export,
    "dte": dte.export,
    "ehrsql": ehrsql.export,
    "naq": naq.export,
    "scare": scare.export,
    "spider": spider.export,
    "trustsql": trustsql.export,
}

__all__ = ["FORMATS", "Export", "ExportFunction"]

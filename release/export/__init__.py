"""Export profiles: a release in the file layout each paper's consumers already read.

Each format is one small module with a pure function ``export(items, schemas) ->
Export``: from items (and the schemas of the databases they are asked over) to file
texts, plus the items the layout cannot hold with the reason. Registering a format is
one line in :data:`FORMATS`; a format that also needs what the release's databases give
(a candidate's execution result) names the step that adds it in :data:`PREPARE`.
"""

from __future__ import annotations

from answerable.release.export import biomedsql, dte, ehrsql, naq, scare, spider, trustsql
from answerable.release.export.common import Export, ExportFunction, PrepareFunction

FORMATS: dict[str, ExportFunction] = {
    "biomedsql": biomedsql.export,
    "dte": dte.export,
    "ehrsql": ehrsql.export,
    "naq": naq.export,
    "scare": scare.export,
    "spider": spider.export,
    "trustsql": trustsql.export,
}

# run before the format's export, on the items, with the release folder and its limits
PREPARE: dict[str, PrepareFunction] = {"scare": scare.run_candidates}

__all__ = ["FORMATS", "PREPARE", "Export", "ExportFunction", "PrepareFunction"]

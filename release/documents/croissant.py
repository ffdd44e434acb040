"""``croissant.json``: the release described in ML Commons Croissant 1.0 (JSON-LD).

The distribution lists every data and database file with its sha256; each split is a
record set whose fields are the Parquet file's columns with their types and the released
record schema's descriptions; a struct column is a field with a sub-field per member, a
list a repeated field, and a list of structs (spans, candidates, readings) a nested record
set; only lists inside those lists are left to the Parquet schema (named in the
description). Responsible-AI fields (``rai:``) say how the data was collected and
annotated and what its limits are, where the build knows.
"""

from __future__ import annotations

import polars as pl

from answerable.kernel.item_model import open_fields
from answerable.release.documents.card import About, hf_license, review_lines
from answerable.release.documents.record_schema import record_schema
from answerable.release.reader import data_files

CROISSANT = "croissant.json"
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
ENCODINGS = {
    ".parquet": "application/x-parquet",
    ".jsonl": "application/jsonlines",
    ".sqlite": "application/vnd.sqlite3",
    ".json": "application/json",
}


def data_type(dtype: pl.DataType) -> str | None:
    """The schema.org type of a plain Parquet column, or None for a nested one."""
    if dtype == pl.Boolean:
        return "sc:Boolean"
    if dtype.is_integer():
        return "sc:Integer"
    if dtype.is_float():
        return "sc:Float"
    if dtype == pl.String:
        return "sc:Text"
    return None


def file_object(entry: dict) -> dict:
    """The distribution entry of one manifest file."""
    path = entry["path"]
    suffix = path[path.rfind(".") :] if "." in path else ""
    return {
        "@type": "cr:FileObject",
        "@id": path,
        "name": path,
        "contentUrl": path,
        "encodingFormat": ENCODINGS.get(suffix, "application/octet-stream"),
        "contentSize": f"{entry['bytes']} B",
        "sha256": entry["sha256"],
    }


def column_field(split: str, source: str, name: str, dtype: pl.DataType) -> dict | None:
    """The field of one Parquet column, typed and described (the released record's
    schema): a plain column; a struct with a sub-field per member; a list as a repeated
    field, a list of structs as a nested record set (spans, candidates, readings). None
    for a column of no shape Croissant reads (a list of lists)."""
    node = record_schema()["properties"].get(name, {})
    return _field(f"{split}/{name}", name, dtype, node, _source(source, name))


def _source(source: str, column: str, path: str | None = None) -> dict:
    found = {"fileObject": {"@id": source}, "extract": {"column": column}}
    return found | ({"transform": {"jsonPath": path}} if path else {})


def _field(fid: str, name: str, dtype: pl.DataType, node: dict, source: dict) -> dict | None:
    """A field of type ``dtype`` read from ``source``; ``node`` is its record schema."""
    described = {"@type": "cr:Field", "@id": fid, "name": name}
    if node.get("description"):
        described["description"] = node["description"]
    repeated = isinstance(dtype, pl.List)
    inner = dtype.inner if repeated else dtype
    if repeated:
        described["repeated"] = True
        node = node.get("items") or {}
    kind = data_type(inner)
    if kind is not None:
        return described | {"dataType": kind, "source": source}
    if not isinstance(inner, pl.Struct):
        return None
    members = []
    for member in inner.fields:
        column = source["extract"]["column"]
        parent = source.get("transform", {}).get("jsonPath")
        if repeated and parent:
            continue  # a list inside a list's members: the Parquet schema types it
        path = f"{parent}.{member.name}" if parent else member.name
        child = (node.get("properties") or {}).get(member.name, {})
        found = _field(
            f"{fid}/{member.name}",
            member.name,
            member.dtype,
            child,
            _source(source["fileObject"]["@id"], column, path),
        )
        if found is not None and not (repeated and found.get("repeated")):
            members.append(found)
    if not members:
        return None
    return described | {"dataType": "cr:RecordSet" if repeated else "sc:Text", "subField": members}


def record_set(split: str, source: str, schema: pl.Schema) -> tuple[dict, list[str]]:
    """The record set of one split's Parquet file, and the columns it leaves (in part)
    to the Parquet schema (lists inside lists)."""
    fields, nested = [], []
    for name, dtype in schema.items():
        described = column_field(split, source, name, dtype)
        if described is None:
            nested.append(name)
        else:
            fields.append(described)
            if _members(dtype) > len(described.get("subField", [])) and "subField" in described:
                nested.append(name)
    return {
        "@type": "cr:RecordSet",
        "@id": split,
        "name": split,
        "description": f"The {split} split: one record per item.",
        "key": {"@id": f"{split}/id"},
        "field": fields,
    }, nested


def _members(dtype: pl.DataType) -> int:
    inner = dtype.inner if isinstance(dtype, pl.List) else dtype
    return len(inner.fields) if isinstance(inner, pl.Struct) else 0


def croissant(manifest: dict, schemas: dict[str, pl.Schema], about: About) -> dict:
    """The Croissant document of a release; ``schemas`` maps each split to its Parquet
    file's schema."""
    record_sets, nested = [], set()
    for split, files in data_files(manifest).items():
        if "parquet" in files and split in schemas:
            described, left = record_set(split, files["parquet"]["path"], schemas[split])
            record_sets.append(described)
            nested.update(left)
    description = about.description.strip() or "A text-to-SQL benchmark built with answerable."
    if nested:
        description += (
            f" Lists inside the lists of {', '.join(sorted(nested))} are typed in the Parquet "
            "schema and not repeated in the record sets."
        )
    counts = manifest["counts"]
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": manifest["dataset"],
        "description": description,
        "version": manifest["version"],
        "license": license_url(about.license),
        "url": f"./{manifest['dataset']}/{manifest['version']}",
        "citeAs": f"{manifest['dataset']} {manifest['version']} (answerable "
        f"{manifest['tool']['version']}, recipe signature {manifest['recipe_signature']})",
        "keywords": ["text-to-SQL", "unanswerable questions", "ambiguous questions"],
        "rai:dataCollection": (
            f"Built by answerable {manifest['tool']['version']} from recipe signature "
            f"{manifest['recipe_signature']} with seed {manifest['seed']}: questions from the "
            "sources and generators named per item in provenance; every gold query executed "
            "on a read-only copy of its database."
        ),
        "rai:dataAnnotationProtocol": " ".join(review_lines(about.review)),
        "rai:dataLimitations": (
            f"{counts['total']} items; labels hold for the shipped databases only. Fields kept "
            f"as JSON text: {', '.join(open_fields())}."
        ),
        "rai:dataUseCases": (
            "Evaluating whether text-to-SQL systems answer answerable questions correctly and "
            "abstain on or clarify ambiguous and unanswerable ones."
        ),
        "distribution": [
            file_object(entry) for entry in sorted(manifest["files"], key=lambda e: e["path"])
        ],
        "recordSet": record_sets,
    }


def license_url(spdx: str | None) -> str:
    """The license as a URL (SPDX's page), or ``unknown``."""
    return f"https://spdx.org/licenses/{spdx}.html" if spdx else hf_license(None)

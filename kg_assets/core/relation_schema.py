"""The relation-type schema of the graph (seed 003's SchemaConfig.relation_types), applied when relations
become edges, as `sanitize` applies the entity types to what an extractor returns.

A type is first renamed by the mapping (KG_RELATION_TYPE_MAP); with no allowed set (KG_RELATION_TYPES empty)
every type is then kept. With one, a type outside it is unknown: it becomes RELATED_TO when RELATED_TO is
allowed and unknown types are mapped ("related", the default), else the relation is dropped, as an unknown
entity type becomes OTHER or is dropped. Every rename, fallback and drop is counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import polars as pl

RELATED_TO = "RELATED_TO"


def apply_relation_schema(relations: pl.DataFrame, allowed: Sequence[str] = (), mapping: Mapping[str, str] | None = None,
                          unknown: Literal["related", "drop"] = "related",
                          weight: str | None = None) -> tuple[pl.DataFrame, dict[str, object]]:
    """(relations with their types mapped and unknown ones replaced or dropped, counts of what changed). With
    `weight`, each row counts as that column's number of relations (a frame of types and their counts)."""
    mapping = dict(mapping or {})
    allowed_set = set(allowed)
    rows = relations[weight] if weight else pl.Series([1] * relations.height, dtype=pl.Int64)
    raw = relations["relation_type"]
    mapped = raw.replace(mapping) if mapping else raw
    counts: dict[str, object] = {"relations": int(rows.sum()), "mapped": int(rows.filter(mapped != raw).sum()),
                                 "unknown": 0, "unknown_as_related_to": 0, "dropped": 0, "unknown_types": {}}
    frame = relations.with_columns(mapped.alias("relation_type"), rows.alias("_rows"))
    if not allowed_set:
        return frame.drop("_rows"), counts
    is_unknown = ~pl.col("relation_type").is_in(list(allowed_set))
    unknown_rows = frame.filter(is_unknown)
    counts["unknown"] = int(unknown_rows["_rows"].sum())
    by_type = (unknown_rows.group_by("relation_type").agg(pl.col("_rows").sum().alias("len"))
               .sort(["len", "relation_type"], descending=[True, False]))
    counts["unknown_types"] = dict(zip(by_type["relation_type"].to_list(), by_type["len"].to_list()))
    if unknown == "related" and RELATED_TO in allowed_set:
        counts["unknown_as_related_to"] = counts["unknown"]
        frame = frame.with_columns(pl.when(is_unknown).then(pl.lit(RELATED_TO)).otherwise(pl.col("relation_type"))
                                   .alias("relation_type"))
    else:
        counts["dropped"] = counts["unknown"]
        frame = frame.filter(~is_unknown)
    return frame.drop("_rows"), counts

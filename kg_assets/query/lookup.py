"""The entity lookup: one row per current entity name or alias with every key search and context match on.

Columns: entity_id, entity_type, surface (the name or alias as written), is_name, folded (case and
diacritics folded), tokens (folded words), norm_key (the pipeline's normalized name, `normalize_name`),
link_key (the linker's matching key, `with_name_keys`: honorifics, corporate suffixes, dotted initials
folded). Built from kg.entities alone, so it is a pure function of the current entities.

`refresh_entity_lookup` stores it in kg.entity_lookup; the pipeline calls it after `linked_entities`
(and a reader rebuilds it in memory whenever the stored one is missing or stale).
"""

from __future__ import annotations

import os

import polars as pl

from kg_assets.core.linking.name_keys import with_name_keys
from kg_assets.core.normalize import normalize_name_expr
from kg_assets.query.matching import fold_expr, tokens_expr
from kg_assets.storage.graph_reads import write_entity_lookup
from kg_assets.storage.warehouse import Warehouse

LOOKUP_SCHEMA = {
    "entity_id": pl.String,
    "entity_type": pl.String,
    "surface": pl.String,
    "is_name": pl.Boolean,
    "folded": pl.String,
    "tokens": pl.List(pl.String),
    "norm_key": pl.String,
    "link_key": pl.String,
}


def link_keys(frame: pl.DataFrame, text: str, entity_type: str) -> pl.Series:
    """The linker's matching key of each row's `text` for its `entity_type`."""
    keyed = with_name_keys(frame.select(pl.col(text).alias("name"), pl.col(entity_type).alias("entity_type")))
    return keyed["key"].fill_null("")


def build_entity_lookup(entities: pl.DataFrame) -> pl.DataFrame:
    """Lookup rows from current entities (entity_id, name, entity_type, aliases)."""
    surfaces = (
        entities.select("entity_id", "entity_type", "name",
                        pl.concat_list(pl.col("name"), pl.col("aliases").fill_null([])).alias("surface"))
        .explode("surface")
        .filter(pl.col("surface").is_not_null() & (pl.col("surface").str.strip_chars() != ""))
        .with_columns((pl.col("surface") == pl.col("name")).alias("is_name"))
        .sort(["entity_id", "surface", "is_name"], descending=[False, False, True])
        .unique(["entity_id", "surface"], keep="first", maintain_order=True)
    )
    if surfaces.height == 0:
        return pl.DataFrame(schema=LOOKUP_SCHEMA)
    return surfaces.with_columns(
        fold_expr(pl.col("surface")).alias("folded"),
        tokens_expr(fold_expr(pl.col("surface"))).alias("tokens"),
        normalize_name_expr(pl.col("surface")).alias("norm_key"),
        link_keys(surfaces, "surface", "entity_type").alias("link_key"),
    ).select(list(LOOKUP_SCHEMA)).cast(LOOKUP_SCHEMA)


def refresh_entity_lookup(db_path: str | os.PathLike[str] | None = None) -> int:
    """Rebuild kg.entity_lookup from the current entities; returns its rows.

    Call it wherever kg.entities changes (at the end of the `linked_entities` asset); until then search
    and context build the same frame in memory on every connection.
    """
    return write_entity_lookup(Warehouse(db_path), build_entity_lookup)

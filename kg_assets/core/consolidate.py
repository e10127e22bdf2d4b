"""Consolidation: canonical entities, graph nodes and graph edges from per-document rows.

Everything here is a deterministic group-by: rebuilding from the same mentions and relations gives the
same rows in any order of ingestion, and a key's row depends only on its own group, so a consolidation
rebuilds only the keys whose inputs changed (storage/consolidation.py finds them), a bounded batch at a time
(`key_batches`).
"""

from __future__ import annotations

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.linking import apply_redirects
from kg_assets.core.normalize import is_description_expr, parse_keywords, stable_hash_expr, with_entity_ids

MAX_DESCRIPTION_CHARS = 1000
EXTRACTED_FROM = "EXTRACTED_FROM"  # provenance edge type, entity -> chunk (seed 003)
DESCRIPTION_SEPARATOR = " | "
# fragments are at least one character: past this many, none shows in the first MAX_DESCRIPTION_CHARS
_MAX_FRAGMENTS = MAX_DESCRIPTION_CHARS // (1 + len(DESCRIPTION_SEPARATOR)) + 1


def _most_frequent(frame: pl.DataFrame, key: str, value: str, out: str) -> pl.DataFrame:
    return (
        frame.group_by(key, value).len()
        .sort([key, "len", value], descending=[False, True, False])
        .group_by(key, maintain_order=True).first()
        .select(key, pl.col(value).alias(out))
    )


# The mention columns `build_entities` reads (not offsets, confidence or extractor)
ENTITY_INPUT_COLUMNS = ("entity_id", "name", "normalized_name", "entity_type", "document_id", "chunk_id", "description")


def build_entities(mentions: pl.DataFrame, documents: pl.DataFrame, redirects: pl.DataFrame) -> pl.DataFrame:
    """One row per canonical entity_id (ENTITIES contract, without validity columns), from the mentions as
    extracted (ENTITY_INPUT_COLUMNS of them) and the linker's resolved redirects.

    Whatever is merged into an entity counts for it (mentions, surface forms, documents, descriptions),
    but its entity_type and normalized_name are those of its own id, so every row keeps the id rule
    (`misnamed_entities` finds none): "Chen" merged into "Sarah Chen"
    does not rename it CHEN, and an OTHER-typed variant does not retype a PERSON. Its name is the most
    frequent surface form of its own id's mentions, so a short form never names the entity it joined."""
    if mentions.height == 0:
        return schemas.empty(schemas.ENTITIES)
    # every mention of an id has the type and normalized name the id was made from
    identity = mentions.group_by("entity_id").agg(pl.col("normalized_name").min(), pl.col("entity_type").min())
    seen = documents.select("document_id", pl.coalesce("document_date", "ingested_at").alias("seen_at"))
    rows = apply_redirects(mentions, redirects, ["entity_id"]).join(seen, on="document_id", how="left")
    grouped = rows.group_by("entity_id").agg(
        pl.col("name").unique().sort().alias("aliases"),
        pl.len().cast(pl.Int64).alias("mention_count"),
        pl.col("document_id").n_unique().cast(pl.Int64).alias("document_count"),
        pl.col("seen_at").min().alias("first_seen"),
        pl.col("seen_at").max().alias("last_seen"),
        pl.col("chunk_id").unique().sort().alias("source_chunk_ids"),
    )
    # the name is the canonical id's own most frequent form: "Quantum Dynamics Lab", not its more frequent "QDL"
    own_names = _most_frequent(mentions.join(grouped.select("entity_id"), on="entity_id", how="semi"),
                               "entity_id", "name", "own_name")
    names = (_most_frequent(rows, "entity_id", "name", "name").join(own_names, on="entity_id", how="left")
             .select("entity_id", pl.coalesce("own_name", "name").alias("name")))
    descriptions = merge_descriptions(rows, ["entity_id"])
    entities = (
        grouped.join(identity, on="entity_id", how="left")
        .join(names, on="entity_id")
        .join(descriptions, on="entity_id", how="left")
    )
    return schemas.conform(entities.sort("entity_id"), schemas.ENTITIES)


def misnamed_entities(entities: pl.DataFrame, mentions: pl.DataFrame) -> pl.DataFrame:
    """The entities (entity_id, entity_type, normalized_name, name) whose id is not the id rule's
    `normalize.entity_id(entity_type, normalized_name, scope)`, with the id they should have
    (`expected_id`). An id is scoped to a document exactly when every one of its own mentions (entity_id,
    document_id, name), read with the entity's type, is a description: the row builder gives a lower-case
    mention the name's id when its chunk writes the name with capitals, so a name id always has a capitalised
    mention of its own (or is a concept's, "machine learning")."""
    typed = mentions.join(entities.select("entity_id", "entity_type").unique(), on="entity_id")
    own = typed.group_by("entity_id").agg(pl.col("document_id").min().alias("_document"),
                                          is_description_expr(pl.col("name"), pl.col("entity_type")).all()
                                          .alias("_described"))
    scoped = entities.join(own, on="entity_id", how="left").with_columns(
        pl.when(pl.col("_described")).then(pl.col("_document")).otherwise(pl.lit(None, pl.String)).alias("_scope"))
    expected = with_entity_ids(scoped, "entity_type", "normalized_name", "expected_id", scope_col="_scope")
    return (expected.filter(pl.col("expected_id").ne_missing(pl.col("entity_id")))
            .drop("_document", "_described", "_scope"))


def merge_descriptions(frame: pl.DataFrame, key: list[str]) -> pl.DataFrame:
    """Per key: distinct description fragments, most frequent first, ties alphabetical, bounded."""
    counted = frame.filter(pl.col("description").str.len_chars() > 0).group_by(*key, "description").len()
    # sorted inside each key's group, not all rows by the key's strings first (a third less time per batch); only
    # the fragments that can reach the bound are joined (a frequent entity has tens of thousands)
    return counted.group_by(key).agg(
        pl.col("description").sort_by(["len", "description"], descending=[True, False]).head(_MAX_FRAGMENTS)
        .str.join(DESCRIPTION_SEPARATOR).str.slice(0, MAX_DESCRIPTION_CHARS)
    )


# What build_edges reads of local_relations: the consolidation step reads only these (the rest is most of the memory).
EDGE_INPUT_COLUMNS = ("chunk_id", "document_id", "source_id", "target_id", "relation_type", "keywords", "description")


def build_edges(relations: pl.DataFrame, entity_ids: pl.Series) -> pl.DataFrame:
    """One edge per (source, target, relation_type) between known entities; weight = supporting rows; keywords
    the distinct keywords of its relations, sorted."""
    known = pl.DataFrame({"id": entity_ids.unique()})
    if relations.schema.get("keywords") == pl.String:  # read from a warehouse made before the list (read-only)
        relations = relations.with_columns(pl.col("keywords").map_elements(
            parse_keywords, return_dtype=schemas.STRS, skip_nulls=False))
    rel = (
        relations.filter(pl.col("source_id") != pl.col("target_id"))
        .join(known, left_on="source_id", right_on="id", how="semi")
        .join(known, left_on="target_id", right_on="id", how="semi")
    )
    if rel.height == 0:
        return schemas.empty(schemas.GRAPH_EDGES)
    key = ["source_id", "target_id", "relation_type"]
    edges = rel.group_by(key).agg(
        pl.len().cast(pl.Int64).alias("weight"),
        pl.col("keywords").list.explode(keep_nulls=False, empty_as_null=False).drop_nulls().unique().sort().alias("keywords"),
        pl.col("chunk_id").unique().sort().alias("source_chunk_ids"),
        pl.col("document_id").unique().sort().alias("document_ids"),
    )
    edges = edges.join(merge_descriptions(rel, key), on=key, how="left").with_columns(
        stable_hash_expr(*[pl.col(k) for k in key], prefix="edge_").alias("edge_id"))
    return schemas.conform(edges.sort(key), schemas.GRAPH_EDGES)


def build_nodes(entities: pl.DataFrame, edges: pl.DataFrame) -> pl.DataFrame:
    """A node per canonical entity, with its degree in the consolidated edges."""
    degree = (
        pl.concat([edges.select(pl.col("source_id").alias("node_id")), edges.select(pl.col("target_id").alias("node_id"))])
        .group_by("node_id").len()
        .select("node_id", pl.col("len").cast(pl.Int64).alias("degree"))
    )
    nodes = entities.select(
        pl.col("entity_id").alias("node_id"),
        pl.col("name").alias("label"),
        "entity_type",
        "description",
        "aliases",
        "mention_count",
        "first_seen",
        "last_seen",
        "source_chunk_ids",
    ).join(degree, on="node_id", how="left").with_columns(pl.col("degree").fill_null(0))
    return schemas.conform(nodes, schemas.GRAPH_NODES)


def summary_candidates(mentions: pl.DataFrame, min_fragments: int) -> pl.DataFrame:
    """Entities with at least `min_fragments` distinct description fragments, most frequent first:
    the only ones worth an LLM summary (entity_id, fragments)."""
    if min_fragments <= 0 or mentions.height == 0:
        return pl.DataFrame(schema={"entity_id": pl.String, "fragments": pl.List(pl.String)})
    counted = (
        mentions.filter(pl.col("description").str.len_chars() > 0)
        .group_by("entity_id", "description").len()
        .sort(["entity_id", "len", "description"], descending=[False, True, False])
    )
    return (
        counted.group_by("entity_id", maintain_order=True).agg(pl.col("description").alias("fragments"))
        .filter(pl.col("fragments").list.len() >= min_fragments)
    )


def provenance_edges(nodes: pl.DataFrame) -> pl.DataFrame:
    """EXTRACTED_FROM edges, one per (node, chunk it was extracted from), confidence 1.0: where each node
    came from, as edges graph tools follow without joining tables. The SQL twin is the view
    `kg.extracted_from` (storage/ddl.py)."""
    return (
        nodes.select(pl.col("node_id").alias("source_id"), pl.col("source_chunk_ids").alias("target_id"))
        .explode("target_id").drop_nulls("target_id").unique().sort("source_id", "target_id")
        .with_columns(pl.lit(EXTRACTED_FROM).alias("relation_type"), pl.lit(1.0).alias("confidence"))
    )

def with_summaries(entities: pl.DataFrame, summaries: pl.DataFrame) -> pl.DataFrame:
    """Entities whose description is their LLM summary where one exists (bounded), else the merged fragments."""
    if summaries.height == 0:
        return entities
    return (
        entities.join(summaries.select("entity_id", pl.col("summary").alias("_summary")), on="entity_id", how="left")
        .with_columns(pl.coalesce(pl.col("_summary").str.slice(0, MAX_DESCRIPTION_CHARS), "description").alias("description"))
        .drop("_summary")
    )


def key_batches(keys: pl.DataFrame, max_rows: int) -> list[pl.DataFrame]:
    """`keys` (with `rows`) in consecutive batches of about `max_rows` input rows (a key larger than that is a
    batch of its own; keys without rows ride along, to be closed)."""
    if keys.height == 0:
        return []
    numbered = keys.with_columns((pl.col("rows").cum_sum() // max(1, max_rows)).alias("_batch"))
    return [batch.drop("_batch") for batch in numbered.partition_by("_batch", maintain_order=True)]

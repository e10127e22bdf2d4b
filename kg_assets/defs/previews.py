"""What the UI shows of the data itself: a preview of the graph, sample rows, failures (Markdown metadata)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path

import dagster as dg
import polars as pl

from kg_assets.defs.tables import markdown_table
from kg_assets.storage.warehouse import Warehouse

TOP_ENTITIES = 10
TOP_RELATION_TYPES = 15
SAMPLE_EDGES = 8
EVIDENCE_CHARS = 160


def top_entities(nodes: pl.DataFrame) -> str:
    top = nodes.sort(["degree", "mention_count", "label"], descending=[True, True, False]).head(TOP_ENTITIES)
    return "### Top entities by degree\n\n" + _md(top.select("label", "entity_type", "degree", "mention_count"))


def graph_preview(nodes: pl.DataFrame, edges: pl.DataFrame, warehouse: Warehouse) -> dg.MetadataValue:
    """Top entities by degree, relation types with counts, and sample edges beside the chunk text they came from."""
    types = edges.group_by("relation_type").agg(edges=pl.len(), weight=pl.col("weight").sum()).sort(
        ["edges", "relation_type"], descending=[True, False])
    label = nodes.select("node_id", "label")
    sample = (
        edges.sort(["weight", "edge_id"], descending=[True, False]).head(SAMPLE_EDGES)
        .join(label.rename({"node_id": "source_id", "label": "source"}), on="source_id", how="left")
        .join(label.rename({"node_id": "target_id", "label": "target"}), on="target_id", how="left")
        .with_columns(chunk_id=pl.col("source_chunk_ids").list.first())
    )
    evidence = warehouse.chunk_texts(sample["chunk_id"].drop_nulls().to_list()) if sample.height else None
    if evidence is not None:
        sample = sample.join(evidence, on="chunk_id", how="left").with_columns(
            evidence=pl.col("text").str.replace_all(r"\s+", " ").str.slice(0, EVIDENCE_CHARS))
    else:
        sample = sample.with_columns(evidence=pl.lit(None, pl.String), document_id=pl.lit(None, pl.String))
    others = types.height - TOP_RELATION_TYPES
    lines = [top_entities(nodes),
             f"### Relation types ({types.height:,})", _md(types.head(TOP_RELATION_TYPES))
             + (f"\n\n… and {others:,} more types" if others > 0 else ""),
             "### Sample edges and their evidence",
             _md(sample.select("source", "relation_type", "target", "weight", "document_id", "evidence"))]
    return dg.MetadataValue.md("\n\n".join(lines))


def core_picture(warehouse: Warehouse, top: int = 25) -> dict[str, dg.MetadataValue]:
    """The graph's most connected core drawn beside the warehouse (pictures/graph_core.svg) and embedded in
    the materialization, so the UI shows the graph itself (the picture `kg picture` draws)."""
    from kg_assets.query.picture import render_core

    path = render_core(warehouse, warehouse.folder / "pictures" / "graph_core.svg", top=top)
    encoded = base64.b64encode(path.read_bytes()).decode()
    return {"core_picture": dg.MetadataValue.md(f"![The {top} most connected entities](data:image/svg+xml;base64,{encoded})"),
            "core_picture_path": dg.MetadataValue.path(str(path))}


def sample_rows(warehouse: Warehouse, table: str, columns: Sequence[str], limit: int = 5) -> dg.MetadataValue:
    """A few rows of a table, long text cut, as a Markdown table."""
    rows = warehouse.sample_rows(table, columns, limit)
    text_columns = [c for c, dtype in rows.schema.items() if dtype == pl.String]
    return markdown_table(rows.with_columns(pl.col(text_columns).str.replace_all(r"\s+", " ").str.slice(0, 80)))


def _md(frame: pl.DataFrame) -> str:
    return markdown_table(frame).value

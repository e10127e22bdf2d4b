"""What the UI shows of the data itself: a preview of the graph, sample rows, failures (Markdown metadata)."""

from __future__ import annotations

import base64
from collections.abc import Sequence

import dagster as dg
import polars as pl

from kg_assets.defs.tables import markdown_table
from kg_assets.storage.warehouse import Warehouse

TOP_ENTITIES = 10
TOP_RELATION_TYPES = 15
SAMPLE_EDGES = 8
EVIDENCE_CHARS = 160


def top_entities(warehouse: Warehouse) -> str:
    top = warehouse.most_connected_nodes(TOP_ENTITIES)
    return "### Top entities by degree\n\n" + _md(top.select("label", "entity_type", "degree", "mention_count"))


def graph_preview(warehouse: Warehouse) -> dg.MetadataValue:
    """Top entities by degree, relation types with counts, and sample edges beside the chunk text they came from
    (each read ranked and cut in SQL: the preview costs the same for a graph of any size)."""
    types = warehouse.edge_type_counts()
    sample = warehouse.heaviest_edges(SAMPLE_EDGES)
    evidence = warehouse.chunk_texts(sample["chunk_id"].drop_nulls().to_list()) if sample.height else None
    if evidence is not None:
        sample = sample.join(evidence, on="chunk_id", how="left").with_columns(
            evidence=pl.col("text").str.replace_all(r"\s+", " ").str.slice(0, EVIDENCE_CHARS))
    else:
        sample = sample.with_columns(evidence=pl.lit(None, pl.String), document_id=pl.lit(None, pl.String))
    others = types.height - TOP_RELATION_TYPES
    lines = [top_entities(warehouse),
             f"### Relation types ({types.height:,})", _md(types.head(TOP_RELATION_TYPES))
             + (f"\n\n… and {others:,} more types" if others > 0 else ""),
             "### Sample edges and their evidence",
             _md(sample.select("source", "relation_type", "target", "weight", "document_id", "evidence"))]
    return dg.MetadataValue.md("\n\n".join(lines))


# The UI draws a Markdown metadata value in place only while it is shorter than this (dagster-webserver's
# MetadataEntry: `expandSmallValues && mdStr.length < 1000`); a longer one hides behind a [Show Markdown] link.
INLINE_MARKDOWN_CHARS = 1000
INLINE_MAX_NODES = 12


def core_picture(warehouse: Warehouse, top: int = 25) -> dict[str, dg.MetadataValue]:
    """The graph on the asset page: `graph_picture`, a small drawing of the most connected entities short
    enough for the UI to show in place; `core_picture`, the full picture `kg picture` draws of the `top`
    (opened from its row); and `core_picture_path`, that picture's file beside the warehouse."""
    from kg_assets.query.picture import render_core

    path = render_core(warehouse, warehouse.folder / "pictures" / "graph_core.svg", top=top)
    encoded = base64.b64encode(path.read_bytes()).decode()
    return {"graph_picture": inline_core(warehouse),
            "core_picture": dg.MetadataValue.md(f"![The {top} most connected entities](data:image/svg+xml;base64,{encoded})"),
            "core_picture_path": dg.MetadataValue.path(str(path))}


def inline_core(warehouse: Warehouse, label_chars: int = 14) -> dg.MetadataValue:
    """The most connected current entities on a circle with the edges between them, as a Markdown image the
    UI shows in place: as many entities as keep it under INLINE_MARKDOWN_CHARS."""
    ranked = warehouse.most_connected_nodes(INLINE_MAX_NODES).select("node_id", "label")
    # only the edges among the nodes it may show: a large graph has hundreds of thousands
    pairs = set(warehouse.edges_among(ranked["node_id"].to_list()).iter_rows())
    best = dg.MetadataValue.md("no entities yet")
    for count in range(1, ranked.height + 1):
        markdown = _circle_markdown(ranked.head(count).rows(), pairs, label_chars)
        if len(markdown) >= INLINE_MARKDOWN_CHARS:
            break
        best = dg.MetadataValue.md(markdown)
    return best


def _circle_markdown(ranked: list[tuple[str, str]], pairs: set[tuple[str, str]], label_chars: int) -> str:
    import math

    centre_x, centre_y, radius = 150, 75, 55
    at = {node_id: (round(centre_x + radius * math.cos(2 * math.pi * i / len(ranked) - math.pi / 2)),
                    round(centre_y + radius * math.sin(2 * math.pi * i / len(ranked) - math.pi / 2)))
          for i, (node_id, _) in enumerate(ranked)}
    lines = "".join(f"M{at[a][0]} {at[a][1]}L{at[b][0]} {at[b][1]}" for a, b in sorted(pairs) if a in at and b in at and a != b)
    dots = "".join(f"<circle cx='{x}' cy='{y}' r='4'/>" for x, y in at.values())
    names = "".join(f"<text x='{at[n][0] + (6 if at[n][0] >= centre_x else -6)}' y='{at[n][1] + 3}'"
                    f"{'' if at[n][0] >= centre_x else ' text-anchor=' + chr(39) + 'end' + chr(39)}>"
                    f"{_xml(label if len(label) <= label_chars else label[:label_chars - 1] + chr(8230))}</text>" for n, label in ranked)
    # width and height, not only a viewBox: an <img> of an SVG without them has no size of its own, and the UI's
    # metadata cell, sized to its content, draws it 0x0 px (scripts/ui_check.py measures it)
    svg = (f"<svg xmlns='http://www.w3.org/2000/svg' width='300' height='150' viewBox='0 0 300 150' font-size='9'>"
           f"<path d='{lines}' stroke='#999'/>{dots}{names}</svg>")
    return f"![{len(ranked)} most connected](data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()})"


def _xml(text: str) -> str:
    return (text or "").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&apos;")


def sample_rows(warehouse: Warehouse, table: str, columns: Sequence[str], limit: int = 5) -> dg.MetadataValue:
    """A few rows of a table, long text cut, as a Markdown table."""
    rows = warehouse.sample_rows(table, columns, limit)
    text_columns = [c for c, dtype in rows.schema.items() if dtype == pl.String]
    return markdown_table(rows.with_columns(pl.col(text_columns).str.replace_all(r"\s+", " ").str.slice(0, 80)))


def _md(frame: pl.DataFrame) -> str:
    return markdown_table(frame).value

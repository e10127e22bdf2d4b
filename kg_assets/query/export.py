"""`kg export FORMAT OUT`: the graph with ids, types, attributes and provenance, in four formats.

| format | OUT | read back with |
|---|---|---|
| graphml | one .graphml file | `networkx.read_graphml`, Gephi, yEd, Cytoscape |
| json | one node-link .json file | `networkx.node_link_graph(json.load(f), edges="edges")` |
| neo4j | a folder: nodes.csv, relationships.csv, chunks.csv, extracted_from.csv | `neo4j-admin database import full --nodes=nodes.csv --nodes=chunks.csv --relationships=relationships.csv --relationships=extracted_from.csv --multiline-fields=true` |
| parquet | a folder: nodes.parquet, edges.parquet, attributes.parquet, chunks.parquet, extracted_from.parquet | Polars, DuckDB, pandas, Spark |

Nodes carry their current attribute values (`attr_<key>` columns in GraphML and CSV, an `attributes`
object in JSON, attributes.parquet with validity and sources in Parquet) and their provenance
(`source_chunk_ids`); edges carry weight, keywords, description, `source_chunk_ids` and
`document_ids`. Provenance is in the graph too (seed 003): every chunk a node was extracted from is a
node (`kind` "Chunk": document, index, section path, offsets; entities have `kind` "Entity") and an
`EXTRACTED_FROM` edge, confidence 1.0, goes from the entity to it. GraphML has no list type, so lists are JSON strings there; the Neo4j CSV lists use
`;` (its default array delimiter; a `;` inside a value becomes `,`).

`as_of`: the graph as the current documents dated at or before that time describe it. Consolidation's
own rules (`core.consolidate`) rebuild nodes and edges from those documents' mentions and relations,
with today's linking decisions, and attributes are the values valid at that time.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from dataclasses import dataclass

from kg_assets.core.consolidate import EXTRACTED_FROM, build_edges, build_entities, build_nodes, provenance_edges
from kg_assets.core.linking import apply_redirects
from kg_assets.query.models import ExportResult
from kg_assets.storage.graph_reads import GraphReads

FORMATS = ("graphml", "json", "neo4j", "parquet")
NEO4J_ARRAY_DELIMITER = ";"
_NODE_COLUMNS = ("node_id", "name", "entity_type", "description", "aliases", "mention_count", "document_count",
                 "degree", "first_seen", "last_seen", "source_chunk_ids")


@dataclass(frozen=True)
class GraphFrames:
    nodes: pl.DataFrame  # entities, with `attributes` (list of {key, value})
    edges: pl.DataFrame  # relations
    attributes: pl.DataFrame
    chunks: pl.DataFrame  # the chunks the nodes were extracted from
    provenance: pl.DataFrame  # EXTRACTED_FROM edges, entity -> chunk, confidence 1.0


def provenance_edge_ids(provenance: pl.DataFrame) -> pl.Expr:
    """A provenance edge's id: "<entity id>::EXTRACTED_FROM::<chunk id>" (one edge per pair)."""
    return pl.concat_str("source_id", pl.lit(f"::{EXTRACTED_FROM}::"), "target_id").alias("edge_id")


def graph_frames(reads: GraphReads, as_of: datetime | None) -> GraphFrames:
    """The current graph, or the graph as of a time, with its provenance."""
    if as_of is None:
        nodes, edges = reads.current_graph()
    else:
        inputs = reads.consolidation_inputs(as_of)
        relations = apply_redirects(inputs["relations"], inputs["redirects"], ["source_id", "target_id"])
        entities = build_entities(inputs["mentions"], inputs["documents"], inputs["redirects"])
        edges = build_edges(relations, entities["entity_id"]).drop("valid_from", "valid_until")
        nodes = (build_nodes(entities, edges).rename({"label": "name"})
                 .join(entities.select(pl.col("entity_id").alias("node_id"), "document_count"), on="node_id")
                 .select(_NODE_COLUMNS).sort("node_id"))
    attributes = reads.attributes(as_of).join(nodes.select(pl.col("node_id").alias("entity_id")), on="entity_id",
                                              how="semi")
    per_node = attributes.group_by("entity_id").agg(
        pl.struct(pl.col("attr_key").alias("key"), "value").sort_by("attr_key").alias("attributes"))
    nodes = nodes.join(per_node, left_on="node_id", right_on="entity_id", how="left").with_columns(
        pl.col("attributes").fill_null([]))
    provenance = provenance_edges(nodes)
    chunks = reads.chunk_nodes(provenance["target_id"].unique().sort().to_list())
    provenance = provenance.join(chunks.select(pl.col("chunk_id").alias("target_id")), on="target_id", how="semi")
    provenance = provenance.select(provenance_edge_ids(provenance), pl.all())
    return GraphFrames(nodes, edges, attributes, chunks, provenance)


def _chunk_rows(chunks: pl.DataFrame) -> pl.DataFrame:
    """Chunk nodes as the node-link and GraphML exports write them (label "<document> #<index>")."""
    return chunks.select(
        pl.col("chunk_id").alias("node_id"),
        pl.concat_str("document_id", pl.lit(" #"), pl.col("chunk_index").cast(pl.String)).alias("name"),
        pl.lit("Chunk").alias("kind"), "document_id", pl.col("chunk_index").cast(pl.Int64), "section_path",
        "char_start", "char_end", pl.col("token_count").cast(pl.Int64))


def _attribute_columns(nodes: pl.DataFrame) -> list[pl.Expr]:
    """One `attr_<key>` column per attribute key any node has (null where a node lacks it)."""
    keys = nodes.select(pl.col("attributes").explode().struct.field("key")).drop_nulls().unique().to_series()
    return [pl.col("attributes").list.eval(pl.element().filter(pl.element().struct.field("key") == key)
                                           .struct.field("value")).list.first().alias(f"attr_{key}")
            for key in sorted(keys.to_list())]


# ---- GraphML ---------------------------------------------------------------------------------------------
# Written with vectorized Polars string expressions: networkx's writer takes about 25 s for the 290,000
# edges of the 10,000-document benchmark graph, this one about 2 s. networkx reads the result (tests).

_GRAPHML_TYPES = {pl.String: "string", pl.Int64: "long", pl.Int32: "int", pl.Float64: "double", pl.Boolean: "boolean"}
_XML_INVALID = r"[\x00-\x08\x0b\x0c\x0e-\x1f]"  # characters XML 1.0 cannot carry at all


def _graphml_values(frame: pl.DataFrame) -> pl.DataFrame:
    """Lists as JSON text and times as ISO text (GraphML has neither type); other columns unchanged."""
    def value(name: str, dtype: pl.DataType) -> pl.Expr:
        if isinstance(dtype, pl.List):
            # a one-field struct's JSON is {"name":[...]}: keep the [...]
            return pl.struct(name).struct.json_encode().str.slice(len(name) + 4).str.strip_suffix("}").alias(name)
        if isinstance(dtype, pl.Datetime):
            return pl.col(name).dt.strftime("%Y-%m-%dT%H:%M:%S%.6f%:z")
        return pl.col(name)
    return frame.select(value(name, dtype) for name, dtype in frame.schema.items())


def _xml_text(expr: pl.Expr) -> pl.Expr:
    return (expr.cast(pl.String).str.replace_all(_XML_INVALID, "").str.replace_all("&", "&amp;", literal=True)
            .str.replace_all("<", "&lt;", literal=True).str.replace_all(">", "&gt;", literal=True)
            .str.replace_all('"', "&quot;", literal=True))


def _graphml_elements(frame: pl.DataFrame, kind: str, attributes: dict[str, str], first: int) -> tuple[list[str], pl.Series]:
    """(<key> declarations, one <node>/<edge> element per row). `attributes` maps frame columns to the
    element's XML attributes (id, source, target); every other column becomes a <data> child."""
    values = _graphml_values(frame)
    data = [c for c in values.columns if c not in attributes]
    keys = [f'<key id="d{first + i}" for="{kind}" attr.name="{c}" attr.type="{_GRAPHML_TYPES.get(values.schema[c], "string")}"/>'
            for i, c in enumerate(data)]
    opening = [pl.lit(f"<{kind}")]
    for column, xml_name in attributes.items():
        opening += [pl.lit(f' {xml_name}="'), _xml_text(pl.col(column)), pl.lit('"')]
    children = [pl.when(pl.col(c).is_not_null()).then(pl.concat_str(pl.lit(f'<data key="d{first + i}">'),
                                                                     _xml_text(pl.col(c)), pl.lit("</data>")))
                .otherwise(pl.lit("")) for i, c in enumerate(data)]
    element = pl.concat_str([*opening, pl.lit(">"), *children, pl.lit(f"</{kind}>")])
    return keys, values.select(element.alias("xml")).to_series()


def write_graphml(graph: GraphFrames, out: Path, meta: dict) -> list[Path]:
    nodes = graph.nodes
    entity_rows = nodes.select("node_id", pl.col("name").alias("label"), pl.lit("Entity").alias("kind"),
                               *_NODE_COLUMNS[1:], *_attribute_columns(nodes))
    node_rows = pl.concat([entity_rows, _chunk_rows(graph.chunks).rename({"name": "label"})], how="diagonal")
    relation_rows = graph.edges.select("edge_id", "source_id", "target_id", pl.col("relation_type").alias("label"),
                                       pl.exclude("edge_id", "source_id", "target_id"))
    edge_rows = pl.concat([relation_rows, graph.provenance.with_columns(pl.col("relation_type").alias("label"))],
                          how="diagonal")
    node_keys, node_xml = _graphml_elements(node_rows, "node", {"node_id": "id"}, 0)
    edge_keys, edge_xml = _graphml_elements(edge_rows, "edge", {"edge_id": "id", "source_id": "source",
                                                                 "target_id": "target"}, len(node_keys))
    graph_data = {k: v for k, v in meta.items() if v is not None}
    first = len(node_keys) + len(edge_keys)
    graph_keys = [f'<key id="d{first + i}" for="graph" attr.name="{k}" attr.type="string"/>' for i, k in enumerate(graph_data)]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
        f.write("\n".join([*node_keys, *edge_keys, *graph_keys]) + '\n<graph edgedefault="directed">\n')
        for i, (key, value) in enumerate(graph_data.items()):
            f.write(f'<data key="d{first + i}">{value}</data>\n')
        for elements in (node_xml, edge_xml):
            for start in range(0, elements.len(), 50_000):
                f.write("\n".join(elements.slice(start, 50_000).to_list()) + "\n")
        f.write("</graph>\n</graphml>\n")
    return [out]


# ---- node-link JSON ------------------------------------------------------------------------------------

def write_node_link_json(graph: GraphFrames, out: Path, meta: dict) -> list[Path]:
    node_rows = [{"id": n.pop("node_id"), "kind": "Entity", **n,
                  "attributes": {a["key"]: a["value"] for a in n["attributes"]}}
                 for n in graph.nodes.iter_rows(named=True)]
    node_rows += [{"id": n.pop("node_id"), **n} for n in _chunk_rows(graph.chunks).iter_rows(named=True)]
    # Edges are most of the file: Polars writes their records (ISO times, lists as arrays) in one pass.
    edges = pl.concat([graph.edges, graph.provenance], how="diagonal")
    edge_rows = edges.select(pl.col("source_id").alias("source"), pl.col("target_id").alias("target"),
                             pl.col("edge_id").alias("key"), pl.all())
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        head = json.dumps({"directed": True, "multigraph": True, "graph": meta, "nodes": node_rows},
                          ensure_ascii=False, default=lambda v: v.isoformat())
        f.write(head[:-1] + ', "edges": ')
        f.write(edge_rows.write_json() if edge_rows.height else "[]")
        f.write("}")
    return [out]


# ---- Neo4j import CSV ----------------------------------------------------------------------------------

def _neo4j_list(column: str) -> pl.Expr:
    return (pl.col(column).list.eval(pl.element().str.replace_all(NEO4J_ARRAY_DELIMITER, ",", literal=True))
            .list.join(NEO4J_ARRAY_DELIMITER))


def _neo4j_time(column: str) -> pl.Expr:
    return pl.col(column).dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ")


def write_neo4j_csv(graph: GraphFrames, out: Path) -> list[Path]:
    """The `neo4j-admin database import` layout: typed headers, :ID/:LABEL, :START_ID/:END_ID/:TYPE;
    entities and chunks are two id spaces (Entity, Chunk)."""
    nodes, edges = graph.nodes, graph.edges
    node_rows = nodes.select(
        pl.col("node_id").alias("entity_id:ID(Entity)"),
        pl.concat_str(pl.lit("Entity"), pl.col("entity_type"), separator=NEO4J_ARRAY_DELIMITER).alias(":LABEL"),
        "name", pl.col("entity_type").alias("entity_type"), "description",
        _neo4j_list("aliases").alias("aliases:string[]"),
        pl.col("mention_count").alias("mention_count:long"),
        pl.col("document_count").alias("document_count:long"),
        pl.col("degree").alias("degree:long"),
        _neo4j_time("first_seen").alias("first_seen:datetime"),
        _neo4j_time("last_seen").alias("last_seen:datetime"),
        _neo4j_list("source_chunk_ids").alias("source_chunk_ids:string[]"),
        *_attribute_columns(nodes),
    )
    edge_rows = edges.select(
        pl.col("source_id").alias(":START_ID(Entity)"),
        pl.col("target_id").alias(":END_ID(Entity)"),
        pl.col("relation_type").alias(":TYPE"),
        "edge_id",
        pl.col("weight").alias("weight:long"),
        _neo4j_list("keywords").alias("keywords:string[]"),
        "description",
        _neo4j_list("source_chunk_ids").alias("source_chunk_ids:string[]"),
        _neo4j_list("document_ids").alias("document_ids:string[]"),
    )
    chunk_rows = graph.chunks.select(
        pl.col("chunk_id").alias("chunk_id:ID(Chunk)"), pl.lit("Chunk").alias(":LABEL"), "document_id",
        pl.col("chunk_index").alias("chunk_index:long"), "section_path", pl.col("char_start").alias("char_start:long"),
        pl.col("char_end").alias("char_end:long"), pl.col("token_count").alias("token_count:long"))
    provenance_rows = graph.provenance.select(
        pl.col("source_id").alias(":START_ID(Entity)"), pl.col("target_id").alias(":END_ID(Chunk)"),
        pl.col("relation_type").alias(":TYPE"), pl.col("confidence").alias("confidence:double"))
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "nodes.csv", out / "relationships.csv", out / "chunks.csv", out / "extracted_from.csv"]
    for frame, path in zip((node_rows, edge_rows, chunk_rows, provenance_rows), paths):
        frame.write_csv(path)
    return paths


def write_parquet(graph: GraphFrames, out: Path, meta: dict) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.parquet" for name in ("nodes", "edges", "attributes", "chunks", "extracted_from")]
    metadata = {k: str(v) for k, v in meta.items() if v is not None}
    for frame, path in zip((graph.nodes, graph.edges, graph.attributes, graph.chunks, graph.provenance), paths):
        frame.write_parquet(path, metadata=metadata)
    return paths


def export_graph(reads: GraphReads, fmt: str, out: Path, as_of: datetime | None) -> ExportResult:
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    graph = graph_frames(reads, as_of)
    meta = {"exported_at": datetime.now(UTC).isoformat(), "as_of": as_of.isoformat() if as_of else None,
            "source": "kg_assets"}
    if fmt == "graphml":
        paths = write_graphml(graph, out, meta)
    elif fmt == "json":
        paths = write_node_link_json(graph, out, meta)
    elif fmt == "neo4j":
        paths = write_neo4j_csv(graph, out)
    else:
        paths = write_parquet(graph, out, meta)
    return ExportResult(format=fmt, paths=[str(p) for p in paths], nodes=graph.nodes.height, edges=graph.edges.height,
                        chunks=graph.chunks.height, provenance_edges=graph.provenance.height, as_of=as_of)

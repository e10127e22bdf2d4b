"""Consolidation (unpartitioned): canonical entities and the knowledge graph from every partition."""


import dagster as dg
import polars as pl

from kg_assets.core.consolidate import MAX_DESCRIPTION_CHARS, build_edges, build_entities, build_nodes, summary_candidates
from kg_assets.core.extraction.prompts import build_summary_messages
from kg_assets.core.linking import NameLinker, apply_redirects, keep_created_at
from kg_assets.core.temporal import build_entity_attributes, resolve_entity_values
from kg_assets.core.planning import frame_digest
from kg_assets.defs.planner import OVERRIDES_DIGEST_KEY
from kg_assets.defs.extraction import export_calls
from kg_assets.defs.resources import ExtractorResource, WarehouseResource
from kg_assets.defs.tables import table_metadata

def consolidation_asset(deps: list, tables: tuple[str, ...], description: str):
    """An unpartitioned asset rebuilt from all partitions (DuckDB pool, graph group). No automation condition:
    the planner's runs consolidate after their partitions, in the same run."""
    return dg.asset(
        deps=deps,
        pool="duckdb",
        group_name="graph",
        kinds={"duckdb", "polars"},
        metadata=table_metadata(*tables),
        description=description,
    )


@consolidation_asset(
    deps=["documents", "entity_mentions"],
    tables=("entities", "entity_aliases"),
    description="Canonical entities (kg.entities) consolidated from every document's mentions; redirects in kg.entity_aliases.",
)
def linked_entities(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, extractor: ExtractorResource
) -> dg.MaterializeResult:
    wh = warehouse.get()
    mentions = wh.entity_mentions()
    documents = wh.document_times()
    overrides = wh.link_overrides()
    linker = NameLinker()
    redirects = keep_created_at(linker.link(mentions, overrides), wh.redirects())
    linked = apply_redirects(mentions, redirects, ["entity_id"])
    entities = summarize_descriptions(context, build_entities(mentions, documents, redirects), linked, extractor, wh)
    stats = wh.replace_current({"entities": (["entity_id"], entities)})["entities"]
    wh.replace_tables({"entity_aliases": redirects})
    methods = redirects.group_by("method").len().sort("method")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": stats["current"],
            "entities": stats["current"],
            "closed": stats["closed"],
            "redirects": redirects.height,
            "redirects_by_method": dg.MetadataValue.json(dict(zip(methods["method"], methods["len"]))),
            "overrides": overrides.height,
            "linker": linker.name,
            OVERRIDES_DIGEST_KEY: frame_digest(overrides),
            "mentions": mentions.height,
        }
    )


def summarize_descriptions(context, entities: pl.DataFrame, mentions: pl.DataFrame, extractor: ExtractorResource, wh):
    """Past a fragment-count threshold, an LLM condenses an entity's merged description (cached, so
    rebuilds stay deterministic); without an LLM, or if a call fails, the bounded merge stays."""
    candidates = summary_candidates(mentions, extractor.summary_min_fragments)
    if not extractor.uses_llm or candidates.height == 0:
        return entities
    engine = extractor.build_extractor(run_id=context.run_id)
    heads = candidates.join(entities.select("entity_id", "name", "entity_type"), on="entity_id")
    summaries = engine.summarize({
        entity_id: build_summary_messages(name, entity_type, fragments)
        for entity_id, fragments, name, entity_type in heads.select("entity_id", "fragments", "name", "entity_type").iter_rows()
    })
    export_calls(wh, engine.settings.cache_path)
    context.log.info(f"LLM summaries for {len(summaries):,} of {heads.height:,} entities with many description fragments")
    if not summaries:
        return entities
    summary = pl.DataFrame({"entity_id": list(summaries), "_summary": list(summaries.values())})
    return (
        entities.join(summary, on="entity_id", how="left")
        .with_columns(pl.coalesce(pl.col("_summary").str.slice(0, MAX_DESCRIPTION_CHARS), "description").alias("description"))
        .drop("_summary")
    )


@consolidation_asset(
    deps=[linked_entities, "local_relations"],
    tables=("graph_nodes", "graph_edges"),
    description="The consolidated graph: a node per canonical entity, an edge per (source, target, relation type).",
)
def knowledge_graph(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    wh = warehouse.get()
    entities = wh.current_entities()
    redirects = wh.redirects()
    relations = apply_redirects(wh.local_relations(), redirects, ["source_id", "target_id"])
    edges = build_edges(relations, entities["entity_id"])
    nodes = build_nodes(entities, edges)
    stats = wh.replace_current(
        {"graph_nodes": (["node_id"], nodes), "graph_edges": (["source_id", "target_id", "relation_type"], edges)}
    )
    context.log.info(f"graph: {stats['graph_nodes']['current']:,} nodes, {stats['graph_edges']['current']:,} edges")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": stats["graph_edges"]["current"],
            "nodes": stats["graph_nodes"]["current"],
            "edges": stats["graph_edges"]["current"],
            "nodes_closed": stats["graph_nodes"]["closed"],
            "edges_closed": stats["graph_edges"]["closed"],
            "relations": relations.height,
        }
    )


@consolidation_asset(
    deps=[linked_entities, "entity_mentions"],
    tables=("entity_attributes", "attribute_supersessions"),
    description="Time-versioned entity attributes (valid_from / valid_until in document time) from every "
    "attribute observation, with each supersession recorded; views entity_attributes_current / _history / _as_of.",
)
def entity_attributes(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    wh = warehouse.get()
    redirects = wh.redirects()
    mentions = apply_redirects(wh.entity_mentions(["entity_id", "name"]), redirects, ["entity_id"])
    entities = wh.current_entities(["entity_id", "name", "mention_count"])
    observations = resolve_entity_values(wh.attribute_observations(), mentions, entities)
    documents = wh.document_times()
    attributes, supersessions = build_entity_attributes(observations, documents, redirects)
    wh.replace_tables({"entity_attributes": attributes, "attribute_supersessions": supersessions})
    current = attributes.filter(pl.col("valid_until").is_null())
    context.log.info(f"{current.height:,} current attributes, {supersessions.height:,} supersessions")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": attributes.height,
            "observations": observations.height,
            "current_attributes": current.height,
            "history_rows": attributes.height - current.height,
            "supersessions": supersessions.height,
        }
    )

"""Consolidation (unpartitioned): canonical entities, their summaries, the graph and attribute history.

Each table a step writes is an asset of its own (multi_asset specs), and each table it reads is a
declared dependency, so the lineage in the UI is the data flow. No automation condition: the planner's
runs consolidate after their partitions, in the same run.
"""

import dagster as dg
import polars as pl

from kg_assets.core.chat import observation_message_times
from kg_assets.core.consolidate import (EDGE_INPUT_COLUMNS, ENTITY_INPUT_COLUMNS, build_edges, build_entities,
                                        build_nodes, summary_candidates, with_summaries)
from kg_assets.core.extraction.prompts import build_summary_messages
from kg_assets.core.linking import apply_redirects, keep_created_at, mention_columns, mention_total
from kg_assets.core.planning import frame_digest
from kg_assets.core.relation_schema import apply_relation_schema
from kg_assets.core.temporal import (attribute_digests, build_entity_attributes, resolve_entity_values,
                                     with_canonical_ids)
from kg_assets.defs.llm_calls import export_calls
from kg_assets.defs.planner import OVERRIDES_DIGEST_KEY
from kg_assets.defs.pools import Pools
from kg_assets.defs.previews import core_picture, graph_preview, top_entities
from kg_assets.defs.resources import ExtractorResource, GraphResource, WarehouseResource
from kg_assets.defs.tables import OWNERS, content_version, contract_version, table_asset, table_metadata, table_spec
from kg_assets.storage.consolidation import ConsolidationStore
from kg_assets.storage.facts import FactStore
from kg_assets.storage.warehouse import Warehouse, now_utc


# Written by `kg link split|merge`, outside any run: an external asset, so linking shows what it reads.
link_overrides = dg.AssetSpec(
    "link_overrides", group_name="graph", kinds={"duckdb"}, metadata=table_metadata("link_overrides"),
    owners=OWNERS, code_version=contract_version("link_overrides"),
    description="Manual linking decisions (`kg link split|merge|remove`), applied by every consolidation.",
)


def linked_entities(context: dg.AssetExecutionContext, warehouse: WarehouseResource, graph: GraphResource):
    wh = warehouse.get()
    linker = graph.build_linker()  # NameLinker, or the KG_LINKER plug-in
    if getattr(linker, "reads_linker_input", False):  # the NameLinker: its nodes and counts made in DuckDB
        mentions = wh.linker_input()
        mention_rows = mentions.mentions
    else:  # counted in DuckDB (one row per entity, document and surface form) for a linker that can read counts
        counted = getattr(linker, "reads_mention_counts", False)
        mentions = (wh.entity_mention_counts if counted else wh.entity_mentions)(mention_columns(linker))
        mention_rows = mention_total(mentions)
    overrides = wh.link_overrides()
    context.log.info(f"linking {mention_rows:,} mentions with {linker.name} {linker.version}")
    redirects = keep_created_at(graph.link(linker, mentions, overrides), wh.redirects())
    del mentions  # the entities are rebuilt a batch of keys at a time, from the warehouse
    store = ConsolidationStore(wh, redirects)
    times = wh.document_times()
    stats = store.rebuild("entities", lambda keys: build_entities(
        store.mentions_of(keys["entity_id"], ENTITY_INPUT_COLUMNS), times, redirects), graph.consolidation_batch_rows)
    wh.replace_tables({"entity_aliases": redirects})
    context.log.info(f"entities: {stats['rebuilt_keys']:,} rebuilt, {stats['current']:,} current (the others are made "
                     f"of the same mentions and links as at the last consolidation)")
    methods = redirects.group_by("method").len().sort("method")
    yield dg.MaterializeResult(asset_key="linked_entities", data_version=content_version(wh, "entities"), metadata={
        "dagster/row_count": stats["current"],
        "rebuilt_keys": stats["rebuilt_keys"],
        "closed": stats["closed"],
        "rows_written": stats["written"],
        "mentions": mention_rows,
        "linker": linker.name,
        "linker_version": linker.version,
        "linker_setting": graph.linker,
        "overrides": overrides.height,
        OVERRIDES_DIGEST_KEY: frame_digest(overrides),
    })
    yield dg.MaterializeResult(asset_key="entity_aliases", data_version=content_version(wh, "entity_aliases"), metadata={
        "dagster/row_count": redirects.height,
        "redirects_by_method": dg.MetadataValue.json(dict(zip(methods["method"], methods["len"]))),
    })


def entity_summaries(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                     extractor: ExtractorResource) -> dg.MaterializeResult:
    """LLM summaries of entities with many description fragments (KG_SUMMARY_MIN_FRAGMENTS), cached, so
    rebuilds stay deterministic; graph nodes show them. Empty without an LLM. Its calls go to kg.llm_calls."""
    wh = warehouse.get()
    candidates = None
    if extractor.uses_llm:
        fragments = apply_redirects(wh.entity_mentions(["entity_id", "description"]), wh.redirects(), ["entity_id"])
        candidates = summary_candidates(fragments, extractor.summary_min_fragments)
    rows = pl.DataFrame()
    if candidates is not None and candidates.height:
        engine = extractor.build_extractor(run_id=context.run_id)
        heads = candidates.join(wh.current_entities(["entity_id", "name", "entity_type"]), on="entity_id")
        summaries = engine.summarize({
            entity_id: build_summary_messages(name, entity_type, fragments)
            for entity_id, fragments, name, entity_type in heads.select("entity_id", "fragments", "name", "entity_type").iter_rows()
        })
        export_calls(wh, engine.settings.cache_path)
        context.log.info(f"LLM summaries for {len(summaries):,} of {heads.height:,} entities with many description fragments")
        counts = dict(heads.select("entity_id", pl.col("fragments").list.len()).iter_rows())
        rows = pl.DataFrame({"entity_id": list(summaries), "summary": list(summaries.values()),
                             "fragment_count": [counts[k] for k in summaries], "model": extractor.model,
                             "summarized_at": now_utc()})
    wh.replace_tables({"entity_summaries": rows})
    return dg.MaterializeResult(data_version=content_version(wh, "entity_summaries"), metadata={
        "dagster/row_count": rows.height,
        "candidates": 0 if candidates is None else candidates.height,
        "why_none": "no LLM configured" if candidates is None else "",
    })


def relation_types(wh: Warehouse, graph: GraphResource) -> tuple[pl.DataFrame, dict[str, object]]:
    """Each extracted relation type with the type its edges get under the relation schema (relation_type, mapped;
    a dropped type has no row), and what the schema did to the relations (counts, for the UI)."""
    counts = wh.relation_type_counts().with_columns(pl.col("relation_type").alias("raw"))
    mapped, schema_counts = apply_relation_schema(counts, graph.relation_types, graph.relation_type_map,
                                                  graph.unknown_relation_types, weight="rows")
    return mapped.select(pl.col("raw").alias("relation_type"), pl.col("relation_type").alias("mapped")), schema_counts


def knowledge_graph(context: dg.AssetExecutionContext, warehouse: WarehouseResource, graph: GraphResource):
    wh = warehouse.get()
    redirects = wh.redirects()
    types, schema_counts = relation_types(wh, graph)
    store = ConsolidationStore(wh, redirects, types)
    if schema_counts["unknown"] or schema_counts["mapped"]:
        context.log.info(f"relation types: {schema_counts['mapped']:,} renamed, {schema_counts['unknown']:,} outside "
                         f"KG_RELATION_TYPES ({schema_counts['unknown_as_related_to']:,} as RELATED_TO, "
                         f"{schema_counts['dropped']:,} dropped)")

    def edges_of(keys: pl.DataFrame) -> pl.DataFrame:
        relations = apply_redirects(store.relations_of(keys, EDGE_INPUT_COLUMNS), redirects, ["source_id", "target_id"])
        relations, _ = apply_relation_schema(relations, graph.relation_types, graph.relation_type_map,
                                             graph.unknown_relation_types)
        return build_edges(relations, pl.concat([keys["source_id"], keys["target_id"]]))

    def nodes_of(keys: pl.DataFrame) -> pl.DataFrame:
        ids = keys["node_id"]
        return build_nodes(with_summaries(store.entities_of(ids), store.summaries_of(ids)), store.edges_at(ids))

    edge_stats = store.rebuild("graph_edges", edges_of, graph.consolidation_batch_rows)
    node_stats = store.rebuild("graph_nodes", nodes_of, graph.consolidation_batch_rows)
    context.log.info(f"graph: {node_stats['current']:,} nodes, {edge_stats['current']:,} edges "
                     f"({node_stats['rebuilt_keys']:,} and {edge_stats['rebuilt_keys']:,} rebuilt)")
    yield dg.MaterializeResult(asset_key="graph_edges", data_version=content_version(wh, "graph_edges"), metadata={
        "dagster/row_count": edge_stats["current"], "rebuilt_keys": edge_stats["rebuilt_keys"],
        "closed": edge_stats["closed"], "rows_written": edge_stats["written"],
        "relations": schema_counts["relations"],
        "relation_schema": ", ".join(graph.relation_types) or "any type",
        "relation_types_mapped": schema_counts["mapped"], "relation_types_unknown": schema_counts["unknown"],
        "unknown_as_related_to": schema_counts["unknown_as_related_to"],
        "relations_dropped_by_schema": schema_counts["dropped"],
        "unknown_relation_types": dg.MetadataValue.json(schema_counts["unknown_types"]),
        "preview": graph_preview(wh)})
    yield dg.MaterializeResult(asset_key="graph_nodes", data_version=content_version(wh, "graph_nodes"), metadata={
        "dagster/row_count": node_stats["current"], "rebuilt_keys": node_stats["rebuilt_keys"],
        "closed": node_stats["closed"], "rows_written": node_stats["written"],
        "preview": dg.MetadataValue.md(top_entities(wh)), **core_picture(wh)})


def message_times(observations: pl.DataFrame, wh) -> pl.DataFrame:
    """observation_id -> observed_at for observations of chat documents: the time of the message they were
    read from, matched on the value as written (core/chat.py)."""
    messages = FactStore(wh).current_messages()
    chat = observations.filter(pl.col("document_id").is_in(messages["document_id"].unique().implode()))
    chunks = wh.read_partitions("chunks", chat["document_id"].unique().to_list())
    return observation_message_times(chat, chunks, messages)


def entity_attributes(context: dg.AssetExecutionContext, warehouse: WarehouseResource):
    wh = warehouse.get()
    redirects = wh.redirects()
    # each (id, surface name) once: the names values may resolve to, not 700k mention rows
    mentions = apply_redirects(wh.entity_mentions(["entity_id", "name"], distinct=True), redirects, ["entity_id"])
    entities = wh.current_entities(["entity_id", "name", "mention_count"])
    raw = wh.attribute_observations()
    observations = resolve_entity_values(raw, mentions, entities).join(message_times(raw, wh), on="observation_id",
                                                                        how="left")
    times = wh.document_times()
    # only the entities whose inputs changed since the last consolidation get their rows made again
    store = ConsolidationStore(wh, redirects)
    observations = with_canonical_ids(observations, redirects)
    changed, replace_all = store.changed_attribute_entities(attribute_digests(observations, times))
    if not replace_all:
        observations = observations.filter(pl.col("canonical_id").is_in(changed["entity_id"].implode()))
    attributes, supersessions = build_entity_attributes(observations.drop("canonical_id"), times, redirects)
    counts = store.replace_attribute_rows(changed, replace_all, attributes, supersessions)
    context.log.info(f"{counts['current']:,} current attributes, {counts['supersessions']:,} supersessions "
                     f"({changed.height:,} entities' rows made again{', all of them' if replace_all else ''})")
    yield dg.MaterializeResult(asset_key="entity_attributes", data_version=content_version(wh, "entity_attributes"), metadata={
        "dagster/row_count": counts["rows"],
        "rebuilt_keys": changed.height,
        "observations": raw.height,
        "observations_read_again": observations.height,
        "current_attributes": counts["current"],
        "history_rows": counts["rows"] - counts["current"],
    })
    yield dg.MaterializeResult(asset_key="attribute_supersessions", data_version=content_version(wh, "attribute_supersessions"),
                               metadata={"dagster/row_count": counts["supersessions"]})


def _spec(key: str, deps: list[str], description: str, table: str | None = None) -> dg.AssetSpec:
    return table_spec(key, group="graph", deps=deps, description=description, table=table)


def assets(pools: Pools) -> list[dg.AssetSpec | dg.AssetsDefinition]:
    """The consolidation steps (one at a time on the lake: `defs/pools.py`) and the LLM summaries."""
    consolidation = {"pool": pools.consolidation}
    return [
        link_overrides,
        dg.multi_asset(name="linked_entities", specs=[
            _spec("linked_entities", ["documents", "entity_mentions", "link_overrides"],
                  "Canonical entities (kg.entities) consolidated from every document's mentions (versioned).",
                  table="entities"),
            _spec("entity_aliases", ["entity_mentions", "link_overrides"],
                  "Linking decisions: which extracted id redirects to which canonical entity, with method and evidence."),
        ], **consolidation)(linked_entities),
        table_asset("entity_summaries", group="graph", kinds=frozenset({"duckdb", "openai"}),
                    deps=["linked_entities", "entity_aliases", "entity_mentions"], pool=pools.llm)(entity_summaries),
        dg.multi_asset(name="knowledge_graph", specs=[
            _spec("graph_nodes", ["linked_entities", "entity_summaries", "graph_edges"],
                  "A node per canonical entity, with its degree and (where one exists) its LLM summary (versioned)."),
            _spec("graph_edges", ["linked_entities", "entity_aliases", "local_relations"],
                  "An edge per (source, target, relation type) with weight, keywords and provenance chunks (versioned)."),
        ], **consolidation)(knowledge_graph),
        dg.multi_asset(name="entity_attributes", specs=[
            _spec("entity_attributes",
                  ["linked_entities", "entity_aliases", "entity_mentions", "attribute_observations", "documents",
                   "messages"],
                  "Time-versioned entity attributes (valid_from / valid_until in document time, or the time of the chat "
                  "message they were read from) from every attribute observation; views entity_attributes_current / "
                  "_history / _as_of."),
            _spec("attribute_supersessions", ["entity_attributes"],
                  "Each change of an attribute value: the SUPERSEDES row with the old and new value."),
        ], **consolidation)(entity_attributes),
    ]

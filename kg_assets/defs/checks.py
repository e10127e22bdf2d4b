"""Asset checks: one current row per key, referential integrity, extraction health.

Blocking checks stop downstream assets from being built on wrong data.
"""

import dagster as dg
import polars as pl

from kg_assets.core.consolidate import misnamed_entities
from kg_assets.defs.resources import CheckThresholds, WarehouseResource
from kg_assets.storage.facts import FactStore


def kg_check(*, asset: str, description: str, blocking: bool = True):
    """An asset check of one asset, as `@dg.asset_check` makes it, but with its own output name
    (`<asset>_<check>`), not `result`: Dagster orders an asset's blocking checks by output name, so with
    equal names a job's snapshot (its version in the UI) changed from one process to the next."""
    def decorate(fn):
        spec = dg.AssetCheckSpec(fn.__name__, asset=asset, description=description, blocking=blocking)
        return dg.multi_asset_check(specs=[spec], name=f"{asset}_{fn.__name__}")(fn)
    return decorate


def _result(violations: pl.DataFrame, what: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=violations.height == 0,
        metadata={
            "violations": violations.height,
            "sample": dg.MetadataValue.md(str(violations.head(10)) if violations.height else "none"),
        },
        description=f"{violations.height} {what}" if violations.height else None,
    )


@kg_check(asset="documents", description="kg.documents has one current row per document_id.")
def documents_one_current_row(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(warehouse.get().duplicate_current_keys("documents", ["document_id"]), "documents with several current rows")


@kg_check(asset="chunks", description="Every chunk belongs to a current document.")
def chunks_have_documents(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(warehouse.get().orphans("chunks", "document_id", "documents", "document_id", parent_current=True),
                   "chunks of unknown documents")


@kg_check(asset="entity_mentions", description="Every mention's chunk exists in kg.chunks.")
def mentions_have_chunks(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(warehouse.get().orphans("entity_mentions", "chunk_id", "chunks", "chunk_id"), "mentions of missing chunks")


@kg_check(asset="local_relations", description="Both endpoints of every relation are mentioned entities.")
def relation_endpoints_exist(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(warehouse.get().relation_endpoint_orphans(), "relation endpoints without a mention")


@kg_check(
    asset="entity_mentions", blocking=False,
    description="Shares of chunks whose extraction failed (KG_MAX_FAILED_CHUNK_SHARE, default 0.2) or found no "
    "entity (KG_MAX_EMPTY_CHUNK_SHARE, default 0.5) stay under their thresholds: a run that 'succeeds' with "
    "nothing extracted fails here. The thresholds are fields of the check_thresholds resource.",
)
def extraction_health(warehouse: WarehouseResource, check_thresholds: CheckThresholds) -> dg.AssetCheckResult:
    max_failed, max_empty = check_thresholds.max_failed_chunk_share, check_thresholds.max_empty_chunk_share
    stats = warehouse.get().extraction_stats()
    failed_share = stats["failed"] / stats["chunks"] if stats["chunks"] else 0.0
    empty_share = stats["empty"] / stats["chunks"] if stats["chunks"] else 0.0
    reasons = [f"{stats[what]:,} of {stats['chunks']:,} chunks {said} ({share:.0%}, at most {limit:.0%} allowed by "
               f"{variable})"
               for what, said, share, limit, variable in (
                   ("failed", "failed extraction", failed_share, max_failed, "KG_MAX_FAILED_CHUNK_SHARE"),
                   ("empty", "came back with no entity", empty_share, max_empty, "KG_MAX_EMPTY_CHUNK_SHARE"))
               if share > limit]
    return dg.AssetCheckResult(
        passed=not reasons,
        metadata={**stats, "failed_share": failed_share, "empty_share": empty_share,
                  "max_failed_share": max_failed, "max_empty_share": max_empty},
        description="; ".join(reasons) or None,
    )


@kg_check(asset="linked_entities", description="kg.entities has one current row per entity_id.")
def entities_one_current_row(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(warehouse.get().duplicate_current_keys("entities", ["entity_id"]), "entities with several current rows")


@kg_check(asset="linked_entities",
                description="Every redirect in kg.entity_aliases targets a current entity; no self-links, chains or cycles.")
def redirects_resolve(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(warehouse.get().redirect_problems(), "bad redirects")


@kg_check(asset="linked_entities",
                description="Every current entity's id is made of its own entity_type and normalized_name "
                            "(and its document, for a lower-case description).")
def entity_ids_match_names(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    wh = warehouse.get()
    entities = wh.current_entities(["entity_id", "entity_type", "normalized_name", "name"])
    mentions = wh.mention_names()
    return _result(misnamed_entities(entities, mentions),
                   "entities whose id is not their type and normalized name (and document, for a description)")


@kg_check(asset="entity_attributes",
                description="kg.entity_attributes has one current row per (entity_id, attr_key).")
def attributes_one_current_row(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(warehouse.get().duplicate_current_keys("entity_attributes", ["entity_id", "attr_key"]),
                   "attributes with several current values")


@kg_check(asset="graph_edges",
                description="kg.graph_edges has one current row per (source_id, target_id, relation_type).")
def edges_one_current_row(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(warehouse.get().duplicate_current_keys("graph_edges", ["source_id", "target_id", "relation_type"]),
                   "edges with several current rows")


@kg_check(asset="graph_nodes", description="kg.graph_nodes has one current row per node_id.")
def nodes_one_current_row(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(warehouse.get().duplicate_current_keys("graph_nodes", ["node_id"]), "nodes with several current rows")


@kg_check(asset="graph_edges", description="Every current edge joins two current nodes.")
def edges_join_current_nodes(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    wh = warehouse.get()
    missing = pl.concat([
        wh.orphans("graph_edges", column, "graph_nodes", "node_id", parent_current=True).rename({column: "node_id"})
        for column in ("source_id", "target_id")
    ]).unique()
    return _result(missing, "edge endpoints that are not current nodes")


@kg_check(asset="messages",
                description="kg.messages has one current row per (document_id, message_id).")
def messages_one_current_row(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(warehouse.get().duplicate_current_keys("messages", ["document_id", "message_id"]),
                   "messages with several current rows")


@kg_check(asset="user_facts",
                description="kg.user_facts has at most one active fact per (user_id, fact_key).")
def user_facts_one_active_per_key(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(FactStore(warehouse.get()).duplicate_active_facts(), "users with several active facts of one key")


@kg_check(asset="user_facts",
                description="Every automatic fact was learned from a current message in kg.messages.")
def facts_have_messages(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(FactStore(warehouse.get()).facts_without_messages(), "automatic facts without a current message")


@kg_check(asset="user_facts",
                description="No message, fact, extraction outcome or chat-user row of a forgotten user remains.")
def no_facts_of_forgotten_users(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _result(FactStore(warehouse.get()).forgotten_user_rows(), "tables holding rows of forgotten users")


checks = [
    documents_one_current_row,
    chunks_have_documents,
    mentions_have_chunks,
    relation_endpoints_exist,
    extraction_health,
    entities_one_current_row,
    redirects_resolve,
    entity_ids_match_names,
    attributes_one_current_row,
    edges_one_current_row,
    nodes_one_current_row,
    edges_join_current_nodes,
    messages_one_current_row,
    user_facts_one_active_per_key,
    facts_have_messages,
    no_facts_of_forgotten_users,
]

"""Graph access without SQL: search, entity profiles, context blocks for prompts, export and pictures.

One typed API under the `kg search|show|context|export|picture` commands; see `KnowledgeGraph`.
"""

from kg_assets.query.graph import EntityNotFound, EntitySearchOff, KnowledgeGraph
from kg_assets.query.lookup import build_entity_lookup, refresh_entity_lookup
from kg_assets.query.models import (
    Alias, AttributeVersion, ContextBlock, ContextEntity, EntityProfile, ExportResult, GraphEdge, GraphNode, Relation,
    MemoryHit, SearchHit, SearchResult, SourceSnippet, Subgraph,
)
from kg_assets.storage.graph_reads import WarehouseNotBuilt

__all__ = [
    "Alias", "AttributeVersion", "ContextBlock", "ContextEntity", "EntityNotFound", "EntityProfile", "EntitySearchOff",
    "ExportResult",
    "GraphEdge", "GraphNode", "KnowledgeGraph", "MemoryHit", "Relation", "SearchHit", "SearchResult", "SourceSnippet", "Subgraph",
    "WarehouseNotBuilt", "build_entity_lookup", "refresh_entity_lookup",
]

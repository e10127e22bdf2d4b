"""What the query API returns: pydantic models (JSON-ready with `.model_dump(mode="json")`)."""

from __future__ import annotations

from datetime import datetime

import polars as pl
from pydantic import BaseModel, Field


class SearchHit(BaseModel):
    entity_id: str
    name: str
    entity_type: str
    score: float
    match: str = Field(description="exact | prefix | token | containment | fuzzy")
    why: str = Field(description="what matched, in words")
    attributes: dict[str, str] = Field(description="current attribute values (or valid at as_of)")
    mention_count: int
    document_count: int


class MemoryHit(BaseModel):
    """A document or chat message linked to a matching entity (seed 002's searchMemories)."""

    document_id: str
    message_id: str | None = Field(None, description="the chat message, for a chat log")
    title: str | None
    document_time: datetime | None
    score: float = Field(description="1.0 linked by an attribute value read from it, 0.7 by a mention of the entity")
    source: str = Field(description="entity_attr | keyword")
    entity_id: str
    entity_name: str
    why: str = Field(description="the attribute value or the mention that links it")
    snippet: str


class SearchResult(BaseModel):
    query: str
    kind: str = Field(description="entity | attr")
    as_of: datetime | None = None
    hits: list[SearchHit]
    memories: list[MemoryHit] = Field(default_factory=list,
                                      description="documents and messages linked to the hits, best first (memories=N)")

    def to_frame(self) -> pl.DataFrame:
        """One row per hit; attributes as a list of {key, value}."""
        rows = [{**hit.model_dump(), "attributes": [{"key": k, "value": v} for k, v in hit.attributes.items()]}
                for hit in self.hits]
        return pl.DataFrame(rows, schema=_HIT_SCHEMA)


_HIT_SCHEMA = {
    "entity_id": pl.String, "name": pl.String, "entity_type": pl.String, "score": pl.Float64, "match": pl.String,
    "why": pl.String, "attributes": pl.List(pl.Struct({"key": pl.String, "value": pl.String})),
    "mention_count": pl.Int64, "document_count": pl.Int64,
}


class Alias(BaseModel):
    alias: str
    from_id: str = Field(description="the extracted entity id that carried this surface form")
    mentions: int
    method: str | None = Field(None, description="linking rule that merged from_id (null: the entity's own id)")
    score: float | None = None
    evidence: str | None = None


class AttributeVersion(BaseModel):
    key: str
    value: str
    valid_from: datetime
    valid_until: datetime | None
    is_current: bool
    confidence: float | None
    source_document_ids: list[str]


class Relation(BaseModel):
    direction: str = Field(description="out: this entity is the source | in: the target")
    relation_type: str
    other_id: str
    other_name: str | None
    other_type: str | None
    weight: int
    keywords: list[str]
    description: str | None
    document_ids: list[str]


class SourceSnippet(BaseModel):
    document_id: str
    title: str | None
    document_time: datetime | None
    chunk_id: str
    snippet: str


class GraphNode(BaseModel):
    node_id: str
    label: str
    entity_type: str
    degree: int
    mention_count: int
    hop: int | None = Field(None, description="distance from the centre of a neighbourhood")


class GraphEdge(BaseModel):
    source_id: str
    target_id: str
    relation_type: str
    weight: int


class Subgraph(BaseModel):
    """Some nodes and every current edge among them (a neighbourhood, or the most connected core)."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]


class EntityProfile(BaseModel):
    entity_id: str
    name: str
    entity_type: str
    description: str | None
    mention_count: int
    document_count: int
    degree: int
    first_seen: datetime | None
    last_seen: datetime | None
    aliases: list[Alias]
    attributes: dict[str, str] = Field(description="current values (or valid at as_of)")
    attribute_history: list[AttributeVersion]
    relations: list[Relation]
    relations_total: dict[str, int] = Field(description="edges out and in, including those not listed")
    sources: list[SourceSnippet]
    documents_total: int
    neighbourhood: Subgraph | None = None
    also_named: list[str] = Field([], description="other entities the name or alias names exactly")


class ContextEntity(BaseModel):
    entity_id: str
    name: str
    entity_type: str
    mentions_in_text: int
    links_in_text: int = Field(description="relations to other entities the text names")
    mention_count: int
    attributes: dict[str, str]


class ContextBlock(BaseModel):
    text: str = Field(description="the block to put into a prompt")
    tokens: int
    max_tokens: int
    entities: list[ContextEntity] = Field(description="every entity the text names, most relevant first")
    included_entities: int
    included_relations: int
    included_sources: int


class ExportResult(BaseModel):
    format: str
    paths: list[str]
    nodes: int
    edges: int
    chunks: int = 0  # chunk nodes the EXTRACTED_FROM edges point at
    provenance_edges: int = 0
    as_of: datetime | None = None

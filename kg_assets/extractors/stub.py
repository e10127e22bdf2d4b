"""An instant extractor for benchmarks and tests: 3 entities and 2 relations per chunk, no model, no I/O.

It is what peers' benchmarks call "an instant stub LLM", run in-process through the plug-in setting:
`KG_EXTRACTOR=kg_assets.extractors.stub:InstantStubExtractor`. The names come from the chunk id, so two
chunks rarely share an entity (like a model reading different text) and reruns give the same rows.

`ZipfStubExtractor` is the stub the peer benchmark (`benchmarks/peers.py`) gives kg_assets: the same 3
entities and 2 relations per chunk that nano-graphrag and LightRAG get from their stub LLM, names drawn
Zipf-like from one fixed pool with the RNG seeded by the chunk text (`zipf_stub.py`), so a few entities
recur across many chunks, as in a real corpus.
"""

from __future__ import annotations

import polars as pl

from kg_assets.core.extraction.rows import ChunkRecords, ExtractionResult, MentionRecord, RelationRecord, build_rows
from kg_assets.extractors import zipf_stub

TYPES = ("PERSON", "ORGANIZATION", "LOCATION")


class InstantStubExtractor:
    name = "instant-stub"
    version = "instant-stub-1"

    def extract(self, chunks: pl.DataFrame) -> ExtractionResult:
        records = []
        for chunk_id, document_id, chunk_hash in chunks.select("chunk_id", "document_id", "content_hash").iter_rows():
            tag = chunk_id[-6:]
            mentions = [MentionRecord(f"Stub {kind.title()} {tag}", kind, f"stub {kind.lower()}") for kind in TYPES]
            relations = [RelationRecord(0, 1, "WORKS_FOR"), RelationRecord(1, 2, "LOCATED_IN")]
            records.append(ChunkRecords(chunk_id, document_id, chunk_hash, mentions=mentions, relations=relations))
        return build_rows(records, extractor=self.name, extractor_version=self.version)


class ZipfStubExtractor:
    """3 entities and 2 relations per chunk from :func:`kg_assets.extractors.zipf_stub.draw` of its text."""

    name = "zipf-stub"
    version = "zipf-stub-1"

    def extract(self, chunks: pl.DataFrame) -> ExtractionResult:
        records = []
        for chunk_id, document_id, chunk_hash, text in chunks.select(
                "chunk_id", "document_id", "content_hash", "text").iter_rows():
            entities, relations = zipf_stub.draw(text or "")
            mentions = [MentionRecord(e.name, e.type, e.description) for e in entities]
            rels = [RelationRecord(r.source, r.target, "WORKS_WITH", keywords=r.keywords, description=r.description,
                                   strength=r.strength) for r in relations]
            records.append(ChunkRecords(chunk_id, document_id, chunk_hash, mentions=mentions, relations=rels))
        return build_rows(records, extractor=self.name, extractor_version=self.version)

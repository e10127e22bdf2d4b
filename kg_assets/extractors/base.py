"""The extractor interface every engine (heuristic, OpenAI-compatible LLM) implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import polars as pl

from kg_assets.core import schemas


@dataclass(frozen=True)
class ExtractionResult:
    """Frames conforming to ENTITY_MENTIONS, LOCAL_RELATIONS, CHUNK_EXTRACTIONS, ATTRIBUTE_OBSERVATIONS."""

    mentions: pl.DataFrame
    relations: pl.DataFrame
    chunk_status: pl.DataFrame
    attributes: pl.DataFrame = field(default_factory=lambda: schemas.empty(schemas.ATTRIBUTE_OBSERVATIONS))
    calls: pl.DataFrame = field(default_factory=lambda: schemas.empty(schemas.LLM_CALLS))  # LLM requests and cache hits

    @classmethod
    def empty(cls) -> ExtractionResult:
        return cls(
            schemas.empty(schemas.ENTITY_MENTIONS),
            schemas.empty(schemas.LOCAL_RELATIONS),
            schemas.empty(schemas.CHUNK_EXTRACTIONS),
        )


class Extractor(Protocol):
    name: str
    version: str  # part of staleness: rows made by another version are re-extracted

    def extract(self, chunks: pl.DataFrame) -> ExtractionResult:
        """Extract from a frame with at least chunk_id, document_id, text, section_path, content_hash.

        Must never raise for one bad chunk: a failing chunk gets a status row with status='error'.
        """
        ...

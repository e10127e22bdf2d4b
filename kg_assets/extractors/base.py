"""The extractor interface every engine (heuristic, OpenAI-compatible LLM) implements."""

from __future__ import annotations

import hashlib
import json
from typing import Protocol

import polars as pl

from kg_assets.core.extraction.rows import ExtractionResult

__all__ = ["ExtractionResult", "Extractor", "settings_digest"]


class Extractor(Protocol):
    name: str
    version: str  # part of staleness: rows made by another version are re-extracted

    def extract(self, chunks: pl.DataFrame) -> ExtractionResult:
        """Extract from a frame with at least chunk_id, document_id, text, section_path, content_hash.

        Must never raise for one bad chunk: a failing chunk gets a status row with status='error'.
        Rows are made by :func:`kg_assets.core.extraction.rows.build_rows`, so ids follow one rule.
        """
        ...


def settings_digest(**settings: object) -> str:
    """Six hex digits of sha256 over the settings that change an extractor's output (part of its version)."""
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=list)
    return hashlib.sha256(canonical.encode()).hexdigest()[:6]

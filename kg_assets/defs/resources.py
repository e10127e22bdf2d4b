"""Resources: the DuckDB warehouse, pipeline settings and the extractor. Defaults come from env vars."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from kg_assets.core.chunking import ChunkingConfig
from kg_assets.core.documents import DEFAULT_MAX_BYTES
from kg_assets.llm.base import Extractor
from kg_assets.llm.heuristic import HeuristicExtractor
from kg_assets.storage.warehouse import Warehouse, db_path_from_env


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB file holding schema `kg` (env KG_DUCKDB_PATH)."""

    db_path: str

    def get(self) -> Warehouse:
        return Warehouse(self.db_path)


class PipelineSettings(dg.ConfigurableResource):
    """Where documents come from and how they are cut."""

    inbox_dir: str
    chunk_tokens: int = 600
    chunk_overlap_tokens: int = 80
    max_document_bytes: int = DEFAULT_MAX_BYTES

    def chunking(self) -> ChunkingConfig:
        return ChunkingConfig(max_tokens=self.chunk_tokens, overlap_tokens=self.chunk_overlap_tokens)


class ExtractorResource(dg.ConfigurableResource):
    """Which extraction engine runs. `auto` uses an LLM when one is configured, else the heuristic."""

    engine: str = "auto"

    def get(self) -> Extractor:
        if self.engine not in {"auto", "heuristic"}:
            raise dg.Failure(f"unknown extraction engine {self.engine!r}; expected 'auto' or 'heuristic'")
        return HeuristicExtractor()

    def describe(self, extractor: Extractor) -> str:
        if extractor.name == "heuristic":
            return "offline heuristic extractor (no LLM configured: set OPENAI_API_KEY or OPENAI_BASE_URL)"
        return f"{extractor.name} {extractor.version}"


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def default_resources() -> dict[str, dg.ConfigurableResource]:
    return {
        "warehouse": WarehouseResource(db_path=str(Path(db_path_from_env()).resolve())),
        "settings": PipelineSettings(
            inbox_dir=os.environ.get("KG_INBOX", "data/inbox"),
            chunk_tokens=_env_int("KG_CHUNK_TOKENS", 600),
            chunk_overlap_tokens=_env_int("KG_CHUNK_OVERLAP_TOKENS", 80),
            max_document_bytes=_env_int("KG_MAX_DOCUMENT_BYTES", DEFAULT_MAX_BYTES),
        ),
        "extractor": ExtractorResource(engine=os.environ.get("KG_EXTRACTOR", "auto")),
    }

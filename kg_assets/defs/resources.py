"""Resources: the DuckDB warehouse, pipeline settings and the extractor. Defaults come from env vars."""

import os
from pathlib import Path

import dagster as dg
from pydantic import Field

from kg_assets.core.chunking import ChunkingConfig
from kg_assets.core.documents import DEFAULT_MAX_BYTES
from kg_assets.core.extraction.prompts import DEFAULT_ENTITY_TYPES
from kg_assets.extractors.base import Extractor
from kg_assets.extractors.heuristic import HeuristicExtractor
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
    """The extraction engine. `auto` uses the LLM when an API key or base URL is set, else the heuristic."""

    engine: str = Field("auto", description="auto | heuristic | llm")
    model: str = "gpt-4o-mini"
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp, Azure)")
    api_key: str | None = None
    output_format: str = Field("tuple", description="tuple (line-delimited records) | structured (instructor)")
    temperature: float = 0.0
    max_completion_tokens: int = 2000
    timeout_s: float = 60.0
    max_retries: int = 4
    concurrency: int = 16
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    max_gleanings: int = 1
    gleaning: str = Field("auto", description="auto: glean only after a cut, unparseable or 'more remain' answer | always")
    entity_types: list[str] = Field(default_factory=lambda: list(DEFAULT_ENTITY_TYPES))
    unknown_types: str = Field("other", description="other | drop")
    orphan_relations: str = Field("drop", description="drop | add")
    max_entities: int = 60
    max_relations: int = 80
    max_attributes: int = 30
    prompt_price_per_1m: float = 0.0
    completion_price_per_1m: float = 0.0
    cache_path: str = "data/llm_cache.sqlite"
    summary_min_fragments: int = Field(
        8, description="entities with this many distinct description fragments get an LLM summary (0: never)")

    @property
    def uses_llm(self) -> bool:
        if self.engine not in {"auto", "heuristic", "llm"}:
            raise dg.Failure(f"unknown extraction engine {self.engine!r}; expected auto, heuristic or llm")
        return self.engine == "llm" or (self.engine == "auto" and bool(self.api_key or self.base_url))

    def get(self, run_id: str | None = None, progress=None) -> Extractor:
        if not self.uses_llm:
            return HeuristicExtractor(entity_types=tuple(self.entity_types))
        from dataclasses import fields

        from kg_assets.extractors.llm.engine import LLMExtractor, LLMSettings

        # The resource's fields carry the same names as the engine's settings.
        values = {f.name: getattr(self, f.name) for f in fields(LLMSettings)}
        values["entity_types"] = tuple(self.entity_types)
        return LLMExtractor(LLMSettings(**values), run_id=run_id, progress=progress)

    def describe(self, extractor: Extractor) -> str:
        if extractor.name == "heuristic":
            return "offline heuristic extractor (no LLM configured: set OPENAI_API_KEY or OPENAI_BASE_URL)"
        return f"LLM {self.model} at {self.base_url or 'api.openai.com'} ({self.output_format} format)"


def _env(name: str, default=None, cast=str):
    value = os.environ.get(name)
    return cast(value) if value not in (None, "") else default


def default_resources() -> dict[str, dg.ConfigurableResource]:
    db_path = str(Path(db_path_from_env()).resolve())
    return {
        "warehouse": WarehouseResource(db_path=db_path),
        "settings": PipelineSettings(
            inbox_dir=_env("KG_INBOX", "data/inbox"),
            chunk_tokens=_env("KG_CHUNK_TOKENS", 600, int),
            chunk_overlap_tokens=_env("KG_CHUNK_OVERLAP_TOKENS", 80, int),
            max_document_bytes=_env("KG_MAX_DOCUMENT_BYTES", DEFAULT_MAX_BYTES, int),
        ),
        "extractor": ExtractorResource(
            engine=_env("KG_EXTRACTOR", "auto"),
            model=_env("KG_LLM_MODEL", "gpt-4o-mini"),
            base_url=_env("OPENAI_BASE_URL"),
            # An EnvVar is resolved at run time and never shown in the UI.
            api_key=dg.EnvVar("OPENAI_API_KEY") if _env("OPENAI_API_KEY") else None,
            output_format=_env("KG_LLM_FORMAT", "tuple"),
            timeout_s=_env("KG_LLM_TIMEOUT_S", 60.0, float),
            max_retries=_env("KG_LLM_MAX_RETRIES", 4, int),
            concurrency=_env("KG_LLM_CONCURRENCY", 16, int),
            requests_per_minute=_env("KG_LLM_RPM", None, int),
            tokens_per_minute=_env("KG_LLM_TPM", None, int),
            max_gleanings=_env("KG_LLM_MAX_GLEANINGS", 1, int),
            gleaning=_env("KG_LLM_GLEANING", "auto"),
            unknown_types=_env("KG_UNKNOWN_TYPES", "other"),
            orphan_relations=_env("KG_ORPHAN_RELATIONS", "drop"),
            entity_types=_env("KG_ENTITY_TYPES", list(DEFAULT_ENTITY_TYPES), lambda v: [t.strip().upper() for t in v.split(",") if t.strip()]),
            prompt_price_per_1m=_env("KG_LLM_PROMPT_PRICE", 0.0, float),
            completion_price_per_1m=_env("KG_LLM_COMPLETION_PRICE", 0.0, float),
            summary_min_fragments=_env("KG_SUMMARY_MIN_FRAGMENTS", 8, int),
            cache_path=_env("KG_LLM_CACHE", str(Path(db_path).with_name("llm_cache.sqlite"))),
        ),
    }

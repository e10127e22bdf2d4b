"""Every setting of kg_assets, typed once, and the only place that reads the process environment.

Each field that an environment variable sets names that variable as its `validation_alias`, so an
invalid value is reported with the variable's name; fields can also be given by name (tests, the
Dagster resources built from these models, the launchpad). `Settings.from_env()` reads the
environment; `Settings(...)` built by hand reads nothing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsError

from kg_assets.core.chunking import ChunkingConfig
from kg_assets.core.documents import DEFAULT_MAX_BYTES
from kg_assets.core.extraction.prompts import DEFAULT_ENTITY_TYPES
from kg_assets.core.facts.context import DEFAULT_CONTEXT_CHARS
from kg_assets.core.facts.rules import DEFAULT_ENABLED, DEFAULT_RATE

API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
_SECRET_QUERY_KEYS = ("key", "token", "secret", "password", "sig")


def redact_url(url: str) -> str:
    """The URL as it may be shown or stored: user info (``user:secret@``) and secret-looking query values hidden."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = "&".join(
        f"{name}=***" if any(k in name.lower() for k in _SECRET_QUERY_KEYS) else f"{name}={value}" if sep else name
        for name, sep, value in (pair.partition("=") for pair in parts.query.split("&") if pair)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def has_credentials(url: str | None) -> bool:
    return bool(url) and redact_url(url) != url

_FIELDS = ConfigDict(validate_by_name=True, validate_by_alias=True, validate_default=True, extra="forbid")


class WarehouseSettings(BaseModel):
    """Where schema `kg` lives: one DuckDB file (default) or a DuckLake (PostgreSQL catalog + data folder)."""

    model_config = _FIELDS

    backend: Literal["duckdb", "ducklake"] = Field(
        "duckdb", validation_alias="KG_WAREHOUSE_BACKEND",
        description="duckdb: the embedded file KG_DUCKDB_PATH; ducklake: KG_DUCKLAKE_CATALOG + KG_DUCKLAKE_DATA_PATH")
    lake_catalog: str | None = Field(None, validation_alias="KG_DUCKLAKE_CATALOG",
                                     description="libpq DSN of the DuckLake catalog database, e.g. 'dbname=kg host=db'")
    lake_data_path: str | None = Field(None, validation_alias="KG_DUCKLAKE_DATA_PATH",
                                       description="folder (or s3:// prefix) of the DuckLake's Parquet files")

    db_path: str = Field("data/warehouse.duckdb", validation_alias="KG_DUCKDB_PATH",
                         description="DuckDB file holding schema kg; dbt reads it too")
    lock_timeout_s: float = Field(120.0, gt=0, validation_alias="KG_DUCKDB_LOCK_TIMEOUT_S",
                                  description="how long to wait for another process's lock on the file")
    dbt_replay_dir: str | None = Field(
        None, validation_alias="KG_DBT_REPLAY_DIR",
        description="folder where a dbt build of the marts records its compiled SQL, which later builds of the same "
                    "SQL replay without dbt (default: the dbt project's target/compiled_marts)")

    @field_validator("db_path")
    @classmethod
    def _absolute(cls, value: str) -> str:
        return str(Path(value).resolve())

    @model_validator(mode="after")
    def _lake_complete(self) -> WarehouseSettings:
        if self.backend == "ducklake" and not (self.lake_catalog and self.lake_data_path):
            raise ValueError("KG_WAREHOUSE_BACKEND=ducklake needs KG_DUCKLAKE_CATALOG and KG_DUCKLAKE_DATA_PATH")
        return self

    @field_validator("lake_data_path", "dbt_replay_dir")
    @classmethod
    def _absolute_folder(cls, value: str | None) -> str | None:
        return value if value is None or "://" in value else str(Path(value).resolve())


class IngestSettings(BaseModel):
    """Where documents come from and how they are cut. Fixed by the code location, not by run config."""

    model_config = _FIELDS

    inbox_dir: str = Field("data/inbox", validation_alias="KG_INBOX", description="folder of documents")
    chunk_tokens: int = Field(600, gt=0, validation_alias="KG_CHUNK_TOKENS")
    chunk_overlap_tokens: int = Field(80, ge=0, validation_alias="KG_CHUNK_OVERLAP_TOKENS")
    max_document_bytes: int = Field(DEFAULT_MAX_BYTES, gt=0, validation_alias="KG_MAX_DOCUMENT_BYTES")
    ingest_batch_bytes: int = Field(
        64 * 1024 * 1024, ge=1, validation_alias="KG_INGEST_BATCH_BYTES",
        description="bytes of files the documents step reads and writes, and the chunks step chunks and writes, "
        "at a time (whole documents; a larger file is a batch of its own): what bounds their memory, whatever the "
        "size of an arrival day; each batch is written as it finishes")

    @field_validator("inbox_dir")
    @classmethod
    def _absolute(cls, value: str) -> str:
        return str(Path(value).resolve())

    def chunking(self) -> ChunkingConfig:
        return ChunkingConfig(max_tokens=self.chunk_tokens, overlap_tokens=self.chunk_overlap_tokens)


COMPLETION_MARGIN_TOKENS = 256  # of an extraction answer's budget, whatever the chunk's size


class LLMSettings(BaseModel):
    """The LLM engine: endpoint, format, limits, sanitizing caps, prices and cache."""

    model_config = _FIELDS

    model: str = Field("gpt-4o-mini", validation_alias="KG_LLM_MODEL", description="model name sent to the endpoint")
    vision_model: str | None = Field(None, validation_alias="KG_VISION_MODEL",
                                     description="vision model that describes PDF figures and scanned pages (off: none)")
    # Shown and stored only through redact_url; with credentials in it, the Dagster resource refers to the variable.
    base_url: str | None = Field(None, validation_alias=BASE_URL_ENV,
                                 description="OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp, Azure)")
    # Never shown or stored: the Dagster resource refers to the variable instead of holding the value.
    api_key: str | None = Field(None, validation_alias=API_KEY_ENV, repr=False)
    output_format: Literal["tuple", "structured"] = Field(
        "tuple", validation_alias="KG_LLM_FORMAT",
        description="tuple (line records with partial recovery) | structured (instructor + pydantic)")
    temperature: float = 0.0
    max_completion_tokens: int = Field(
        2000, gt=0, validation_alias="KG_LLM_MAX_COMPLETION_TOKENS",
        description="ceiling of one answer's tokens (an extraction request asks for its chunk's budget below it)")
    completion_ratio: float = Field(
        2.0, gt=0, validation_alias="KG_LLM_COMPLETION_RATIO",
        description="an extraction answer's token budget: this many tokens per token of its chunk, plus "
        f"{COMPLETION_MARGIN_TOKENS}, at most KG_LLM_MAX_COMPLETION_TOKENS (a looping model stops there)")
    stream: bool = Field(
        True, validation_alias="KG_LLM_STREAM",
        description="tuple answers are streamed and read as they come: a loop or an echo of the prompt stops the "
        "answer there, keeping what parsed (false: for a server that cannot stream)")
    timeout_s: float = Field(60.0, gt=0, validation_alias="KG_LLM_TIMEOUT_S")
    max_retries: int = Field(4, ge=0, validation_alias="KG_LLM_MAX_RETRIES")
    concurrency: int = Field(16, gt=0, validation_alias="KG_LLM_CONCURRENCY")
    requests_per_minute: int | None = Field(None, gt=0, validation_alias="KG_LLM_RPM")
    tokens_per_minute: int | None = Field(None, gt=0, validation_alias="KG_LLM_TPM")
    max_gleanings: int = Field(1, ge=0, validation_alias="KG_LLM_MAX_GLEANINGS")
    gleaning: Literal["auto", "always"] = Field(
        "auto", validation_alias="KG_LLM_GLEANING",
        description="auto: glean only after a cut, unparseable or 'more remain' answer | always")
    entity_types: list[str] = Field(default_factory=lambda: list(DEFAULT_ENTITY_TYPES), min_length=1,
                                    validation_alias="KG_ENTITY_TYPES")
    unknown_types: Literal["other", "drop"] = Field("other", validation_alias="KG_UNKNOWN_TYPES")
    orphan_relations: Literal["drop", "add"] = Field("drop", validation_alias="KG_ORPHAN_RELATIONS")
    max_entities: int = Field(60, gt=0)
    max_relations: int = Field(80, gt=0)
    max_attributes: int = Field(30, gt=0)
    working_memory_tokens: int = Field(
        200, ge=0, validation_alias="KG_LLM_WORKING_MEMORY_TOKENS",
        description="prompt tokens of entities from a document's earlier chunks carried into the next (0: off)")
    prompt_price_per_1m: float = Field(0.0, ge=0, validation_alias="KG_LLM_PROMPT_PRICE")
    completion_price_per_1m: float = Field(0.0, ge=0, validation_alias="KG_LLM_COMPLETION_PRICE")
    cache_path: str = Field("data/llm_cache.sqlite", validation_alias="KG_LLM_CACHE",
                            description="response cache and call log (default: beside the warehouse)")

    @field_validator("entity_types", mode="before")
    @classmethod
    def _split_types(cls, value: Any) -> Any:
        # The environment gives "PERSON, PROTEIN,DISEASE".
        if isinstance(value, str):
            value = value.split(",")
        return [str(t).strip().upper() for t in value if str(t).strip()]

    @property
    def params(self) -> dict[str, object]:
        """Request parameters that change the answer, hence part of the cache key."""
        return {"temperature": self.temperature, "max_tokens": self.max_completion_tokens, "format": self.output_format}

    def completion_budget(self, chunk_tokens: int) -> int:
        """max_tokens of an extraction request (first pass or gleaning) for a chunk of ``chunk_tokens`` tokens."""
        return min(self.max_completion_tokens, COMPLETION_MARGIN_TOKENS + math.ceil(self.completion_ratio * chunk_tokens))

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prompt_price_per_1m + completion_tokens * self.completion_price_per_1m) / 1e6


class ExtractorSettings(LLMSettings):
    """Which extractor runs, and the LLM settings it uses when it is the LLM."""

    engine: str = Field(
        "auto", validation_alias="KG_EXTRACTOR",
        description="auto (the LLM when an API key or base URL is set, else the heuristic) | heuristic | llm | "
        "module:attr, a class or factory in the Python path that makes an extractor (kg_assets.extractors.base)")
    entity_extraction_enabled: bool = Field(
        True, validation_alias="KG_ENTITY_EXTRACTION_ENABLED",
        description="extract entities, relations and attributes from chunks at all (seed 002's entityExtractionEnabled); "
        "off: documents, chunks and messages are still ingested, no chunk is given to the extractor")
    extraction_batch_chunks: int = Field(
        5000, ge=1, validation_alias="KG_EXTRACTION_BATCH_CHUNKS",
        description="chunks read, extracted and written per batch within one extraction step: what bounds the "
        "step's memory; each batch is written as it finishes")
    extraction_processes: int = Field(
        0, ge=0, validation_alias="KG_EXTRACTION_PROCESSES",
        description="worker processes extracting a step's batches, for an extractor that runs in processes (the "
        "offline heuristic; not the LLM, whose requests run concurrently anyway): 0 is one per available core, 1 "
        "extracts in the step's own process; used from two batches on")
    summary_min_fragments: int = Field(
        8, ge=0, validation_alias="KG_SUMMARY_MIN_FRAGMENTS",
        description="entities with this many distinct description fragments get an LLM summary (0: never)")

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, value: str) -> str:
        if value in BUILTIN_ENGINES:
            return value
        plugin_factory(value)  # imports it now, so a typo stops the code location from loading
        return value

    @property
    def uses_llm(self) -> bool:
        return self.engine == "llm" or (self.engine == "auto" and bool(self.api_key or self.base_url))

    @property
    def describes_images(self) -> bool:
        """A vision model describes PDF figures and image-only (scanned) pages."""
        return self.uses_llm and bool(self.vision_model)


BUILTIN_ENGINES = ("auto", "heuristic", "llm")
EXTRACTOR_MEMBERS = ("name", "version", "extract")  # what an extractor plug-in must have


def plugin_factory(spec: str, members: tuple[str, ...] = EXTRACTOR_MEMBERS, kind: str = "extractor",
                   builtins: tuple[str, ...] = BUILTIN_ENGINES):
    """The class or factory `module:attr` names; ValueError (reported with the setting's variable) if it is none.
    The extractors' factory (kg_assets/extractors/factory.py) and the linker's (`build_linker`) call it to build
    the plug-in; `members` are what a class must have to be one."""
    import importlib

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        article = "an" if kind[0] in "aeiou" else "a"
        raise ValueError(f"expected {', '.join(builtins)} or module:attr naming {article} {kind} class or factory, "
                         f"got {spec!r}")
    try:
        target = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name!r}: {exc}") from exc
    for part in attr.split("."):
        if not hasattr(target, part):
            raise ValueError(f"module {module_name!r} has no {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"{spec} is not a class or factory")
    if isinstance(target, type) and (missing := [m for m in members if not hasattr(target, m)]):
        raise ValueError(f"{spec} does not implement the {kind} interface (no {', '.join(missing)})")
    return target


BUILTIN_LINKERS = ("name_rules",)
LINKER_MEMBERS = ("name", "version", "link")  # what a linker plug-in must have (kg_assets.core.linking.Linker)


def _upper_snake(value: str) -> str:
    import re

    return re.sub(r"[^0-9A-Z]+", "_", value.strip().upper()).strip("_")


class GraphSettings(BaseModel):
    """Consolidation into the graph (seed 003): which entity linker runs, and the relation-type schema."""

    model_config = _FIELDS

    linker: str = Field(
        "name_rules", validation_alias="KG_LINKER",
        description="name_rules (the rule-based NameLinker) | module:attr, a class or factory in the Python path "
        "that makes a linker (kg_assets.core.linking.Linker: name, version, link(mentions, overrides))")
    relation_types: list[str] = Field(
        default_factory=list, validation_alias="KG_RELATION_TYPES",
        description="allowed relation types of graph edges, comma-separated (empty: every type is kept)")
    relation_type_map: dict[str, str] = Field(
        default_factory=dict, validation_alias="KG_RELATION_TYPE_MAP",
        description="relation types renamed before the schema applies, e.g. 'EMPLOYED_BY=WORKS_AT,WORKS_FOR=WORKS_AT'")
    unknown_relation_types: Literal["related", "drop"] = Field(
        "related", validation_alias="KG_UNKNOWN_RELATION_TYPES",
        description="a type outside KG_RELATION_TYPES becomes RELATED_TO (when that is allowed) or is dropped")
    consolidation_batch_rows: int = Field(
        500_000, ge=1, validation_alias="KG_CONSOLIDATION_BATCH_ROWS",
        description="input rows (mentions, relations) a consolidation rebuilds at once: what bounds its memory")

    @field_validator("linker")
    @classmethod
    def _known_linker(cls, value: str) -> str:
        if value not in BUILTIN_LINKERS:
            plugin_factory(value, LINKER_MEMBERS, "linker", BUILTIN_LINKERS)  # a typo stops the code location
        return value

    @field_validator("relation_types", mode="before")
    @classmethod
    def _split_relation_types(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.split(",")
        return [t for t in (_upper_snake(str(v)) for v in value) if t]

    @field_validator("relation_type_map", mode="before")
    @classmethod
    def _parse_map(cls, value: Any) -> Any:
        if isinstance(value, str):  # the environment gives "EMPLOYED_BY=WORKS_AT, WORKS_FOR=WORKS_AT"
            pairs = [p.partition("=") for p in value.split(",") if p.strip()]
            if bad := [f"{k}{sep}{v}".strip() for k, sep, v in pairs if not (sep and k.strip() and v.strip())]:
                raise ValueError(f"expected TYPE=TYPE pairs separated by commas, got {', '.join(bad)}")
            value = {k: v for k, _, v in pairs}
        return {_upper_snake(str(k)): _upper_snake(str(v)) for k, v in dict(value).items()}


class SearchSettings(BaseModel):
    """`kg search` and `KnowledgeGraph.search` (seed 002's entitySearchEnabled)."""

    model_config = _FIELDS

    entity_search_enabled: bool = Field(
        True, validation_alias="KG_ENTITY_SEARCH_ENABLED",
        description="entity search (entity:NAME, attr:KEY=VALUE, bare names) at all; off: `kg search` refuses")


class CheckSettings(BaseModel):
    """Thresholds of the `extraction_health` check."""

    model_config = _FIELDS

    max_failed_chunk_share: float = Field(0.2, ge=0, le=1, validation_alias="KG_MAX_FAILED_CHUNK_SHARE",
                                          description="largest share of chunks whose extraction may fail")
    max_empty_chunk_share: float = Field(0.5, ge=0, le=1, validation_alias="KG_MAX_EMPTY_CHUNK_SHARE",
                                         description="largest share of chunks that may yield no entity")


class FactSettings(BaseModel):
    """Learning user facts from chat messages (seed 001): the switch, the sampling rate, the context size."""

    model_config = _FIELDS

    enabled: bool = Field(DEFAULT_ENABLED, validation_alias="FACT_EXTRACTION_ENABLED",
                          description="learn facts from chat messages at all")
    rate: float = Field(DEFAULT_RATE, ge=0.0, le=1.0, validation_alias="FACT_EXTRACTION_RATE",
                        description="share of messages offered to extraction, chosen by message id (0.0 none, 1.0 all)")
    context_chars: int = Field(DEFAULT_CONTEXT_CHARS, gt=0, validation_alias="KG_FACT_CONTEXT_CHARS",
                               description="size limit of `kg facts context` blocks, in characters")


class Settings(BaseModel):
    """All settings. Built by hand it reads nothing; `Settings.from_env()` reads the environment."""

    model_config = ConfigDict(extra="forbid")

    warehouse: WarehouseSettings = Field(default_factory=WarehouseSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    extractor: ExtractorSettings = Field(default_factory=ExtractorSettings)
    checks: CheckSettings = Field(default_factory=CheckSettings)
    facts: FactSettings = Field(default_factory=FactSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)

    @model_validator(mode="after")
    def _cache_beside_warehouse(self) -> Settings:
        if "cache_path" not in self.extractor.model_fields_set:
            self.extractor.cache_path = str(Path(self.warehouse.db_path).with_name("llm_cache.sqlite"))
        return self

    @classmethod
    def from_env(cls, overrides: Mapping[str, str] | None = None) -> Settings:
        """The settings given by environment variables (an unset or empty variable keeps the default).

        `overrides` ({VARIABLE: value}, e.g. from command-line options) win over the environment.
        Raises SettingsError naming each variable whose value is invalid."""
        sections = env_variables()
        given: dict[str, dict[str, str]] = {}
        for name, value in (overrides or {}).items():
            given.setdefault(sections[name].split(".")[0], {})[name] = value
        try:
            return _EnvSettings(**given)
        except ValidationError as exc:
            problems = "\n".join(
                f"  {'.'.join(map(str, e['loc'][1:] or e['loc']))}={e['input']!r}: {e['msg']}" for e in exc.errors())
            raise SettingsError(f"invalid kg_assets settings in the environment:\n{problems}") from None


def use_dagster_home(option: str | None) -> str:
    """The Dagster instance folder (the option, else DAGSTER_HOME, else the current folder), created and put
    in the environment, where Dagster itself reads it when the instance loads."""
    home = str(Path(option or os.environ.get("DAGSTER_HOME") or Path.cwd()).resolve())
    Path(home).mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = home
    return home


def use_dagster_event_batching() -> None:
    """Ranged runs write one planned event per asset instead of one per partition, and storages that can
    (PostgreSQL) write materialization events in batches. Dagster reads both flags from the environment;
    a value the user set wins."""
    os.environ.setdefault("DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS", "true")
    os.environ.setdefault("DAGSTER_EVENT_BATCH_SIZE", "1000")


def env_variables() -> dict[str, str]:
    """Every environment variable a setting reads -> `section.field` (for docs and tests)."""
    return {
        alias: f"{section}.{name}"
        for section, model in _sections().items()
        for name, field in model.model_fields.items()
        if isinstance(alias := field.validation_alias, str)
    }


def _sections() -> dict[str, type[BaseModel]]:
    return {name: field.annotation for name, field in Settings.model_fields.items()}


class _FlatEnvSource(PydanticBaseSettingsSource):
    """Each section's fields from the environment variables named by their aliases (no prefixes, no nesting)."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # every value is gathered in __call__

    def __call__(self) -> dict[str, Any]:
        values: dict[str, dict[str, str]] = {}
        for section, model in _sections().items():
            for field in model.model_fields.values():
                alias = field.validation_alias
                if isinstance(alias, str) and os.environ.get(alias, "") != "":
                    values.setdefault(section, {})[alias] = os.environ[alias]
        return values


class _EnvSettings(BaseSettings, Settings):
    """`Settings` read through pydantic-settings: overrides, then the flat environment variables."""

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings):
        return init_settings, _FlatEnvSource(settings_cls)  # overrides first

"""Dagster resources, each built from its section of `kg_assets.settings.Settings` (fields are not repeated).

A resource class is a Dagster `ConfigurableResource` and its settings model at once, so the launchpad
shows the same typed fields (choices as enums) and the code gets the same object the engine takes.
The ingest settings (inbox, chunk sizes) are a plain resource with no run config: a run cannot read
documents from anywhere but the inbox the code location was started with.
"""

import dagster as dg

from kg_assets.core import schemas
from kg_assets.core.facts.records import FactExtractor
from kg_assets.core.linking import Linker, NameLinker
from kg_assets.defs.partitions import RunScope
from kg_assets.extractors.base import Extractor
from kg_assets.extractors.factory import build_extractor, build_fact_extractor, describe_extractor
from kg_assets.settings import (
    API_KEY_ENV,
    BASE_URL_ENV,
    CheckSettings,
    ExtractorSettings,
    LINKER_MEMBERS,
    FactSettings,
    GraphSettings,
    IngestSettings,
    Settings,
    WarehouseSettings,
    has_credentials,
    plugin_factory,
)
from kg_assets.storage.warehouse import Warehouse


# Assets and sensors take the ingest settings as a plain resource value (no run config).
IngestResource = dg.ResourceParam[IngestSettings]


class WarehouseResource(dg.ConfigurableResource, WarehouseSettings):
    """The DuckDB file or DuckLake holding schema `kg`."""

    def get(self) -> Warehouse:
        return Warehouse.from_settings(self)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # A run's many short connections share one open of the file (storage/held_files.py).
        Warehouse.hold_files()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        Warehouse.let_go_of_files()


class ExtractorResource(dg.ConfigurableResource, ExtractorSettings):
    """The extraction engine. `auto` uses the LLM when an API key or base URL is set, else the heuristic.
    Assets get their engine from it, as from any Dagster client resource (kg_assets/extractors/factory.py)."""

    def build_extractor(self, run_id: str | None = None, progress=None) -> Extractor:
        return build_extractor(self, run_id=run_id, progress=progress)

    def build_fact_extractor(self, run_id: str | None = None) -> FactExtractor:
        return build_fact_extractor(self, run_id=run_id)

    def describe(self, extractor: Extractor | FactExtractor) -> str:
        return describe_extractor(self, extractor)


class GraphResource(dg.ConfigurableResource, GraphSettings):
    """Consolidation: the entity linker (KG_LINKER) and the relation-type schema (KG_RELATION_TYPES ...)."""

    def build_linker(self) -> Linker:
        """The linker KG_LINKER names: the rule-based NameLinker, or a plug-in class or factory called with nothing.
        The one place a linker is made for the pipeline."""
        if self.linker == "name_rules":
            return NameLinker()
        linker = plugin_factory(self.linker, LINKER_MEMBERS, "linker", ("name_rules",))()
        if missing := [m for m in LINKER_MEMBERS if not hasattr(linker, m)]:
            raise TypeError(f"KG_LINKER={self.linker} made {type(linker).__name__}, which has no {', '.join(missing)}")
        return linker

    def link(self, linker: Linker, mentions, overrides):
        """The linker's redirects, held to the ENTITY_ALIASES contract: a plug-in that returns no from_id / to_id
        column is refused by name here rather than failing somewhere below."""
        redirects = linker.link(mentions, overrides)
        if missing := [c for c in ("from_id", "to_id", "method") if c not in redirects.columns]:
            raise ValueError(f"linker {linker.name} {linker.version} returned no {', '.join(missing)} column")
        return schemas.conform(redirects, schemas.ENTITY_ALIASES)


class CheckThresholds(dg.ConfigurableResource, CheckSettings):
    """Thresholds of the extraction_health check."""


class FactResource(dg.ConfigurableResource, FactSettings):
    """Learning user facts from chat messages: FACT_EXTRACTION_ENABLED, FACT_EXTRACTION_RATE."""


def build_resources(settings: Settings) -> dict[str, object]:
    extractor = settings.extractor.model_dump(exclude={"api_key", "base_url"})
    base_url = settings.extractor.base_url
    if has_credentials(base_url):
        base_url = dg.EnvVar(BASE_URL_ENV)  # like the key: the credentials stay out of every stored snapshot
    return {
        "warehouse": WarehouseResource(**settings.warehouse.model_dump()),
        # An empty config schema: run config that tries to set anything here is rejected at launch.
        "settings": dg.ResourceDefinition(
            resource_fn=lambda _: settings.ingest, config_schema={},
            description="Inbox and chunking: fixed by the code location's environment, not by run config"),
        # The key is never a config value: the resource names the variable, resolved where the run executes.
        "extractor": ExtractorResource(**extractor, base_url=base_url,
                                       api_key=dg.EnvVar(API_KEY_ENV) if settings.extractor.api_key else None),
        "check_thresholds": CheckThresholds(**settings.checks.model_dump()),
        "facts": FactResource(**settings.facts.model_dump()),
        "graph": GraphResource(**settings.graph.model_dump()),
        # Which documents of the run's arrival days a run processes: the one run-config knob of a run.
        "scope": RunScope(),
    }


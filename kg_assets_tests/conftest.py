"""Shared fixtures: a private copy of the sample inbox, a DuckDB file and a real Dagster test instance."""

import shutil
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from kg_assets.definitions import build_definitions
from kg_assets.defs.partitions import CONSOLIDATION_ASSETS, PARTITIONED_ASSETS, RunScope, arrival_days, range_tags
from kg_assets.defs.planner import add_days, current_plan, run_spec, today_utc
from kg_assets.settings import ExtractorSettings, FactSettings, IngestSettings, Settings, WarehouseSettings
from kg_assets.storage.warehouse import Warehouse
from kg_assets.testing.openai_server import FakeOpenAIServer

CORE_ASSETS = (*PARTITIONED_ASSETS, *CONSOLIDATION_ASSETS)
SAMPLE_INBOX = Path(__file__).resolve().parents[1] / "data" / "inbox"


@dataclass
class Project:
    inbox: Path
    warehouse: Warehouse
    instance: dg.DagsterInstance
    defs: dg.Definitions

    def register_days(self) -> list[str]:
        """Make the warehouse's arrival days (and today) partitions of the instance, as the planner would."""
        days = {today_utc(), *(self.warehouse.arrival_days() if self.warehouse.exists() else [])}
        add_days(self.instance, sorted(days - set(self.instance.get_dynamic_partitions(arrival_days.name))))
        return list(self.instance.get_dynamic_partitions(arrival_days.name))

    def plan(self, **options):
        """What the sensor, the schedule and `kg run` would plan now (`include_stale`, `everything`, `only`)."""
        version = self.defs.resources["extractor"].build_extractor().version
        return current_plan(self.inbox, self.warehouse, self.instance, version, today_utc(), **options)

    def run_plan(self, plan, asset_selection=None):
        """Carry out a plan the way `kg run` does: one kg_pipeline run over its days, with its scope."""
        spec = run_spec(plan, self.instance)
        add_days(self.instance, spec.missing_days)
        return self.execute(tags=spec.tags, run_config=spec.run_config,
                            asset_selection=asset_selection or spec.asset_selection)

    def execute(self, job: str = "kg_pipeline", tags=None, asset_selection=None, days=None, documents=None,
                run_config=None):
        """One in-process run of a job; `days` (default: every partition) and `documents` set its scope."""
        if job == "kg_pipeline" and tags is None:
            keys = days or self.register_days()
            tags = range_tags(keys[0], keys[-1])
        if documents is not None:
            run_config = {**(run_config or {}), **RunScope(documents=list(documents)).run_config()}
        return self.defs.resolve_job_def(job).execute_in_process(
            instance=self.instance, tags=tags or {}, asset_selection=asset_selection, raise_on_error=False,
            run_config=run_config or {},
        )

    def run_all(self, with_dbt: bool = False, asset_selection=None):
        """Every arrival day and every inbox file (`kg run --all`); dbt marts only when asked (they cost seconds)."""
        selection = asset_selection or (None if with_dbt else [dg.AssetKey(k) for k in CORE_ASSETS])
        return self.run_plan(self.plan(everything=True), asset_selection=selection)

    def apply_sensor_result(self, result: dg.SensorResult) -> None:
        """What the sensor daemon does with a result: partition requests first, then the runs."""
        for request in result.dynamic_partitions_requests or []:
            if isinstance(request, dg.AddDynamicPartitionsRequest):
                self.instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
            else:
                for key in request.partition_keys:
                    self.instance.delete_dynamic_partition(request.partitions_def_name, key)

    def sql(self, query: str, **params):
        return self.warehouse.run_user_query(query, params or None)


def project_settings(inbox: Path, db: Path, facts: FactSettings | None = None, **extractor) -> Settings:
    """Explicit settings for a test project: nothing comes from the environment."""
    return Settings(ingest=IngestSettings(inbox_dir=str(inbox)), warehouse=WarehouseSettings(db_path=str(db)),
                    extractor=ExtractorSettings(**extractor), facts=facts or FactSettings())


@pytest.fixture(scope="session")
def built_warehouse(tmp_path_factory) -> Path:
    """A warehouse built once from the sample corpus; tests that only read or corrupt it get a copy."""
    root = tmp_path_factory.mktemp("built")
    db = root / "warehouse.duckdb"
    with dg.instance_for_test() as instance:
        built = Project(SAMPLE_INBOX, Warehouse(db), instance, build_definitions(project_settings(SAMPLE_INBOX, db)))
        assert built.run_all().success
    return root / "warehouse.duckdb"


@pytest.fixture
def mutable(built_warehouse, tmp_path):
    """A copy of the built warehouse that a test may write to."""
    copy = tmp_path / "warehouse.duckdb"
    shutil.copy(built_warehouse, copy)
    return copy


@pytest.fixture
def built(project, built_warehouse):
    """`project` with the sample corpus already built into its warehouse and registered in its instance."""
    shutil.copy(built_warehouse, project.warehouse.path)
    project.register_days()
    return project


@pytest.fixture
def project(tmp_path):
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX, inbox)
    db = tmp_path / "warehouse.duckdb"
    with dg.instance_for_test() as instance:
        yield Project(inbox=inbox, warehouse=Warehouse(db), instance=instance,
                      defs=build_definitions(project_settings(inbox, db)))


@pytest.fixture
def openai_server():
    """A started FakeOpenAIServer (fresh per test), stopped afterwards."""
    with FakeOpenAIServer() as server:
        yield server


# What every LLM test project starts from; `configure(**fields)` changes some of them.
LLM_TEST_SETTINGS = {"prompt_price_per_1m": 0.15, "completion_price_per_1m": 0.60, "timeout_s": 5.0,
                     "summary_min_fragments": 0}  # summaries have their own test


@pytest.fixture
def llm_project(project, openai_server):
    """`project` with extraction pointed at the local OpenAI-compatible test server."""
    from kg_assets.testing.scripted_llm import extraction_responder

    openai_server.set_responder(extraction_responder())
    extractor = {**LLM_TEST_SETTINGS, "base_url": openai_server.base_url}

    def configure(**fields) -> Project:
        extractor.update(fields)
        # These tests count entity-extraction requests; user-fact requests have their own tests
        # (test_fact_llm_and_forget.py), so fact extraction is off here.
        project.defs = build_definitions(project_settings(project.inbox, project.warehouse.path,
                                                          facts=FactSettings(enabled=False), **extractor))
        return project

    project.server = openai_server
    project.configure = configure
    return configure()

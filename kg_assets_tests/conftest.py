"""Shared fixtures: a private copy of the sample inbox, a DuckDB file and a real Dagster test instance."""

import shutil
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from kg_assets.defs.partitions import documents_partitions, range_tags
from kg_assets.storage.warehouse import Warehouse

CORE_ASSETS = ("documents", "chunks", "entity_mentions", "local_relations", "linked_entities", "knowledge_graph",
               "entity_attributes")
SAMPLE_INBOX = Path(__file__).resolve().parents[1] / "data" / "inbox"


@dataclass
class Project:
    inbox: Path
    warehouse: Warehouse
    instance: dg.DagsterInstance
    defs: dg.Definitions

    def register_inbox(self) -> list[str]:
        from kg_assets.core.files.inbox import scan_inbox

        keys = sorted(scan_inbox(self.inbox))
        known = set(self.instance.get_dynamic_partitions(documents_partitions.name))
        self.instance.add_dynamic_partitions(documents_partitions.name, [k for k in keys if k not in known])
        return list(self.instance.get_dynamic_partitions(documents_partitions.name))

    def execute(self, job: str = "kg_pipeline", tags=None, asset_selection=None, keys=None):
        if keys is not None:
            tags = range_tags(keys[0], keys[-1])
        return self.defs.resolve_job_def(job).execute_in_process(
            instance=self.instance, tags=tags or {}, asset_selection=asset_selection, raise_on_error=False
        )

    def run_all(self, with_dbt: bool = False):
        """The kg_pipeline job over every inbox partition; dbt marts only when asked (they cost seconds)."""
        keys = self.register_inbox()
        selection = None if with_dbt else [dg.AssetKey(k) for k in CORE_ASSETS]
        return self.execute(keys=keys, asset_selection=selection)

    def apply_sensor_result(self, result: dg.SensorResult) -> None:
        """What the sensor daemon does with a result: partition requests first, then the runs."""
        for request in result.dynamic_partitions_requests or []:
            if isinstance(request, dg.AddDynamicPartitionsRequest):
                self.instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
            else:
                for key in request.partition_keys:
                    self.instance.delete_dynamic_partition(request.partitions_def_name, key)

    def sql(self, query: str, **params):
        return self.warehouse.query(query, params or None)


@pytest.fixture(scope="session")
def built_warehouse(tmp_path_factory) -> Path:
    """A warehouse built once from the sample corpus; tests that only read or corrupt it get a copy."""
    root = tmp_path_factory.mktemp("built")
    with pytest.MonkeyPatch.context() as mp, dg.instance_for_test() as instance:
        mp.setenv("KG_INBOX", str(SAMPLE_INBOX))
        mp.setenv("KG_DUCKDB_PATH", str(root / "warehouse.duckdb"))
        from kg_assets.definitions import build_definitions

        built = Project(SAMPLE_INBOX, Warehouse(root / "warehouse.duckdb"), instance, build_definitions())
        assert built.run_all().success
    return root / "warehouse.duckdb"


@pytest.fixture
def built(project, built_warehouse):
    """`project` with the sample corpus already built into its warehouse and registered in its instance."""
    shutil.copy(built_warehouse, project.warehouse.path)
    project.register_inbox()
    return project


@pytest.fixture
def project(tmp_path, monkeypatch):
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX, inbox)
    db = tmp_path / "warehouse.duckdb"
    monkeypatch.setenv("KG_INBOX", str(inbox))
    monkeypatch.setenv("KG_DUCKDB_PATH", str(db))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    from kg_assets.definitions import build_definitions

    with dg.instance_for_test() as instance:
        yield Project(inbox=inbox, warehouse=Warehouse(db), instance=instance, defs=build_definitions())


from kg_assets_tests.openai_server import openai_server  # noqa: E402,F401  (fixture)


@pytest.fixture
def llm_project(project, openai_server, monkeypatch):  # noqa: F811
    """`project` with extraction pointed at the local OpenAI-compatible test server."""
    from kg_assets.definitions import build_definitions
    from kg_assets_tests.scripted_llm import extraction_responder

    openai_server.set_responder(extraction_responder())
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("KG_LLM_PROMPT_PRICE", "0.15")
    monkeypatch.setenv("KG_LLM_COMPLETION_PRICE", "0.60")
    monkeypatch.setenv("KG_LLM_TIMEOUT_S", "5")
    monkeypatch.setenv("KG_SUMMARY_MIN_FRAGMENTS", "0")  # summaries have their own test

    def configure(**env: str) -> Project:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        project.defs = build_definitions()
        return project

    project.server = openai_server
    project.configure = configure
    return configure()

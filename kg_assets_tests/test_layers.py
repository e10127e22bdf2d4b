"""The layers of docs/ARCHITECTURE.md hold: the import contracts of pyproject.toml are kept, no two top-level
parts of kg_assets import each other, and the steps' pools come from the Settings object the definitions are
built from (not from the environment)."""

from itertools import combinations
from pathlib import Path

import dagster as dg
import grimp
from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports

from kg_assets.definitions import build_definitions
from kg_assets.settings import Settings, WarehouseSettings

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
TOP_LEVEL = ("settings", "core", "storage", "extractors", "query", "defs", "commands", "definitions", "cli",
             "evaluation", "testing")


def test_import_contracts():
    assert lint_imports(config_filename=str(PYPROJECT), no_cache=True, no_logo=True) == EXIT_STATUS_SUCCESS


def test_no_two_top_level_parts_import_each_other():
    graph = grimp.build_graph("kg_assets", cache_dir=None)
    both_ways = [
        (a, b) for a, b in combinations(TOP_LEVEL, 2)
        if graph.chain_exists(importer=f"kg_assets.{a}", imported=f"kg_assets.{b}", as_packages=True)
        and graph.chain_exists(importer=f"kg_assets.{b}", imported=f"kg_assets.{a}", as_packages=True)
    ]
    assert both_ways == []


PARTITION_STEPS = ("documents", "chunks", "messages")
CONSOLIDATION_STEPS = ("linked_entities", "graph_edges", "entity_attributes", "user_facts", "chat_users")
LLM_STEPS = ("entity_mentions", "message_facts", "entity_summaries")


def _pools(settings: Settings) -> dict[str, str | None]:
    defs = build_definitions(settings)
    steps = (*PARTITION_STEPS, *CONSOLIDATION_STEPS, *LLM_STEPS)
    pools = {key: defs.resolve_assets_def(key).op.pool for key in steps}
    pools["marts"] = defs.resolve_assets_def(dg.AssetKey(["marts", "stg_current_entities"])).op.pool
    return pools


def test_a_lake_settings_object_gets_the_lake_pools_whatever_the_environment_says(monkeypatch, tmp_path):
    monkeypatch.delenv("KG_WAREHOUSE_BACKEND", raising=False)
    lake = Settings(warehouse=WarehouseSettings(backend="ducklake", lake_catalog="dbname=kg_unused",
                                                lake_data_path=str(tmp_path / "lake")))
    pools = _pools(lake)
    assert {pools[k] for k in PARTITION_STEPS} == {None}, "lake writers run at once"
    assert {pools[k] for k in CONSOLIDATION_STEPS} == {"consolidation"}
    assert {pools[k] for k in LLM_STEPS} == {"llm"}
    assert pools["marts"] == "dbt"


def test_a_file_settings_object_gets_the_file_pools_whatever_the_environment_says(monkeypatch, tmp_path):
    monkeypatch.setenv("KG_WAREHOUSE_BACKEND", "ducklake")
    file = Settings(warehouse=WarehouseSettings(db_path=str(tmp_path / "w.duckdb")))
    pools = _pools(file)
    assert {pools[k] for k in (*PARTITION_STEPS, *CONSOLIDATION_STEPS, "marts")} == {"duckdb"}, "one writer"
    assert {pools[k] for k in LLM_STEPS} == {"llm"}


"""The layers of docs/ARCHITECTURE.md hold: the steps' pools come from the Settings object the definitions are
built from (not from the environment)."""

import dagster as dg

from kg_assets.definitions import build_definitions
from kg_assets.settings import Settings, WarehouseSettings

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


"""dbt models on top of the `kg` schema, as Dagster assets (their tests become asset checks)."""

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets

from kg_assets.defs.resources import WarehouseResource

DBT_DIR = Path(__file__).resolve().parents[2] / "dbt"
dbt_project = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)


def dbt_resource() -> DbtCliResource:
    # The dbt installed beside this Python, so an un-activated virtualenv works too.
    beside = Path(sys.executable).parent / "dbt"
    return DbtCliResource(project_dir=dbt_project, dbt_executable=str(beside) if beside.exists() else "dbt")


def _manifest_is_stale() -> bool:
    if not dbt_project.manifest_path.exists():
        return True
    built = dbt_project.manifest_path.stat().st_mtime
    sources = [*DBT_DIR.glob("*.yml"), *(DBT_DIR / "models").rglob("*.sql"), *(DBT_DIR / "models").rglob("*.yml")]
    return any(path.stat().st_mtime > built for path in sources)


if _manifest_is_stale():
    # `dbt parse` runs offline in seconds; outside `dagster dev` nothing else would prepare the manifest, and
    # a manifest older than the project would give Dagster assets and checks the project no longer has.
    dbt_resource().cli(["parse", "--quiet"], target_path=dbt_project.target_path).wait()

# kg source tables -> the asset that writes them, so lineage runs from documents to the marts.
SOURCE_ASSETS = {
    "documents": "documents",
    "chunks": "chunks",
    "entity_mentions": "entity_mentions",
    "local_relations": "local_relations",
    "entities": "linked_entities",
    "graph_nodes": "knowledge_graph",
    "graph_edges": "knowledge_graph",
}


class KgTranslator(DagsterDbtTranslator):
    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        if dbt_resource_props["resource_type"] == "source" and dbt_resource_props["source_name"] == "kg":
            return dg.AssetKey(SOURCE_ASSETS[dbt_resource_props["name"]])
        return super().get_asset_key(dbt_resource_props)

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str:
        return "marts"


@dbt_assets(manifest=dbt_project.manifest_path, project=dbt_project, dagster_dbt_translator=KgTranslator(), pool="duckdb")
def kg_dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource, warehouse: WarehouseResource):
    # dbt runs as a subprocess; its profile takes the file from this var, so it reads what the assets wrote.
    warehouse_var = json.dumps({"kg_duckdb_path": warehouse.db_path})
    yield from dbt.cli(["build", "--vars", warehouse_var], context=context).stream()


"""dbt models on top of the `kg` schema, as Dagster assets (their tests become asset checks).

The dagster-dbt way: the project is re-parsed under `dagster dev` (as `DbtProject.prepare_if_dev()` does, with
the dbt beside this Python); otherwise
the manifest is prepared once, outside any import (`scripts/dev.sh` calls dagster-dbt's preparer on
the project when a dbt file is newer than the manifest). Sources name their Dagster asset in dbt's own
`meta.dagster.asset_key` (dbt/models/sources.yml), which the default translator reads.
"""

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets

from kg_assets.defs.dbt_manifest import DBT_DIR
from kg_assets.defs.resources import WarehouseResource

dbt_project = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)


class KgDbtCliResource(DbtCliResource):
    """dagster-dbt's dbt CLI resource without the dbt adapter it opens in this process before each command.

    That adapter serves only `fetch_row_counts()` / `fetch_column_metadata()`, which these assets do not call,
    and opening it parses every dbt macro here: about 6 s of CPU per `dbt build`, more than the models take."""

    def _initialize_dbt_core_adapter(self, args):  # the one hook dagster-dbt 0.29 has for it
        return None


def dbt_resource() -> DbtCliResource:
    # The dbt installed beside this Python, so an un-activated virtualenv works too.
    beside = Path(sys.executable).parent / "dbt"
    return KgDbtCliResource(project_dir=dbt_project, dbt_executable=str(beside) if beside.exists() else "dbt")


# dagster-dbt's `prepare_if_dev()` parses the project with the `dbt` on PATH, which `dagster dev` started from
# an un-activated virtualenv does not have: the same parse, with the dbt beside this Python.
if dbt_project.preparer.using_dagster_dev():
    dbt_resource().cli(["parse", "--quiet"], target_path=dbt_project.target_path).wait()
if not dbt_project.manifest_path.exists():
    raise FileNotFoundError(
        f"no dbt manifest at {dbt_project.manifest_path}: run scripts/dev.sh (any command), which prepares it")


class KgTranslator(DagsterDbtTranslator):
    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str:
        return "marts"


def kg_dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource, warehouse: WarehouseResource):
    yield from dbt.cli(["build", *dbt_target_args(warehouse)], context=context).stream()


def mart_assets(pool: str) -> dg.AssetsDefinition:
    """Every dbt model as an asset, their one `dbt build` step in `pool` (`defs/pools.py`)."""
    return dbt_assets(manifest=dbt_project.manifest_path, project=dbt_project, dagster_dbt_translator=KgTranslator(),
                      pool=pool)(kg_dbt_models)


def dbt_target_args(warehouse: WarehouseResource) -> list[str]:
    """dbt runs as a subprocess: its profile's target and vars say where the assets wrote (dbt/profiles.yml)."""
    if warehouse.backend == "ducklake":
        from kg_assets.storage.lake import EXTENSION_DIR

        return ["--target", "lake", "--vars", json.dumps({
            "kg_lake_catalog": warehouse.lake_catalog, "kg_lake_data_path": warehouse.lake_data_path,
            "kg_extension_dir": str(EXTENSION_DIR)})]
    return ["--vars", json.dumps({"kg_duckdb_path": warehouse.db_path})]

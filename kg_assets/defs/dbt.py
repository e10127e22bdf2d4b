"""dbt models on top of the `kg` schema, as Dagster assets (their tests become asset checks).

The dagster-dbt way: the project is re-parsed under `dagster dev` (as `DbtProject.prepare_if_dev()` does, with
the dbt beside this Python); otherwise
the manifest is prepared once, outside any import (`scripts/dev.sh` calls dagster-dbt's preparer on
the project when a dbt file is newer than the manifest). Sources name their Dagster asset in dbt's own
`meta.dagster.asset_key` (dbt/models/sources.yml), which the default translator reads.
"""

import importlib.metadata
import json
import shutil
import sys
import time
from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

import dagster as dg
from packaging import version

# dagster-dbt imports dbt-core's Python side when it is installed: about 2 s of every process that loads these
# definitions (each `kg run`, each run worker of a UI launch), for type hints, its selection engine and the
# in-process adapter. None of them is used here: dbt runs as its CLI (KgDbtCliResource, adapter off) and the
# marts select every model, which dagster-dbt then reads from the manifest. So dagster-dbt loads as it does
# where dbt-core's Python side is absent; test_marts shows the definitions equal either way.
sys.modules.setdefault("dbt.version", None)  # type: ignore[arg-type]
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets  # noqa: E402

from kg_assets.defs.dbt_replay import record_build, replay_build
from kg_assets.defs.dbt_manifest import DBT_DIR, MARTS_SCHEMA
from kg_assets.defs.resources import WarehouseResource
from kg_assets.defs.tables import OWNERS

dbt_project = DbtProject(project_dir=DBT_DIR, profiles_dir=DBT_DIR)


class KgDbtCliResource(DbtCliResource):
    """dagster-dbt's dbt CLI resource without the dbt adapter it opens in this process before each command.

    That adapter serves only `fetch_row_counts()` / `fetch_column_metadata()`, which these assets do not call,
    and opening it parses every dbt macro here: about 6 s of CPU per `dbt build`, more than the models take."""

    def _initialize_dbt_core_adapter(self, args):  # the one hook dagster-dbt 0.29 has for it
        return None

    @cached_property
    def _cli_version(self) -> version.Version:
        """The installed dbt-core's version, where dagster-dbt runs `dbt --version`: a whole dbt process before
        each command (about 1.7 s of a first run), which also asks PyPI for the latest release. `dbt_resource()`
        runs the dbt beside this Python, whose version this is."""
        if Path(self.dbt_executable).parent == Path(sys.executable).parent:
            return version.parse(importlib.metadata.version("dbt-core"))
        return super()._cli_version


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

    def get_owners(self, dbt_resource_props: Mapping[str, Any]) -> list[str]:
        return list(OWNERS)

    def get_asset_check_spec(self, asset_spec: dg.AssetSpec, manifest: Mapping[str, Any], unique_id: str,
                             project: DbtProject | None) -> dg.AssetCheckSpec | None:
        """A dbt test as an asset check, described: dagster-dbt reads only `meta.description`, so the test's own
        `description:` (dbt/models/marts/schema.yml, dbt/tests/schema.yml) is taken, else a sentence saying what
        a not_null or unique test asserts."""
        spec = super().get_asset_check_spec(asset_spec, manifest, unique_id, project)
        if spec is None or spec.description:
            return spec
        return spec._replace(description=dbt_test_description(manifest["nodes"][unique_id]))


def dbt_test_description(test: Mapping[str, Any]) -> str | None:
    """What a dbt data test asserts: its yml description, else one said from its kind and column."""
    if test.get("description"):
        return test["description"].strip()
    kind, column = (test.get("test_metadata") or {}).get("name"), test.get("column_name")
    model = (test.get("attached_node") or "").rsplit(".", 1)[-1]
    if kind == "not_null":
        return f"{model}.{column} is never NULL."
    if kind == "unique":
        return f"No two rows of {model} have the same {column}."
    return None


def kg_dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource, warehouse: WarehouseResource):
    """The marts from dbt's compiled SQL in this process once dbt has built this SQL (`defs/dbt_replay.py`):
    the views created where they are not dbt's already, the data tests on one connection; otherwise `dbt build`, its
    events passed on once it has finished, each model's with its row count.

    The marts are views, which dagster-dbt's `fetch_row_counts()` skips; the counts are read after dbt has
    exited (its process holds the DuckDB file while it runs), one query for every model built. dagster-dbt
    gives each invocation a target folder of its own under dbt/target (about 3 MB: manifest, compiled SQL,
    logs): a build that succeeded leaves none behind, so a sensor's runs do not fill the disk; a failed one
    keeps it for inspection and says where."""
    replayed = replay_build(context, warehouse)
    if replayed is not None:
        events, how = replayed
        results = [e for e in events if isinstance(e, dg.AssetCheckResult)]
        context.log.info(f"dbt marts: {how} ({len(results)} tests), no dbt build")
        yield from events
        failed = [e.check_name for e in results if not e.passed]
        if failed:
            raise dg.Failure(f"{len(failed)} dbt data test(s) failed: {', '.join(failed)}")
        return
    events, failure = [], None
    warehouse.get().release()  # dbt's process opens the file itself
    invocation = dbt.cli(["build", *dbt_target_args(warehouse)], context=context)
    try:
        events.extend(invocation.stream())
    except Exception as exc:  # a failed dbt test fails the build: what dbt did still reaches Dagster
        failure = exc
    yield from with_row_counts(context, events, warehouse)
    if (results := invocation.target_path / "run_results.json").exists():  # what it built, even beside a failed test
        record_build(warehouse, results)
    if failure is not None:
        context.log.error(f"dbt build failed: its compiled SQL, results and log are in {invocation.target_path}")
        raise failure
    shutil.rmtree(invocation.target_path, ignore_errors=True)


def with_row_counts(context: dg.AssetExecutionContext, events: list, warehouse: WarehouseResource) -> Iterator:
    """`events` with `dagster/row_count` on each model's Output (the rows of its view in `MARTS_SCHEMA`), and
    how long counting every view took (`row_counts_ms`, the same on each)."""
    view_of = {id(e): e.metadata["unique_id"].value.rsplit(".", 1)[-1] for e in events
               if isinstance(e, dg.Output) and "unique_id" in e.metadata}
    started = time.perf_counter()
    try:
        counts = warehouse.get().view_row_counts(MARTS_SCHEMA, sorted(set(view_of.values())))
    except Exception as exc:  # a count never costs the build its events
        context.log.warning(f"the marts' row counts could not be read: {exc}")
        counts = {}
    elapsed_ms = round((time.perf_counter() - started) * 1000)
    for event in events:
        if (view := view_of.get(id(event))) in counts:
            event = event.with_metadata({**event.metadata, "dagster/row_count": counts[view],
                                         "row_counts_ms": elapsed_ms})
        yield event


def mart_assets(pool: str) -> dg.AssetsDefinition:
    """Every dbt model as an asset, their one `dbt build` step in `pool` (`defs/pools.py`)."""
    # No `project=`: dagster-dbt would keep the DbtProject in every mart's metadata, which the UI shows as
    # "[DbtProject] (unserializable)"; the resource's project_dir (`dbt_resource`) is the same project.
    return dbt_assets(manifest=dbt_project.manifest_path, dagster_dbt_translator=KgTranslator(),
                      pool=pool)(kg_dbt_models)


def dbt_target_args(warehouse: WarehouseResource) -> list[str]:
    """dbt runs as a subprocess: its profile's target and vars say where the assets wrote (dbt/profiles.yml)."""
    if warehouse.backend == "ducklake":
        from kg_assets.storage.lake import EXTENSION_DIR

        return ["--target", "lake", "--vars", json.dumps({
            "kg_lake_catalog": warehouse.lake_catalog, "kg_lake_data_path": warehouse.lake_data_path,
            "kg_extension_dir": str(EXTENSION_DIR)})]
    return ["--vars", json.dumps({"kg_duckdb_path": warehouse.db_path})]

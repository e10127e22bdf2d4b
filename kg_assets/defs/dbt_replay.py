"""The marts built in this process from the SQL a `dbt build` compiled for them, once dbt has built it (issue 24).

The marts are views, and their tests are queries: what dbt adds on each build is its process (about 5 s of a
small run: start-up, parsing the project for every new warehouse path, a connection). A dbt build
records, per version of the project's SQL and per warehouse catalog name (the DuckDB file's stem, or `lake`,
which dbt's compiled SQL names), each model's and each data test's compiled SQL and each view's definition as
DuckDB keeps it (`KG_DBT_REPLAY_DIR`, default `dbt/target/compiled_marts/`). Any later marts build with the
same SQL, on this warehouse or a new one of the same catalog name, replays it: the views that are not already
the recorded ones are created from dbt's SQL (and must then read back as the definitions dbt left), and the
data tests run one after another on one connection, with dbt's verdict rule (a test fails when its query returns rows). New SQL (or project
files, or dbt), a test or model not in the record, or a view that does not come out as dbt's make it a `dbt build` again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from graphlib import TopologicalSorter
from pathlib import Path

import dagster as dg

from kg_assets.defs.dbt_manifest import DBT_DIR, MANIFEST_PATH, MARTS_SCHEMA
from kg_assets.defs.resources import WarehouseResource
from kg_assets.storage.warehouse import Warehouse

DEFAULT_REPLAY_DIR = DBT_DIR / "target" / "compiled_marts"


def _manifest_nodes() -> dict:
    return json.loads(MANIFEST_PATH.read_text())["nodes"]


def sql_version(nodes: dict) -> str:
    """A digest of everything dbt compiles the marts and their tests from: each model's and test's code, its test
    kind and arguments and its config (the manifest's `nodes`: a yml edit that changes a test changes this too),
    the project and profile files (schemas, targets) and dbt's version."""
    parts = [[uid, n.get("raw_code"), n.get("test_metadata"), n.get("config"), n.get("checksum")]
             for uid, n in sorted(nodes.items()) if n["resource_type"] in ("model", "test")]
    parts.append([(DBT_DIR / name).read_text() for name in ("dbt_project.yml", "profiles.yml")])
    parts.append(importlib.metadata.version("dbt-core"))
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _record_path(warehouse: WarehouseResource, wh: Warehouse, nodes: dict) -> Path:
    """The record of this SQL version and this warehouse's catalog name."""
    folder = Path(warehouse.dbt_replay_dir) if warehouse.dbt_replay_dir else DEFAULT_REPLAY_DIR
    key = json.dumps([sql_version(nodes), warehouse.backend, wh.catalog_name()])
    return folder / f"{hashlib.sha1(key.encode()).hexdigest()[:16]}.json"


def _model_order(nodes: dict) -> list[str]:
    """Model names, each after the models it reads (a view is created after those it selects from)."""
    models = {n["name"]: n for n in nodes.values() if n["resource_type"] == "model"}
    graph = {name: {nodes[d]["name"] for d in node["depends_on"]["nodes"] if d in nodes and d.startswith("model.")}
             for name, node in models.items()}
    return list(TopologicalSorter(graph).static_order())


def record_build(warehouse: WarehouseResource, run_results: Path) -> None:
    """After a `dbt build`: the compiled SQL of what it built and of the tests it ran (passed or failed: a failure
    is the data's), and the views it left, added to the record of this SQL version and catalog name (a build of
    some marts only adds theirs; a node in error adds nothing)."""
    nodes = _manifest_nodes()
    wh = warehouse.get()
    path = _record_path(warehouse, wh, nodes)
    record = json.loads(path.read_text()) if path.exists() else {"models": {}, "tests": {}, "views": {}}
    definitions = wh.view_definitions(MARTS_SCHEMA)
    for result in json.loads(run_results.read_text())["results"]:
        uid, compiled = result["unique_id"], result.get("compiled_code")
        if result["status"] not in ("success", "pass", "fail") or not compiled or uid not in nodes:
            continue
        name = nodes[uid]["name"]
        if uid.startswith("test."):
            record["tests"][name] = {"unique_id": uid, "sql": compiled}
        elif uid.startswith("model.") and name in definitions:
            record["models"][name] = {"unique_id": uid, "sql": compiled}
            record["views"][name] = definitions[name]
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{id(record)}.tmp")
    partial.write_text(json.dumps(record, sort_keys=True))
    partial.replace(path)  # whole or not at all, should two builds finish at once


def _views_as_recorded(wh: Warehouse, record: dict, views: list[str], order: list[str]) -> list[str] | None:
    """Create the views in `views` whose definitions are not the recorded ones; the ones created, or None when a
    created view does not read back as dbt left it (another DuckDB, another dbt: dbt must build)."""
    current = wh.view_definitions(MARTS_SCHEMA)
    stale = [v for v in order if v in views and current.get(v) != record["views"][v]]
    if stale:
        wh.create_views(MARTS_SCHEMA, [(view, record["models"][view]["sql"]) for view in stale])
        created = wh.view_definitions(MARTS_SCHEMA)
        if any(created.get(v) != record["views"][v] for v in stale):
            return None
    return stale


def replay_build(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> tuple[list, str] | None:
    """The events of this build replayed in process, and what it did; None when it needs `dbt build` (the run's log
    says why)."""
    def needs_dbt(why: str) -> None:
        context.log.info(f"dbt marts: dbt build, {why}")

    nodes = _manifest_nodes()
    wh = warehouse.get()
    path = _record_path(warehouse, wh, nodes)
    if not path.exists():
        return needs_dbt(f"no earlier dbt build of this SQL for catalog {wh.catalog_name()!r} is recorded in {path.parent}")
    record = json.loads(path.read_text())
    views = {name: key.path[-1] for name, key in context.assets_def.keys_by_output_name.items()
             if name in context.selected_output_names}
    checks = sorted(context.selected_asset_check_keys, key=lambda k: (k.asset_key.to_user_string(), k.name))
    if any(v not in record["models"] for v in views.values()) or any(c.name not in record["tests"] for c in checks):
        return needs_dbt(f"a selected model or test is not in the record of this SQL ({path})")
    order = _model_order(nodes)
    created = _views_as_recorded(wh, record, list(views.values()), order)
    if created is None:
        return needs_dbt("a view created from the recorded SQL does not read back as the one dbt left")
    how = (f"{len(created)} views created from dbt's compiled SQL; data tests run in process" if created else
           "views current (dbt's for this SQL); data tests run in process")
    failures = wh.rows_returned({check.name: record["tests"][check.name]["sql"] for check in checks})
    rows = wh.view_row_counts(MARTS_SCHEMA, sorted(set(views.values())))
    rank = {view: i for i, view in enumerate(order)}  # a multi-asset yields its assets upstream first
    events: list = [dg.Output(None, output_name=name, metadata={
        "unique_id": record["models"][view]["unique_id"], "dagster/row_count": rows[view], "dbt": how})
        for name, view in sorted(views.items(), key=lambda item: rank[item[1]])]
    events += [dg.AssetCheckResult(
        asset_key=check.asset_key, check_name=check.name, passed=failures[check.name] == 0,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"failures": failures[check.name], "unique_id": record["tests"][check.name]["unique_id"], "dbt": how})
        for check in checks]
    return events, how

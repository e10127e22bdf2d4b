"""The marts' dbt tests run in this process when the views are already the ones dbt built (issue 24).

The marts are views: once a `dbt build` has created them in a warehouse, new data needs no new view, only the
data tests again. A build that succeeded leaves, per warehouse, the SQL dbt compiled for each test, the version of
the project's SQL, and the views' definitions as DuckDB keeps them (`dbt/target/compiled_tests/`). The next
build of that warehouse runs those compiled tests in one read instead of a dbt process (about 0.2 s where dbt
took about 5 s), when the project's SQL is the same version and the warehouse's views are the very ones that build
created; anything else (new SQL, a view dropped or redefined, a test or view not in the record) makes it a
`dbt build` again. Each test is still an asset check of its mart, with dbt's verdict rule: it fails when its
query returns rows.
"""

from __future__ import annotations

import hashlib
import json
from graphlib import TopologicalSorter
from pathlib import Path

import dagster as dg

from kg_assets.defs.dbt_manifest import DBT_DIR, MANIFEST_PATH, MARTS_SCHEMA
from kg_assets.defs.resources import WarehouseResource

RECORDS_DIR = DBT_DIR / "target" / "compiled_tests"


def _manifest_nodes() -> dict:
    return json.loads(MANIFEST_PATH.read_text())["nodes"]


def sql_version(nodes: dict) -> str:
    """A digest of everything dbt compiles the marts and their tests from (the manifest's `nodes`): each model's and
    test's code, its test kind and arguments and its config (a yml edit that changes a test changes this too)."""
    parts = [[uid, n.get("raw_code"), n.get("test_metadata"), n.get("config"), n.get("checksum")]
             for uid, n in sorted(nodes.items()) if n["resource_type"] in ("model", "test")]
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _record_path(target_args: list[str]) -> Path:
    # one record per warehouse (its path, or its lake's catalog and data path, as dbt is told)
    return RECORDS_DIR / f"{hashlib.sha1(json.dumps(target_args).encode()).hexdigest()[:16]}.json"


def _views_digest(definitions: dict[str, str]) -> str:
    return hashlib.sha1(json.dumps(definitions, sort_keys=True).encode()).hexdigest()


def record_build(target_args: list[str], run_results: Path, warehouse: WarehouseResource) -> None:
    """After a `dbt build` that succeeded: what the next build of this warehouse needs to run the tests alone."""
    results = json.loads(run_results.read_text())["results"]
    nodes = _manifest_nodes()
    tests = {nodes[r["unique_id"]]["name"]: {"unique_id": r["unique_id"], "sql": r["compiled_code"]}
             for r in results if r["unique_id"].startswith("test.") and r.get("compiled_code")}
    record = {"sql_version": sql_version(nodes), "tests": tests,
              "views": _views_digest(warehouse.get().view_definitions(MARTS_SCHEMA))}
    path = _record_path(target_args)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{id(record)}.tmp")
    partial.write_text(json.dumps(record))
    partial.replace(path)  # whole or not at all, should two builds finish at once


def checks_in_process(context: dg.AssetExecutionContext, target_args: list[str],
                      warehouse: WarehouseResource) -> list | None:
    """The events of this build with the recorded tests run here, or None when it needs `dbt build`."""
    path = _record_path(target_args)
    if not path.exists():
        return None
    record = json.loads(path.read_text())
    nodes = _manifest_nodes()
    wh = warehouse.get()
    if record["sql_version"] != sql_version(nodes) or record["views"] != _views_digest(wh.view_definitions(MARTS_SCHEMA)):
        return None
    views = {name: key.path[-1] for name, key in context.assets_def.keys_by_output_name.items()
             if name in context.selected_output_names}
    checks = sorted(context.selected_asset_check_keys, key=lambda k: (k.asset_key.to_user_string(), k.name))
    if any(check.name not in record["tests"] for check in checks):
        return None
    failures = wh.rows_returned({check.name: record["tests"][check.name]["sql"] for check in checks})
    rows = wh.view_row_counts(MARTS_SCHEMA, sorted(set(views.values())))
    models = {n["name"]: uid for uid, n in nodes.items() if n["resource_type"] == "model"}
    # a multi-asset yields its assets upstream first ("stg_current_edges" before the marts that read it)
    order = TopologicalSorter({view: {nodes[d]["name"] for d in nodes[models[view]]["depends_on"]["nodes"]
                                      if d in nodes} for view in models})
    rank = {view: i for i, view in enumerate(order.static_order())}
    how = "views current (built by dbt for this SQL); data tests run in process"
    events: list = [dg.Output(None, output_name=name, metadata={
        "unique_id": models[view], "dagster/row_count": rows[view], "dbt": how})
        for name, view in sorted(views.items(), key=lambda item: rank[item[1]])]
    events += [dg.AssetCheckResult(
        asset_key=check.asset_key, check_name=check.name, passed=failures[check.name] == 0,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"failures": failures[check.name], "unique_id": record["tests"][check.name]["unique_id"], "dbt": how})
        for check in checks]
    return events

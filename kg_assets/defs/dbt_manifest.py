"""The dbt marts' asset keys and code versions, read from dbt's manifest without importing dagster-dbt.

Importing dagster-dbt (and dbt-core with it) takes seconds, the largest part of a small run's start-up;
a run whose marts are current never executes dbt, so the planner answers "are the marts current?" from
the manifest alone. `kg_assets_tests/test_marts.py`
(`test_the_planner_reads_the_marts_keys_and_code_versions_as_dagster_dbt_makes_them`) checks that these
match dagster-dbt's own.
"""

import hashlib
import json
from pathlib import Path

import dagster as dg

DBT_DIR = Path(__file__).resolve().parents[2] / "dbt"
MANIFEST_PATH = DBT_DIR / "target" / "manifest.json"
# Where the models' views are: dbt's default schema name is the profile's schema `kg` + "_" + the project's `marts`.
MARTS_SCHEMA = "kg_marts"


def model_code_versions(manifest_path: Path = MANIFEST_PATH) -> dict[dg.AssetKey, str]:
    """Asset key -> code version of every dbt model, as dagster-dbt's default translator makes them: the key
    is [schema, name] (or [name] without a configured schema), the code version the sha1 of the model's SQL."""
    nodes = json.loads(manifest_path.read_text())["nodes"].values()
    versions = {}
    for node in nodes:
        if node["resource_type"] != "model":
            continue
        schema = node["config"].get("schema")
        key = dg.AssetKey([schema, node["name"]] if schema else [node["name"]])
        code = node.get("raw_sql") or node.get("raw_code")
        versions[key] = hashlib.sha1(code.encode("utf-8")).hexdigest() if code else node["checksum"]["checksum"]
    return versions

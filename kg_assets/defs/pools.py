"""The pools steps take, by what they share across runs (docs/ARCHITECTURE.md, "Pools").

The embedded DuckDB file allows one writing process, so every step that writes it takes pool `duckdb`
(limit 1, dagster.yaml's default_limit). A DuckLake has snapshot isolation and the warehouse retries its write
conflicts (storage/lake.py, retry_write_conflicts), so on the lake those steps take no pool at all: the
number of runs at once (the run queue's limit) is what bounds its writers. That is a change of pool, not of an
instance's limit, because Dagster's dagster.yaml sets one default limit for every pool (it would lift `llm`
too) and a pool's own limit lives in the instance's database, where a switch of backend would not reach it.

Dagster fixes an op's pool when the asset is defined, before any Settings object exists, so the backend is
read here from the same variable Settings reads (KG_WAREHOUSE_BACKEND). Definitions built in-process for a
lake without that variable keep the stricter `duckdb` pool, which is safe.
"""

from __future__ import annotations

import os

LLM = "llm"


def warehouse_pools(backend: str) -> tuple[str | None, str]:
    """(pool of the steps that write the warehouse, pool of the dbt build) for a backend.

    dbt's own DDL (CREATE OR REPLACE VIEW) does not go through the warehouse's retry, so on the lake the dbt
    build keeps a pool of its own (limit 1): two runs never rebuild the marts at once."""
    return ("duckdb", "duckdb") if backend != "ducklake" else (None, "dbt")


WAREHOUSE, DBT = warehouse_pools(os.environ.get("KG_WAREHOUSE_BACKEND", "duckdb"))

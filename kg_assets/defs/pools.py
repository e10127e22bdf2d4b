"""The pools steps take, by what they share across runs (docs/ARCHITECTURE.md, "Pools").

The embedded DuckDB file allows one writing process, so every step that writes it takes pool `duckdb`
(limit 1, dagster.yaml's default_limit). A DuckLake has snapshot isolation and the warehouse retries its write
conflicts (storage/lake.py, retry_write_conflicts), so on the lake the partition steps take no pool at
all: the number of runs at once (the run queue's limit) is what bounds its writers. That is a change of
pool, not of an instance's limit, because Dagster's dagster.yaml sets one default limit for every pool (it
would lift `llm` too) and a pool's own limit lives in the instance's database, where a switch of backend
would not reach it.

Dagster fixes an op's pool when the asset is defined, before any Settings object exists, so the backend is
read here from the same variable Settings reads (KG_WAREHOUSE_BACKEND, `settings.configured_backend`). Definitions built in-process for a
lake without that variable keep the stricter `duckdb` pool, which is safe.
"""

from __future__ import annotations

from kg_assets.settings import configured_backend

LLM = "llm"


def warehouse_pools(backend: str) -> tuple[str | None, str, str]:
    """(pool of the partition steps that write the warehouse, of the consolidation steps, of the dbt build).

    On the lake, consolidation steps keep a pool (limit 1): a retried transaction writes what its step computed
    before, so two consolidations at once could let the one that commits last hold a graph read before the
    other run's partitions landed. One at a time, the later one starts after both runs' partitions and the
    other's consolidation, and reads them all. dbt's own DDL (CREATE OR REPLACE VIEW) does not go through the
    warehouse's retry, so on the lake the dbt build keeps a pool too: two runs never rebuild the marts at once."""
    if backend != "ducklake":
        return "duckdb", "duckdb", "duckdb"
    return None, "consolidation", "dbt"


WAREHOUSE, CONSOLIDATION, DBT = warehouse_pools(configured_backend())

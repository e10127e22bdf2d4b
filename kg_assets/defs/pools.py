"""The pools steps take, by what they share across runs (docs/ARCHITECTURE.md, "Pools").

The embedded DuckDB file allows one writing process, so every step that writes it takes pool `duckdb`
(limit 1, dagster.yaml's default_limit). A DuckLake has snapshot isolation and the warehouse retries its write
conflicts (storage/lake.py, retry_write_conflicts), so on the lake the partition steps take no pool at
all: the number of runs at once (the run queue's limit) is what bounds its writers. That is a change of
pool, not of an instance's limit, because Dagster's dagster.yaml sets one default limit for every pool (it
would lift `llm` too) and a pool's own limit lives in the instance's database, where a switch of backend
would not reach it.

Dagster fixes an op's pool when the asset is defined, so each defs module builds its assets from a `Pools`
(`assets(pools)`), and `build_definitions` passes the pools of its own settings' backend.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pools:
    """The pool of each kind of step on one warehouse backend (None: no pool)."""

    partitions: str | None  # partition steps that write the warehouse
    consolidation: str
    dbt: str
    llm: str = "llm"  # steps that call an LLM, on either backend


def backend_pools(backend: str) -> Pools:
    """The pools on the embedded file (`duckdb`) or on a DuckLake (`ducklake`).

    On the lake, consolidation steps keep a pool (limit 1): a retried transaction writes what its step computed
    before, so two consolidations at once could let the one that commits last hold a graph read before the
    other run's partitions landed. One at a time, the later one starts after both runs' partitions and the
    other's consolidation, and reads them all. dbt's own DDL (CREATE OR REPLACE VIEW) does not go through the
    warehouse's retry, so on the lake the dbt build keeps a pool too: two runs never rebuild the marts at once."""
    if backend != "ducklake":
        return Pools(partitions="duckdb", consolidation="duckdb", dbt="duckdb")
    return Pools(partitions=None, consolidation="consolidation", dbt="dbt")

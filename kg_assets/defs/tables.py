"""Assets that are tables of schema `kg`: their shared declaration, and metadata describing the tables
(shown in the UI's schema tab)."""

from __future__ import annotations

import functools
import hashlib
import inspect
import re
from collections.abc import Sequence

import dagster as dg
import polars as pl

from kg_assets.core import schemas
from kg_assets.storage.ddl import DUCK_TYPES
from kg_assets.storage.warehouse import SCHEMA


TABLE_KINDS = frozenset({"duckdb", "polars"})  # the UI's kind badges of an asset computed in Polars into DuckDB
# Who answers for every asset of this code location (the UI's owners; dbt marts too, defs/dbt.py).
OWNERS = ("team:kg-assets",)


def table_asset(table: str, *, group: str, kinds: frozenset[str] = TABLE_KINDS, **asset_args):
    """The `@dg.asset` decorator of an asset that is the table `table`: its name, group, kinds, columns, owners
    and code version (`contract_version`, unless given); `asset_args` add the rest (deps, pool, `partitioned(...)`)."""
    asset_args.setdefault("code_version", contract_version(table))
    return dg.asset(name=table, group_name=group, kinds=kinds, metadata=table_metadata(table), owners=OWNERS,
                    **asset_args)


def table_spec(key: str, *, group: str, deps: Sequence, description: str, table: str | None = None,
               **spec_args) -> dg.AssetSpec:
    """One output of a multi_asset that is a table (`table`, else `key`): as above."""
    spec_args.setdefault("code_version", contract_version(table or key))
    return dg.AssetSpec(key, deps=deps, group_name=group, kinds=TABLE_KINDS, metadata=table_metadata(table or key),
                        description=description, owners=OWNERS, **spec_args)


def contract_version(table: str) -> str:
    """The code version of a step with no version of its own (the chunker and the extractors have one): its
    table's contract, so the UI marks the table's materializations stale when a column is added or retyped."""
    columns = ",".join(f"{name}:{DUCK_TYPES[dtype]}" for name, dtype in schemas.TABLES[table].items())
    return "contract-" + hashlib.sha1(columns.encode()).hexdigest()[:12]


def table_metadata(table: str) -> dict[str, object]:
    """The table an asset is, and its columns with the DuckDB types the DDL creates (`storage/ddl.py`) and the
    contract's comments (the UI's schema tab)."""
    described = column_descriptions(table)
    return {
        "dagster/table_name": f"{SCHEMA}.{table}",
        "dagster/column_schema": dg.TableSchema(
            columns=[dg.TableColumn(name, DUCK_TYPES[dtype], description=described.get(name))
                     for name, dtype in schemas.TABLES[table].items()]
        ),
    }


_COLUMN_LINE = re.compile(r'^\s*"(\w+)":\s*[^#]+#\s*(.+?)\s*$')


@functools.cache
def column_descriptions(table: str) -> dict[str, str]:
    """column -> the comment beside it in its contract in `core/schemas.py`, the one place columns are described.
    A contract derived from another (FACT_INPUTS, a part of USER_FACTS) has the comments of that one."""
    contract = schemas.TABLES[table]
    written = _written_contracts()
    described = next((d for name, d in written.items() if getattr(schemas, name) is contract), None)
    if described is None:
        source = next(name for name, d in written.items() if contract.items() <= getattr(schemas, name).items())
        described = written[source]
    return {name: described[name] for name in contract if name in described}


@functools.cache
def _written_contracts() -> dict[str, dict[str, str]]:
    """Every contract written out as a dict literal in `core/schemas.py`: its name -> {column: comment}."""
    contracts: dict[str, dict[str, str]] = {}
    current = None
    for line in inspect.getsource(schemas).splitlines():
        if (start := re.match(r"^([A-Z_]+) = \{$", line)) and isinstance(getattr(schemas, start.group(1)), dict):
            current = contracts.setdefault(start.group(1), {})
        elif line.startswith("}"):
            current = None
        elif current is not None and (match := _COLUMN_LINE.match(line)):
            current[match.group(1)] = match.group(2)
    return contracts


def content_version(warehouse, table: str) -> dg.DataVersion:
    """A consolidation asset's data version is its table's content: a materialization that changed no row
    keeps the version, so the dbt marts reading it stay in sync in the UI (docs/pipeline.md)."""
    return dg.DataVersion(warehouse.content_version(table))


def markdown_table(frame: pl.DataFrame) -> dg.MetadataValue:
    """A small frame as a Markdown table for the UI ("none" when empty)."""
    if frame.height == 0:
        return dg.MetadataValue.md("none")
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in frame.iter_rows()]
    return dg.MetadataValue.md("\n".join(lines))


def rounded(value: float | None, digits: int) -> float:
    """Latencies and costs for the UI: a few digits, not float noise (0.0 when unknown)."""
    return round(float(value or 0.0), digits)

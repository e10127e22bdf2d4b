"""The DDL of schema `kg`: tables from the column contracts, the attribute views and table macro, and the
provenance view `extracted_from`.

The views are the SQL twins of `core.temporal.current_attributes` and `attributes_as_of`
(kg_assets_tests/test_temporal.py checks that both give the same rows).
"""

from __future__ import annotations

import duckdb
import polars as pl

from kg_assets.core import schemas
from kg_assets.core.normalize import parse_keywords

SCHEMA = "kg"

# The DuckDB type of each contract dtype, spelled as DuckDB itself reports it (information_schema.columns), so the
# DDL and the UI's schema tab (defs/tables.py) read the same.
DUCK_TYPES = {
    pl.String: "VARCHAR",
    pl.Int32: "INTEGER",
    pl.Int64: "BIGINT",
    pl.Float64: "DOUBLE",
    pl.Boolean: "BOOLEAN",
    schemas.TS: "TIMESTAMP WITH TIME ZONE",
    schemas.STRS: "VARCHAR[]",
    schemas.FIGURES: "STRUCT(page INTEGER, figure_number INTEGER, caption VARCHAR, image_sha256 VARCHAR, \"error\" VARCHAR)[]",
}

# Current values: one row per (entity_id, attr_key).
CURRENT_ATTRIBUTES_VIEW = f"""CREATE OR REPLACE VIEW {SCHEMA}.entity_attributes_current AS
SELECT * FROM {SCHEMA}.entity_attributes
WHERE valid_until IS NULL"""

# Every version, oldest first, numbered per key.
ATTRIBUTE_HISTORY_VIEW = f"""CREATE OR REPLACE VIEW {SCHEMA}.entity_attributes_history AS
SELECT *,
       row_number() OVER (PARTITION BY entity_id, attr_key ORDER BY valid_from) AS version,
       valid_until IS NULL AS is_current
FROM {SCHEMA}.entity_attributes
ORDER BY entity_id, attr_key, valid_from"""

# The values in force at `SET VARIABLE kg_as_of = TIMESTAMPTZ '…'` (a view cannot take a parameter); without the
# variable it is an error that says so, not an empty answer.
ATTRIBUTES_AS_OF_VIEW = f"""CREATE OR REPLACE VIEW {SCHEMA}.entity_attributes_as_of AS
SELECT * FROM {SCHEMA}.entity_attributes
WHERE CASE WHEN getvariable('kg_as_of') IS NULL
           THEN error('kg.entity_attributes_as_of reads the variable kg_as_of, which is not set: '
                      || 'SET VARIABLE kg_as_of = TIMESTAMPTZ ''2025-03-01'' first, '
                      || 'or use kg.entity_attributes_at(TIMESTAMPTZ ''2025-03-01'')')
           ELSE valid_from <= getvariable('kg_as_of')
                AND (valid_until IS NULL OR getvariable('kg_as_of') < valid_until) END"""

# The same as a table macro: SELECT * FROM kg.entity_attributes_at(TIMESTAMPTZ '2025-03-01').
ATTRIBUTES_AT_MACRO = f"""CREATE OR REPLACE MACRO {SCHEMA}.entity_attributes_at(ts) AS TABLE
SELECT * FROM {SCHEMA}.entity_attributes
WHERE valid_from <= ts AND (valid_until IS NULL OR ts < valid_until)"""

# Provenance as graph edges: current node -> each chunk it was extracted from (the SQL twin of
# `core.consolidate.provenance_edges`).
EXTRACTED_FROM_VIEW = f"""CREATE OR REPLACE VIEW {SCHEMA}.extracted_from AS
SELECT DISTINCT n.node_id AS source_id, u.chunk_id AS target_id, 'EXTRACTED_FROM' AS relation_type,
       1.0::DOUBLE AS confidence, c.document_id, c.section_path
FROM {SCHEMA}.graph_nodes n, unnest(n.source_chunk_ids) AS u(chunk_id)
LEFT JOIN {SCHEMA}.chunks c ON c.chunk_id = u.chunk_id
WHERE n.valid_until IS NULL AND u.chunk_id IS NOT NULL"""

VIEWS = (CURRENT_ATTRIBUTES_VIEW, ATTRIBUTE_HISTORY_VIEW, ATTRIBUTES_AS_OF_VIEW, EXTRACTED_FROM_VIEW)
MACROS = (ATTRIBUTES_AT_MACRO,)


def create_session_macros(con: duckdb.DuckDBPyConnection, lake: str) -> None:
    """DuckLake stores no functions: each lake session gets the macros in its in-memory catalog's schema `kg`,
    found as `kg.…` through the search path, reading the lake's tables."""
    con.execute(f"CREATE SCHEMA IF NOT EXISTS memory.{SCHEMA}")
    for statement in MACROS:
        con.execute(statement.replace(f"MACRO {SCHEMA}.", f"MACRO memory.{SCHEMA}.")
                    .replace(f"FROM {SCHEMA}.", f"FROM {lake}.{SCHEMA}."))
    con.execute(f"SET search_path = '{lake}.{SCHEMA},memory.{SCHEMA}'")


def table_ddl(table: str, schema: dict[str, pl.DataType]) -> str:
    cols = ", ".join(f'"{name}" {DUCK_TYPES[dtype]}' for name, dtype in schema.items())
    return f"CREATE TABLE IF NOT EXISTS {SCHEMA}.{table} ({cols})"


# Contract columns that were one string and are now a list: (table, column) -> the rule that reads the old string.
TO_LISTS = {("local_relations", "keywords"): parse_keywords}


def create_schema(con: duckdb.DuckDBPyConnection, lake: bool = False) -> None:
    """Create schema `kg`, its tables, views and macro (a lake's are per session); add contract columns that
    older files lack, and convert the string columns of older files that are lists now (TO_LISTS)."""
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    types = dict(con.execute(
        "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns WHERE table_schema = $s",
        {"s": SCHEMA}).fetchall())
    existing = set(types)
    for table, schema in schemas.TABLES.items():
        had_table = any(e.startswith(f"{table}.") for e in existing)
        con.execute(table_ddl(table, schema))
        for name, dtype in schema.items():
            if had_table and f"{table}.{name}" not in existing:
                con.execute(f'ALTER TABLE {SCHEMA}.{table} ADD COLUMN "{name}" {DUCK_TYPES[dtype]}')
    for (table, name), parse in TO_LISTS.items():
        if types.get(f"{table}.{name}") == "VARCHAR":
            _string_to_list(con, table, name, parse, lake)
    if "documents.document_id" in existing and "documents.arrival_day" not in existing:
        con.execute(BACKFILL_ARRIVAL_DAYS)
    for statement in VIEWS + (() if lake else MACROS):
        con.execute(statement)


def _string_to_list(con: duckdb.DuckDBPyConnection, table: str, name: str, parse, lake: bool) -> None:
    """Convert the VARCHAR column `name` of an older warehouse into VARCHAR[], each value read by `parse` (a NULL
    as None). The embedded file converts it in place, in one statement (the column keeps its position). DuckLake
    changes no column's type to a list: there a new column is added (committed alone: DuckLake 1.4.4 fails to
    commit an added column dropped or renamed in the same transaction), then one transaction fills it, drops
    the old column and gives the new one its name. A run stopped between the two finds the string column
    still there and does both again."""
    function = f"kg_to_list_{table}_{name}"
    con.create_function(function, lambda value: parse(value), [duckdb.sqltype("VARCHAR")],
                        duckdb.sqltype("VARCHAR[]"), null_handling="special", side_effects=False)
    target, converted = f"{SCHEMA}.{table}", f"{name}__list"
    try:
        if not lake:
            con.execute(f'ALTER TABLE {target} ALTER COLUMN "{name}" SET DATA TYPE VARCHAR[] USING {function}("{name}")')
            return
        con.execute(f'ALTER TABLE {target} ADD COLUMN IF NOT EXISTS "{converted}" VARCHAR[]')
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(f'UPDATE {target} SET "{converted}" = {function}("{name}")')
            con.execute(f'ALTER TABLE {target} DROP COLUMN "{name}"')
            con.execute(f'ALTER TABLE {target} RENAME COLUMN "{converted}" TO "{name}"')
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    finally:
        con.remove_function(function)


# A warehouse made before arrival-day partitions: each document arrived the day its first row was ingested.
BACKFILL_ARRIVAL_DAYS = f"""UPDATE {SCHEMA}.documents d SET arrival_day = f.day
FROM (SELECT document_id, strftime(min(ingested_at) AT TIME ZONE 'UTC', '%Y-%m-%d') AS day
      FROM {SCHEMA}.documents GROUP BY document_id) f
WHERE d.document_id = f.document_id"""

"""DuckDB warehouse: schema `kg`, transactional partition writes, current-state merges.

Every write is one transaction (delete + insert commit together or not at all), inserts go
`BY NAME` so column order never matters, and every connection is closed on every path.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
from tenacity import retry, retry_if_exception, stop_after_delay, wait_exponential_jitter

from kg_assets.core import schemas, temporal

DEFAULT_DB_PATH = "data/warehouse.duckdb"
SCHEMA = "kg"

_DUCK_TYPES = {
    pl.String: "VARCHAR",
    pl.Int32: "INTEGER",
    pl.Int64: "BIGINT",
    pl.Float64: "DOUBLE",
    pl.Boolean: "BOOLEAN",
    schemas.TS: "TIMESTAMPTZ",
    schemas.STRS: "VARCHAR[]",
}

# Tables written per document partition; consolidation reads them and prunes retired documents.
PARTITIONED_TABLES = (
    "documents", "chunks", "entity_mentions", "local_relations", "attribute_observations", "chunk_extractions",
)


def db_path_from_env() -> str:
    return os.environ.get("KG_DUCKDB_PATH", DEFAULT_DB_PATH)


def _ddl(table: str, schema: dict[str, pl.DataType]) -> str:
    cols = ", ".join(f'"{name}" {_DUCK_TYPES[dtype]}' for name, dtype in schema.items())
    return f"CREATE TABLE IF NOT EXISTS {SCHEMA}.{table} ({cols})"


def _is_lock_conflict(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()


# Another process (a run in another pool, a user's SQL shell) may hold the file for a moment.
@retry(
    retry=retry_if_exception(_is_lock_conflict),
    wait=wait_exponential_jitter(initial=0.05, max=2.0),
    stop=stop_after_delay(float(os.environ.get("KG_DUCKDB_LOCK_TIMEOUT_S", "120"))),
    reraise=True,
)
def _open(path: str, read_only: bool) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(path, read_only=read_only)


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: object = None) -> pl.DataFrame:
    return con.sql(sql, params=params).pl()


def _scalar(con: duckdb.DuckDBPyConnection, sql: str, params: object = None) -> object:
    # fetchall, not fetchone: duckdb 2.0 keeps a half-read result pending on the connection.
    return con.execute(sql, params or []).fetchall()[0][0]


def now_utc() -> datetime:
    return datetime.now(UTC)


class Warehouse:
    """Small, explicit access to the `kg` schema of one DuckDB file."""

    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = str(path or db_path_from_env())

    @contextlib.contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        if not read_only:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        con = _open(self.path, read_only)
        try:
            if not read_only:
                self._ensure_schema(con)
            yield con
        finally:
            con.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection inside BEGIN/COMMIT; any exception rolls everything back."""
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    @staticmethod
    def _ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        existing = set(con.execute(
            "SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_schema = $s", {"s": SCHEMA}
        ).fetchall())
        existing = {row[0] for row in existing}
        for table, schema in schemas.TABLES.items():
            con.execute(_ddl(table, schema))
            # Columns added to a contract later are added to older warehouses too.
            for name, dtype in schema.items():
                if existing and f"{table}.{name}" not in existing and any(e.startswith(f"{table}.") for e in existing):
                    con.execute(f'ALTER TABLE {SCHEMA}.{table} ADD COLUMN "{name}" {_DUCK_TYPES[dtype]}')
        for view in temporal.VIEWS_SQL:
            con.execute(view)

    # ---- reads -----------------------------------------------------------------------------
    def query(self, sql: str, params: object = None, read_only: bool = False) -> pl.DataFrame:
        with self.connect(read_only=read_only) as con:
            return _frame(con, sql, params)

    def read_partitions(self, table: str, document_ids: Sequence[str], current_only: bool = True) -> pl.DataFrame:
        where = "document_id IN (SELECT unnest($ids))"
        if current_only and "valid_until" in schemas.TABLES[table]:
            where += " AND valid_until IS NULL"
        frame = self.query(f"SELECT * FROM {SCHEMA}.{table} WHERE {where}", {"ids": list(document_ids)})
        return schemas.conform(frame, schemas.TABLES[table])

    def chunks_for_extraction(self, document_ids: Sequence[str]) -> pl.DataFrame:
        """Chunks of the documents with their document's headings, the outline prompts give as context."""
        return self.query(
            f"""SELECT c.*, d.headings FROM {SCHEMA}.chunks c
                JOIN {SCHEMA}.documents d ON d.document_id = c.document_id AND d.valid_until IS NULL
                WHERE c.document_id IN (SELECT unnest($ids)) ORDER BY c.document_id, c.chunk_index""",
            {"ids": list(document_ids)},
        )

    def counts(self) -> dict[str, int]:
        current = {t: "valid_until IS NULL" for t, s in schemas.TABLES.items() if "valid_until" in s}
        with self.connect() as con:
            return {
                table: _scalar(con, f"SELECT count(*) FROM {SCHEMA}.{table} WHERE {current.get(table, 'true')}")
                for table in schemas.TABLES
            }

    def stale_documents(self, extractor_version: str, chunker_version: str) -> list[str]:
        """Current documents whose chunks or extractions were made by other versions, or failed."""
        if not Path(self.path).exists():
            return []
        return self.query(
            f"""SELECT DISTINCT d.document_id FROM {SCHEMA}.documents d
                LEFT JOIN {SCHEMA}.chunks c USING (document_id)
                LEFT JOIN {SCHEMA}.chunk_extractions e
                       ON e.chunk_id = c.chunk_id AND e.status = 'ok' AND e.extractor_version = $ev
                WHERE d.valid_until IS NULL AND d.status = 'ok'
                  AND (c.chunk_id IS NULL OR c.chunker_version <> $cv OR e.chunk_id IS NULL)
                ORDER BY 1""",
            {"ev": extractor_version, "cv": chunker_version},
            read_only=True,
        )["document_id"].to_list()

    # ---- writes ----------------------------------------------------------------------------
    @staticmethod
    def _insert(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
        if frame.height == 0:
            return
        rows = schemas.conform(frame, schemas.TABLES[table])
        con.register("_rows", rows)
        try:
            con.execute(f"INSERT INTO {SCHEMA}.{table} BY NAME SELECT * FROM _rows")
        finally:
            con.unregister("_rows")

    def replace_partitions(self, frames: dict[str, pl.DataFrame], document_ids: Sequence[str]) -> None:
        """Atomically replace every row of `document_ids` in each table with the given frames."""
        ids = list(document_ids)
        with self.transaction() as con:
            for table, frame in frames.items():
                con.execute(f"DELETE FROM {SCHEMA}.{table} WHERE document_id IN (SELECT unnest($ids))", {"ids": ids})
                self._insert(con, table, frame)

    def upsert_rows(self, table: str, key: str, frame: pl.DataFrame) -> None:
        """Insert rows, replacing any with the same `key` value (idempotent appends to a log table)."""
        if frame.height == 0:
            return
        with self.transaction() as con:
            con.execute(f"DELETE FROM {SCHEMA}.{table} WHERE {key} IN (SELECT unnest($ids))", {"ids": frame[key].to_list()})
            self._insert(con, table, frame)

    def set_link_override(self, from_id: str, to_id: str, action: str | None, note: str | None = None) -> None:
        """Record (or with action None, remove) a manual split/merge decision between two entity ids."""
        with self.transaction() as con:
            con.execute(f"DELETE FROM {SCHEMA}.link_overrides WHERE (from_id, to_id) IN (($a, $b), ($b, $a))",
                        {"a": from_id, "b": to_id})
            if action is not None:
                self._insert(con, "link_overrides", pl.DataFrame([{
                    "from_id": from_id, "to_id": to_id, "action": action, "note": note, "created_at": now_utc()}]))

    def upsert_documents(self, docs: pl.DataFrame) -> pl.DataFrame:
        """Versioned write of documents: a new content hash closes the current row and opens a new one.

        Returns the frame of documents whose content (or status) changed, i.e. that need downstream work.
        """
        ts = now_utc()
        docs = schemas.conform(docs, schemas.DOCUMENTS).with_columns(
            pl.lit(ts).cast(schemas.TS).alias("valid_from"), pl.lit(None).cast(schemas.TS).alias("valid_until")
        )
        with self.transaction() as con:
            con.register("_docs", docs)
            try:
                changed = _frame(
                    con,
                    f"""SELECT n.document_id FROM _docs n LEFT JOIN {SCHEMA}.documents o
                        ON o.document_id = n.document_id AND o.valid_until IS NULL
                        WHERE o.document_id IS NULL OR o.content_hash IS DISTINCT FROM n.content_hash
                           OR o.status IS DISTINCT FROM n.status""",
                )
                con.execute(
                    f"""UPDATE {SCHEMA}.documents SET valid_until = $ts
                        WHERE valid_until IS NULL AND document_id IN (SELECT unnest($ids))""",
                    {"ts": ts, "ids": changed["document_id"].to_list()},
                )
            finally:
                con.unregister("_docs")
            self._insert(con, "documents", docs.join(changed, on="document_id", how="semi"))
        return docs.join(changed, on="document_id", how="semi")

    def retire_documents(self, current_ids: Sequence[str]) -> list[str]:
        """Remove every partitioned row of documents that are no longer partitions; close their documents row."""
        ids = list(current_ids)
        ts = now_utc()
        with self.transaction() as con:
            retired = _frame(
                con,
                f"""SELECT DISTINCT document_id FROM {SCHEMA}.documents
                    WHERE valid_until IS NULL AND document_id NOT IN (SELECT unnest($ids))""",
                {"ids": ids},
            )["document_id"].to_list()
            if not retired:
                return []
            for table in PARTITIONED_TABLES[1:]:
                con.execute(
                    f"DELETE FROM {SCHEMA}.{table} WHERE document_id IN (SELECT unnest($r))", {"r": retired}
                )
            con.execute(
                f"""UPDATE {SCHEMA}.documents SET valid_until = $ts, status = 'deleted'
                    WHERE valid_until IS NULL AND document_id IN (SELECT unnest($r))""",
                {"ts": ts, "r": retired},
            )
        return retired

    def replace_current(self, tables: dict[str, tuple[Sequence[str], pl.DataFrame]]) -> dict[str, dict[str, int]]:
        """Make each frame the current state of its versioned table, all tables in one transaction.

        Keys that vanished are closed (valid_until = now) and kept as history; surviving keys keep their
        original valid_from; new keys open with valid_from = now.
        """
        ts = now_utc()
        stats = {}
        with self.transaction() as con:
            for table, (key, frame) in tables.items():
                stats[table] = self._merge_current(con, table, key, frame, ts)
        return stats

    def _merge_current(self, con, table: str, key: Sequence[str], frame: pl.DataFrame, ts: datetime) -> dict[str, int]:
        new = schemas.conform(frame, schemas.TABLES[table]).drop("valid_from", "valid_until")
        on = " AND ".join(f'o."{k}" = n."{k}"' for k in key)
        con.register("_new", new)
        try:
            closed = _scalar(
                con,
                f"""UPDATE {SCHEMA}.{table} o SET valid_until = $ts WHERE o.valid_until IS NULL
                    AND NOT EXISTS (SELECT 1 FROM _new n WHERE {on})""",
                {"ts": ts},
            )
            merged = _frame(
                con,
                f"""SELECT n.*, coalesce(o.valid_from, $ts) AS valid_from, NULL::TIMESTAMPTZ AS valid_until
                    FROM _new n LEFT JOIN {SCHEMA}.{table} o ON {on} AND o.valid_until IS NULL""",
                {"ts": ts},
            )
            con.execute(
                f"""DELETE FROM {SCHEMA}.{table} o WHERE o.valid_until IS NULL
                    AND EXISTS (SELECT 1 FROM _new n WHERE {on})"""
            )
        finally:
            con.unregister("_new")
        self._insert(con, table, merged)
        return {"current": merged.height, "closed": int(closed or 0)}

    def replace_tables(self, frames: dict[str, pl.DataFrame]) -> None:
        """Replace whole derived tables (redirects, attribute history) atomically, all or none."""
        with self.transaction() as con:
            for table, frame in frames.items():
                con.execute(f"DELETE FROM {SCHEMA}.{table}")
                self._insert(con, table, frame)

    # ---- integrity queries (asset checks) ---------------------------------------------------
    def duplicate_current_keys(self, table: str, key: Sequence[str]) -> pl.DataFrame:
        cols = ", ".join(key)
        return self.query(
            f"""SELECT {cols}, count(*) AS current_rows FROM {SCHEMA}.{table} WHERE valid_until IS NULL
                GROUP BY {cols} HAVING count(*) > 1 ORDER BY {cols}"""
        )

    def redirect_problems(self) -> pl.DataFrame:
        """Redirects that point nowhere current, at themselves, or into another redirect (a chain or cycle)."""
        return self.query(
            f"""SELECT a.from_id, a.to_id,
                       CASE WHEN a.from_id = a.to_id THEN 'self'
                            WHEN EXISTS (SELECT 1 FROM {SCHEMA}.entity_aliases b WHERE b.from_id = a.to_id) THEN 'chain or cycle'
                            ELSE 'target is not a current entity' END AS problem
                FROM {SCHEMA}.entity_aliases a
                WHERE a.from_id = a.to_id
                   OR EXISTS (SELECT 1 FROM {SCHEMA}.entity_aliases b WHERE b.from_id = a.to_id)
                   OR NOT EXISTS (SELECT 1 FROM {SCHEMA}.entities e WHERE e.entity_id = a.to_id AND e.valid_until IS NULL)
                ORDER BY 1"""
        )

    def orphans(self, table: str, column: str, parent: str, parent_column: str, parent_current: bool = False) -> pl.DataFrame:
        """Rows of `table` whose `column` matches no `parent_column` of `parent` (current rows only if asked)."""
        where = "AND p.valid_until IS NULL" if parent_current else ""
        own_current = "AND t.valid_until IS NULL" if "valid_until" in schemas.TABLES[table] else ""
        return self.query(
            f"""SELECT DISTINCT t.{column} FROM {SCHEMA}.{table} t
                WHERE t.{column} IS NOT NULL {own_current} AND NOT EXISTS (
                    SELECT 1 FROM {SCHEMA}.{parent} p WHERE p.{parent_column} = t.{column} {where})
                ORDER BY 1"""
        )

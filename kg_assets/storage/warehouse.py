"""DuckDB warehouse: schema `kg`, transactional partition writes, current-state merges.

Every write is one transaction (delete + insert commit together or not at all), inserts go
`BY NAME` so column order never matters, and every connection is closed on every path (during a run, a
connection to the embedded file is a cursor on a database held open for a moment: held_files.py).

The schema (storage/ddl.py) is created by the first write connection to a file in each process, and
again whenever the file did not exist yet; reads use read-only connections and never create anything.
Reading a warehouse file that does not exist raises WarehouseNotFound (callers that treat "no
warehouse yet" as "nothing yet" ask `exists()` first).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import duckdb
import polars as pl
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_exponential_jitter

from kg_assets.core import schemas
from kg_assets.storage import held_files
from kg_assets.storage.ddl import SCHEMA, create_schema, create_session_macros
from kg_assets.storage.lake import (LAKE, LakeNotCreated, Snapshot, connect_lake, is_write_conflict, lake_cursor,
                                    retry_write_conflicts)
from kg_assets.storage.reads import Keys, WarehouseReads, execute, fetch_frame
from kg_assets.storage.versioned_merge import merge_current

__all__ = ["SANDBOX", "SCHEMA", "NoTimeTravel", "Warehouse", "WarehouseBusy", "WarehouseNotFound", "now_utc"]

T = TypeVar("T")

# Tables written per document partition; consolidation reads them and prunes retired documents.
PARTITIONED_TABLES = (
    "documents", "chunks", "entity_mentions", "local_relations", "attribute_observations", "chunk_extractions",
    "fact_extractions", "message_facts",
)
# Versioned per document partition: a retired document closes them (history is kept).
VERSIONED_PARTITION_TABLES = ("messages",)

# Files whose schema this process has created or checked (once per process per file).
_SCHEMA_READY: set[str] = set()


class WarehouseNotFound(FileNotFoundError):
    """A read of a warehouse file that does not exist (yet)."""


class WarehouseBusy(RuntimeError):
    """Another process held the file's lock, or kept winning the lake's write conflicts, for longer than the lock
    timeout."""


class NoTimeTravel(ValueError):
    """Snapshots asked of the embedded file, which keeps none (only a DuckLake does)."""


# What a query the warehouse refuses or cannot run raises (a typo, a write on a read-only connection, a file
# the sandbox refuses): DuckDB's own error, under a name of the storage layer, the only importer of duckdb.
QueryError = duckdb.Error


def _is_lock_conflict(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()


# A connection for SQL a user typed: no file but the warehouse itself (no COPY TO, read_text, ATTACH, URLs),
# no extension installed or loaded, and settings nobody can change back from inside the query.
SANDBOX = {"enable_external_access": False, "autoinstall_known_extensions": False, "autoload_known_extensions": False,
           "allow_community_extensions": False, "lock_configuration": True}


def _open(path: str, read_only: bool, lock_timeout_s: float, config: dict | None = None) -> duckdb.DuckDBPyConnection:
    # Another process (a run in another pool, a user's SQL shell) may hold the file for a moment.
    retrying = Retrying(retry=retry_if_exception(_is_lock_conflict), wait=wait_exponential_jitter(initial=0.05, max=2.0),
                        stop=stop_after_delay(lock_timeout_s), reraise=True)
    try:
        return retrying(duckdb.connect, path, read_only=read_only, config=config or {})
    except duckdb.IOException as exc:
        if _is_lock_conflict(exc):
            raise WarehouseBusy(f"{path} stayed locked by another process for {lock_timeout_s:g} s "
                                f"(KG_DUCKDB_LOCK_TIMEOUT_S): {exc}") from exc
        raise


# A process's cursors on one lake share its session's in-memory catalog, where the macros are (re)created: one at a
# time, so that two threads connecting at once do not conflict on it.
_MACROS_LOCK = threading.Lock()


def _session_macros(con: duckdb.DuckDBPyConnection) -> None:
    with _MACROS_LOCK:
        create_session_macros(con, LAKE)


def now_utc() -> datetime:
    return datetime.now(UTC)


class Warehouse(WarehouseReads):
    """Small, explicit access to the `kg` schema of one DuckDB file."""

    def __init__(self, path: str | os.PathLike[str], lock_timeout_s: float = 120.0,
                 lake: tuple[str, str] | None = None):
        """`lake` = (PostgreSQL catalog DSN, data path) selects DuckLake; `path` is then only a label."""
        self.path = str(path)
        self.lock_timeout_s = lock_timeout_s
        self.lake = lake

    @classmethod
    def from_settings(cls, settings, lock_timeout_s: float | None = None) -> Warehouse:
        """The warehouse a WarehouseSettings (or its resource) selects: the DuckDB file or the DuckLake."""
        timeout = settings.lock_timeout_s if lock_timeout_s is None else lock_timeout_s
        if settings.backend == "ducklake":
            return cls(f"ducklake:{settings.lake_data_path}", timeout, lake=(settings.lake_catalog, settings.lake_data_path))
        return cls(settings.db_path, timeout)

    @staticmethod
    def hold_files() -> None:
        """Until `let_go_of_files()`, keep each embedded file this process opens open for a moment after its last
        connection (storage/held_files.py); a lake already keeps one attachment per process."""
        held_files.hold()

    @staticmethod
    def let_go_of_files() -> None:
        held_files.let_go()

    def release(self) -> None:
        """Close this file's held database now if it is idle, before another process (dbt) opens it."""
        if self.lake is None:
            held_files.release(self.path)

    @property
    def folder(self) -> Path:
        """The local folder beside the warehouse for files derived from it (pictures)."""
        return Path(self.lake[1] if self.lake is not None else self.path).parent

    def exists(self) -> bool:
        if self.lake is None:
            return Path(self.path).exists()
        # A lake exists once a write connection has initialised its catalog (a read-only ATTACH cannot).
        try:
            lake_cursor(*self.lake, read_only=True).close()
        except LakeNotCreated:
            return False
        return True

    def _needs_lake(self) -> None:
        if self.lake is None:
            raise NoTimeTravel(f"{self.path} is an embedded DuckDB file, which keeps no snapshots: time travel needs "
                               "the DuckLake backend (KG_WAREHOUSE_BACKEND=ducklake)")

    def snapshots(self) -> pl.DataFrame:
        """The lake's snapshots, oldest first: id, commit time and what each changed (for `kg sql --snapshots`)."""
        self._needs_lake()
        with self.connect(read_only=True) as con:
            return fetch_frame(con, f"""SELECT snapshot_id, snapshot_time, changes FROM ducklake_snapshots('{LAKE}')
                                        ORDER BY snapshot_id""")

    @contextlib.contextmanager
    def connect(self, read_only: bool = False, sandboxed: bool = False,
                snapshot: Snapshot | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection, closed on exit; a write connection makes sure the schema exists first.

        `sandboxed` (read-only only) is the connection for user SQL: see SANDBOX. `snapshot` (lake only) reads
        the whole lake as of that snapshot id or time."""
        if sandboxed and not read_only:
            raise ValueError("a sandboxed connection is read-only")
        if snapshot is not None:
            self._needs_lake()
        if read_only and self.lake is None and not self.exists():
            raise WarehouseNotFound(f"no warehouse at {self.path} yet (`kg run` builds it)")
        with contextlib.ExitStack() as stack:
            if self.lake is not None:
                new_file = False  # a write ATTACH initialises the catalog; the schema is checked once per process
                try:
                    if sandboxed or snapshot is not None:
                        # A sandbox locks the configuration, and the macros set the search path: they come first there.
                        con = self._retrying_conflicts(connect_lake, *self.lake, read_only=read_only,
                                                       config=SANDBOX if sandboxed else None, snapshot=snapshot,
                                                       setup=_session_macros if sandboxed else None)
                    else:
                        con = self._retrying_conflicts(lake_cursor, *self.lake, read_only=read_only)
                except LakeNotCreated as exc:
                    raise WarehouseNotFound(str(exc)) from exc
                stack.callback(con.close)
            else:
                new_file = not self.exists()
                if new_file:
                    Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                if sandboxed:
                    con = _open(self.path, read_only, self.lock_timeout_s, SANDBOX)
                    stack.callback(con.close)
                else:
                    con = stack.enter_context(held_files.connection(
                        self.path, read_only, lambda: _open(self.path, read_only, self.lock_timeout_s)))
            if not read_only and (new_file or self.path not in _SCHEMA_READY):
                # Every process's first write connection replaces the views: on a lake, another process may do so
                # at the same moment (each statement commits alone, so a rerun repeats only idempotent DDL).
                self._retrying_conflicts(create_schema, con, lake=self.lake is not None)
                _SCHEMA_READY.add(self.path)
            if self.lake is not None and not sandboxed:
                _session_macros(con)
            yield con

    def ensure_schema(self) -> None:
        """On a lake, make sure schema `kg` is complete before reading it: another process may be creating a new
        lake at this moment, one table at a time. Once per process; the embedded file has one writer."""
        if self.lake is not None and self.path not in _SCHEMA_READY:
            with self.connect():
                pass

    def create_schema(self) -> None:
        """Create the file and schema `kg` now, or add contract columns an older file lacks (idempotent)."""
        _SCHEMA_READY.discard(self.path)
        with self.connect():
            pass

    @contextlib.contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection inside BEGIN/COMMIT; any exception rolls everything back. Not retried: writes go
        through `write`."""
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def write(self, body: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """`body(con)` in one transaction on a fresh connection; returns what it returns.

        On a lake, a write conflict with a concurrent run reruns `body` whole (retry_write_conflicts), so
        `body` reads and writes through `con` only. The embedded file has one writer and never conflicts."""
        def attempt() -> T:
            with self.transaction() as con:
                return body(con)
        return self._retrying_conflicts(attempt)

    def _retrying_conflicts(self, fn: Callable[..., T], *args, **kwargs) -> T:
        try:
            return retry_write_conflicts(self.lock_timeout_s)(fn, *args, **kwargs)
        except duckdb.Error as exc:
            if is_write_conflict(exc):
                raise WarehouseBusy(f"concurrent runs kept winning the write conflicts on {self.path} for "
                                    f"{self.lock_timeout_s:g} s (KG_DUCKDB_LOCK_TIMEOUT_S): {exc}") from exc
            raise

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

    def replace_partitions(self, frames: dict[str, pl.DataFrame], document_ids: Sequence[str],
                           keep_chunk_ids: Sequence[str] = ()) -> None:
        """Atomically replace every row of `document_ids` in each table with the given frames, except the rows of
        `keep_chunk_ids`, which stay as they are (an extraction's reused chunks: not read, not written again)."""
        ids, keep = Keys(document_ids), Keys(keep_chunk_ids)
        kept = " AND (chunk_id IS NULL OR chunk_id NOT IN (SELECT v FROM _keep))" if len(keep) else ""

        def body(con) -> None:
            for table, frame in frames.items():
                execute(con, f"DELETE FROM {SCHEMA}.{table} WHERE document_id IN (SELECT v FROM _ids){kept}",
                        {"ids": ids, "keep": keep} if kept else {"ids": ids})
                self._insert(con, table, frame)
        self.write(body)

    def upsert_rows(self, table: str, key: str, frame: pl.DataFrame) -> None:
        """Insert rows, replacing any with the same `key` value (idempotent appends to a log table)."""
        if frame.height == 0:
            return

        def body(con) -> None:
            execute(con, f"DELETE FROM {SCHEMA}.{table} WHERE {key} IN (SELECT v FROM _ids)", {"ids": Keys(frame[key])})
            self._insert(con, table, frame)
        self.write(body)

    def create_views(self, schema: str, views: Sequence[tuple[str, str]]) -> None:
        """Create or replace each (name, query) view of `schema`, in the order given (a view after those it reads),
        in one transaction: the dbt marts from dbt's compiled SQL, the project's own, never user input."""
        def body(con) -> None:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            for name, query in views:
                con.execute(f'CREATE OR REPLACE VIEW {schema}."{name}" AS (\n{query}\n)')
        self.write(body)

    def set_link_override(self, from_id: str, to_id: str, action: str | None, note: str | None = None) -> None:
        """Record (or with action None, remove) a manual split/merge decision between two entity ids."""
        def body(con) -> None:
            con.execute(f"DELETE FROM {SCHEMA}.link_overrides WHERE (from_id, to_id) IN (($a, $b), ($b, $a))",
                        {"a": from_id, "b": to_id})
            if action is not None:
                self._insert(con, "link_overrides", pl.DataFrame([{
                    "from_id": from_id, "to_id": to_id, "action": action, "note": note, "created_at": now_utc()}]))
        self.write(body)

    def upsert_documents(self, docs: pl.DataFrame) -> pl.DataFrame:
        """Versioned write of documents: a new content hash, status, text or outline closes the current row
        and opens a new one.

        Returns the frame of documents whose content (or status) changed, i.e. that need downstream work.
        """
        ts = now_utc()
        docs = schemas.conform(docs, schemas.DOCUMENTS).with_columns(
            pl.lit(ts).cast(schemas.TS).alias("valid_from"), pl.lit(None).cast(schemas.TS).alias("valid_until")
        )

        def body(con) -> pl.DataFrame:
            con.register("_docs", docs)
            try:
                changed = fetch_frame(
                    con,
                    f"""SELECT n.document_id FROM _docs n LEFT JOIN {SCHEMA}.documents o
                        ON o.document_id = n.document_id AND o.valid_until IS NULL
                        WHERE o.document_id IS NULL OR o.content_hash IS DISTINCT FROM n.content_hash
                           OR o.status IS DISTINCT FROM n.status
                           -- the same bytes read by a newer reader (headings marked, an outline found)
                           OR o.text IS DISTINCT FROM n.text OR o.headings IS DISTINCT FROM n.headings""",
                )
                ids = Keys(changed["document_id"])
                execute(
                    con,
                    f"""UPDATE {SCHEMA}.documents SET valid_until = $ts
                        WHERE valid_until IS NULL AND document_id IN (SELECT v FROM _ids)""",
                    {"ts": ts, "ids": ids},
                )
                # Chunks cut from the old text go with it: a run stopped before its chunks step leaves the document
                # without chunks, which the planner redoes (stale_documents), not with old chunks taken for current.
                # Their extractions stay, for the chunks cut again the same (the same ids) to reuse.
                execute(con, f"DELETE FROM {SCHEMA}.chunks WHERE document_id IN (SELECT v FROM _ids)", {"ids": ids})
                # Same bytes, new mtime (a touch, a copy): remember the signature so the planner stops hashing it.
                con.execute(
                    f"""UPDATE {SCHEMA}.documents o SET file_signature = n.file_signature FROM _docs n
                        WHERE o.document_id = n.document_id AND o.valid_until IS NULL
                          AND o.file_signature IS DISTINCT FROM n.file_signature"""
                )
            finally:
                con.unregister("_docs")
            self._insert(con, "documents", docs.join(changed, on="document_id", how="semi"))
            return changed
        changed = self.write(body)
        return docs.join(changed, on="document_id", how="semi")

    def record_file_signatures(self, signatures: Sequence[tuple[str, str]]) -> None:
        """Remember the size:mtime of files whose bytes did not change, so the planner stops hashing them."""
        if not signatures:
            return
        frame = pl.DataFrame(list(signatures), schema={"document_id": pl.String, "file_signature": pl.String}, orient="row")

        def body(con) -> None:
            con.register("_signatures", frame)
            try:
                con.execute(f"""UPDATE {SCHEMA}.documents d SET file_signature = s.file_signature FROM _signatures s
                                WHERE d.document_id = s.document_id AND d.valid_until IS NULL""")
            finally:
                con.unregister("_signatures")
        self.write(body)

    def fail_documents(self, failures: pl.DataFrame) -> None:
        """Mark documents whose content made a later step raise (document_id, error): their current row gets
        status 'error' and the error ("<step>: <exception>"), so every later step leaves them out and the run
        summary lists them. Reading the file again (when it changes) gives a new row."""
        if failures.height == 0:
            return

        def body(con) -> None:
            con.register("_failed", failures.select("document_id", "error"))
            try:
                con.execute(f"""UPDATE {SCHEMA}.documents d SET status = 'error', error = f.error FROM _failed f
                                WHERE d.document_id = f.document_id AND d.valid_until IS NULL""")
            finally:
                con.unregister("_failed")
        self.write(body)

    def retire_documents(self, document_ids: Sequence[str]) -> list[str]:
        """Remove every partitioned row of documents whose file is gone; close their documents row as 'deleted'."""
        ids = list(document_ids)
        if not ids:
            return []
        ts = now_utc()

        def body(con) -> list[str]:
            retired = fetch_frame(
                con,
                f"""SELECT DISTINCT document_id FROM {SCHEMA}.documents
                    WHERE valid_until IS NULL AND document_id IN (SELECT v FROM _ids) ORDER BY 1""",
                {"ids": Keys(ids)},
            )["document_id"].to_list()
            for table in PARTITIONED_TABLES[1:]:
                execute(con, f"DELETE FROM {SCHEMA}.{table} WHERE document_id IN (SELECT v FROM _r)", {"r": Keys(retired)})
            for table in VERSIONED_PARTITION_TABLES:
                execute(con, f"""UPDATE {SCHEMA}.{table} SET valid_until = $ts
                                 WHERE valid_until IS NULL AND document_id IN (SELECT v FROM _r)""",
                        {"ts": ts, "r": Keys(retired)})
            execute(
                con,
                f"""UPDATE {SCHEMA}.documents SET valid_until = $ts, status = 'deleted'
                    WHERE valid_until IS NULL AND document_id IN (SELECT v FROM _r)""",
                {"ts": ts, "r": Keys(retired)},
            )
            return retired
        return self.write(body)

    def replace_current(self, tables: dict[str, tuple[Sequence[str], pl.DataFrame]]) -> dict[str, dict[str, int]]:
        """Make each frame the current state of its versioned table, all tables in one transaction.

        Keys that vanished are closed (valid_until = now) and kept as history; surviving keys keep their
        original valid_from; new keys open with valid_from = now.
        """
        ts = now_utc()

        def body(con) -> dict[str, dict[str, int]]:
            return {table: merge_current(con, table, key, frame, ts) for table, (key, frame) in tables.items()}
        return self.write(body)

    def replace_current_keys(self, table: str, key: Sequence[str], frame: pl.DataFrame,
                             keys: pl.DataFrame) -> dict[str, int]:
        """Make `frame` the current rows of the given `keys` (a frame of the key columns) in a versioned table,
        leaving every other key as it is: keys of `keys` missing from `frame` are closed."""
        ts = now_utc()
        return self.write(lambda con: merge_current(con, table, key, frame, ts, scope=keys.select(key)))

    def replace_current_partitions(self, table: str, identity: Sequence[str], frame: pl.DataFrame,
                                   document_ids: Sequence[str]) -> dict[str, int]:
        """Make `frame` the current rows of `document_ids` in a versioned per-document table (kg.messages).

        A row is the same version while its `identity` columns are equal (NULL equals NULL); other columns
        (offsets) are updated in place. Rows of those documents that are no longer in `frame` are closed.
        """
        ts = now_utc()
        return self.write(lambda con: merge_current(con, table, identity, frame, ts, list(document_ids)))

    def replace_tables(self, frames: dict[str, pl.DataFrame]) -> None:
        """Replace whole derived tables (redirects, attribute history) atomically, all or none."""
        def body(con) -> None:
            for table, frame in frames.items():
                con.execute(f"DELETE FROM {SCHEMA}.{table}")
                self._insert(con, table, frame)
        self.write(body)

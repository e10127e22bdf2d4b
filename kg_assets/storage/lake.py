"""DuckLake connections: the catalog in PostgreSQL, the data files in a folder, attached as the default database.

The ducklake and postgres extensions (and httpfs for an s3:// data path) are loaded only from the duckdb-ext-*
packages installed beside duckdb (their folder is DuckDB's extension directory), with signature checks on and no
download at run time: the binaries are the official signed ones, matched to the pinned duckdb version.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import duckdb
import duckdb_ext
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_exponential_jitter

__all__ = ["EXTENSION_DIR", "LAKE", "LakeNotCreated", "LakeUnavailable", "Snapshot", "SnapshotNotFound", "connect_lake",
           "close_sessions", "is_write_conflict", "lake_cursor", "redact_dsn", "retry_write_conflicts"]

# duckdb_ext/extensions/v<duckdb version>/<platform>/<name>.duckdb_extension, DuckDB's own layout.
EXTENSION_DIR = Path(next(iter(duckdb_ext.__path__))) / "extensions"
LAKE = "lake"
_EXTENSIONS = {"ducklake": "duckdb-ext-ducklake", "postgres": "duckdb-ext-postgres"}
# A data path on object storage (s3://…) is read and written through httpfs, an extra package (deploy/README.md).
_REMOTE_EXTENSIONS = {"httpfs": "duckdb-ext-httpfs"}


class LakeUnavailable(RuntimeError):
    """An extension is missing or the catalog cannot be attached: raised at the first connection."""


class LakeNotCreated(LakeUnavailable):
    """A read-only attach of a catalog no write connection has initialised yet."""


class SnapshotNotFound(LakeUnavailable):
    """Time travel to a snapshot id the catalog does not hold, or to a time before its first snapshot."""


# A snapshot id (`ducklake_snapshots`) or a moment: the lake as its latest snapshot at that time.
Snapshot = int | datetime


def _snapshot_option(snapshot: Snapshot) -> str:
    """The ATTACH option for a snapshot. ATTACH takes no bound parameters, so only a typed value is rendered:
    an int as digits, an aware datetime in ISO form; anything else is refused."""
    if isinstance(snapshot, int) and not isinstance(snapshot, bool) and snapshot >= 0:
        return f"SNAPSHOT_VERSION {snapshot:d}"
    if isinstance(snapshot, datetime) and snapshot.tzinfo is not None:
        return f"SNAPSHOT_TIME {_literal(snapshot.isoformat())}"
    raise TypeError(f"a snapshot is a non-negative int or a timezone-aware datetime, not {snapshot!r}")


def is_write_conflict(exc: BaseException) -> bool:
    """Another writer got there first, and what failed was rolled back, so running it again is safe:

    - DuckLake refused a commit because a concurrent transaction committed to the same table (DuckDB 1.4:
      TransactionException "... Transaction conflict - attempting to delete from file ...");
    - DuckLake (duckdb-ext-ducklake 1.4.4) failed to read the changes of two or more concurrent commits that
      created tables or replaced views ("Failed to parse catalog entry - trailing data after quoted value");
      measured here: the same transaction commits when run again;
    - two processes initialised a new catalog at the same moment (PostgreSQL refused the second one's CREATE
      TABLE: "already exists", or "duplicate key" when both were creating it in the same instant)."""
    text = str(exc)
    return ((isinstance(exc, duckdb.TransactionException)
             and ("conflict" in text.lower() or "Failed to parse catalog entry" in text))
            or (isinstance(exc, duckdb.Error) and "Failed to initialize DuckLake" in text
                and ("duplicate key" in text or "already exists" in text)))


def retry_write_conflicts(timeout_s: float) -> Retrying:
    """The one rule for concurrent writers on the lake: what lost a write conflict was rolled back, so it runs
    again whole, on a fresh snapshot that holds the other writer's rows, with jittered exponential backoff (two
    runs that collided must not collide again in lockstep), for up to `timeout_s`. DuckLake's own
    `ducklake_max_retry_count` only retries a clash of snapshot ids in the catalog, not a conflict of rows."""
    return Retrying(retry=retry_if_exception(is_write_conflict), wait=wait_exponential_jitter(initial=0.1, max=5.0),
                    stop=stop_after_delay(timeout_s), reraise=True)


def connect_lake(catalog: str, data_path: str, read_only: bool = False,
                 extension_dir: Path = EXTENSION_DIR, config: dict | None = None,
                 snapshot: Snapshot | None = None,
                 setup: Callable[[duckdb.DuckDBPyConnection], None] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB session with the lake attached as LAKE and selected (`kg.x` means `lake.kg.x`).

    `snapshot` (read-only) attaches the whole lake as it was then; `setup` runs before `config` is applied
    (a sandbox's config locks the settings, the search path too)."""
    if snapshot is not None and not read_only:
        raise ValueError("a lake attached at an earlier snapshot is read-only")
    con = duckdb.connect(config={"extension_directory": str(extension_dir), "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False, "allow_unsigned_extensions": False})
    try:
        remote = "://" in data_path
        for name, package in (_EXTENSIONS | _REMOTE_EXTENSIONS if remote else _EXTENSIONS).items():
            try:
                con.execute(f"LOAD {name}")
            except duckdb.Error as exc:
                raise LakeUnavailable(f"the DuckDB extension {name} is not installed under {extension_dir} "
                                      f"(pip install {package} matching duckdb {duckdb.__version__}): {exc}") from exc
        if not read_only and not remote:
            Path(data_path).mkdir(parents=True, exist_ok=True)
        options = "DATA_PATH $data" + (", READ_ONLY" if read_only else "")
        if snapshot is not None:
            options += ", " + _snapshot_option(snapshot)
        try:
            # ATTACH takes no prepared parameters for its path: the DSN is a setting, not user input.
            con.execute(f"ATTACH {_literal('ducklake:postgres:' + catalog)} AS {LAKE} "
                        f"({options.replace('$data', _literal(data_path))})")
        except duckdb.Error as exc:
            if read_only and "creating a new DuckLake is explicitly disabled" in str(exc):
                raise LakeNotCreated(f"no DuckLake in {redact_dsn(catalog)} yet (`kg run` builds it)") from exc
            if is_write_conflict(exc):
                raise  # another process is creating the same catalog: the caller's retry attaches again
            if snapshot is not None and "No snapshot found" in str(exc):
                raise SnapshotNotFound(f"the lake has no snapshot {snapshot} (`kg sql --snapshots` lists them): "
                                       f"{exc}") from exc
            raise LakeUnavailable(f"cannot attach the DuckLake catalog (KG_DUCKLAKE_CATALOG={redact_dsn(catalog)}, "
                                  f"data {data_path}): {exc}") from exc
        con.execute(f"USE {LAKE}")
        if setup is not None:
            setup(con)
        if config and config.get("enable_external_access") is False and not remote:
            # A sandboxed session still reads the lake's own Parquet files, and no other file.
            con.execute(f"SET allowed_directories = [{_literal(str(Path(data_path)) + '/')}]")
        for key, value in (config or {}).items():
            con.execute(f"SET {key} = {_literal(str(value)) if not isinstance(value, bool) else str(value).lower()}")
        return con
    except BaseException:
        con.close()
        raise


# This process's sessions with a lake attached, most recently used last: (pid, catalog, data path, read-only) ->
# session. An ATTACH loads two extensions and reads the catalog (about 0.25 s); a cursor on an attached session costs
# nothing and begins each transaction on the lake's latest snapshot, as a new session would.
_SESSIONS: OrderedDict[tuple, duckdb.DuckDBPyConnection] = OrderedDict()
_SESSIONS_LOCK = threading.Lock()
MAX_SESSIONS = 4  # lakes a process keeps attached (one in production; tests use a catalog each)


def lake_cursor(catalog: str, data_path: str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection (a cursor) to this process's session with the lake attached, the lake selected: closing it
    keeps the session. Not for a sandbox or a snapshot, whose settings and attachment are their own
    (`connect_lake`)."""
    key = (os.getpid(), catalog, data_path, read_only)
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(key)
        if session is None:
            session = connect_lake(catalog, data_path, read_only=read_only)
            _SESSIONS[key] = session
            while len(_SESSIONS) > MAX_SESSIONS:
                _SESSIONS.popitem(last=False)[1].close()
        _SESSIONS.move_to_end(key)
    cursor = session.cursor()
    try:
        cursor.execute(f"USE {LAKE}")
    except duckdb.Error:
        cursor.close()
        with _SESSIONS_LOCK:  # the session broke (its catalog connection was closed): the next call attaches anew
            if _SESSIONS.get(key) is session:
                del _SESSIONS[key]
        raise
    return cursor


def close_sessions() -> None:
    """Detach every lake this process keeps attached (their catalog connections close): before the catalog
    database is copied or dropped. The next connection attaches anew."""
    with _SESSIONS_LOCK:
        while _SESSIONS:
            _SESSIONS.popitem()[1].close()


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def redact_dsn(dsn: str) -> str:
    """A libpq DSN with its password=… field hidden (for messages)."""
    return " ".join("password=***" if part.startswith("password=") else part for part in dsn.split())

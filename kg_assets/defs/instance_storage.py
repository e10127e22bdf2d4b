"""The local Dagster instance's SQLite storage, with one SQLAlchemy engine and one kept connection per event-log file
instead of a new engine and a new connection for each query.

Dagster's `SqliteEventLogStorage` creates an engine for every connection to a run's event log (and to the index
beside it), opens the file, and disposes of both after: each statement is compiled again and the file opened again.
A 10-document rerun at 10,000 documents makes about 900 such connections (1.3 s of SQLite calls; 0.35 s with the
connections kept). Here each file's engine keeps its connection open for the process's life. What the close did
besides, moving the write-ahead log's commits into the `.db` (a checkpoint), a use of a run's log still does after
it: the UI learns of a run's new events when that file changes (Dagster's watcher looks at the `.db` only), and
other processes read the write-ahead log anyway.

`dagster.yaml` selects it as the default storage of its instance class, `KgInstance` (Dagster passes the instance's
folder to `config_defaults`, so the folder needs no setting and `DagsterInstance.from_config(folder)` works as
before); an explicit `storage:` in dagster.yaml still wins. Every process of the instance (the UI, the daemon,
`kg run`) loads it from this package. The files and their layout are Dagster's own, so a home written by either
storage reads with the other.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping

import dagster as dg
import yaml
from dagster._config import StringSource
from dagster._core.instance.ref import InstanceRef
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import QueuePool

# Engines kept per process: a run's log and the index are the ones in use; the UI reads many runs' logs.
MAX_ENGINES = 64
SQLITE_BUSY_TIMEOUT_S = 30  # as Dagster's own
# Connections kept per file: Dagster holds a lock around each use, so one is in use at a time.
KEPT_CONNECTIONS = 1


class EngineKeepingSqliteEventLogStorage(SqliteEventLogStorage):
    """`SqliteEventLogStorage` that keeps an engine and its connection per shard (a run's log, the index) for the
    process's life."""

    def __init__(self, base_dir: str, inst_data=None):
        super().__init__(base_dir, inst_data)
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._engines_lock = threading.Lock()

    def _engine(self, shard: str) -> Engine:
        with self._engines_lock:
            engine = self._engines.pop(shard, None)
            if engine is None:
                engine = create_engine(self.conn_string_for_shard(shard), poolclass=QueuePool,
                                       pool_size=KEPT_CONNECTIONS, max_overflow=-1,
                                       connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False})
            self._engines[shard] = engine  # most recently used last
            while len(self._engines) > MAX_ENGINES:
                self._engines.popitem(last=False)[1].dispose()
            return engine

    @contextlib.contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn:
                with conn.begin():
                    yield conn
                if shard != INDEX_SHARD_NAME:
                    # into the .db, which the UI's watcher of the run's events looks at, as a close would
                    conn.connection.dbapi_connection.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def dispose(self) -> None:
        with self._engines_lock:
            for engine in self._engines.values():
                engine.dispose()
            self._engines.clear()
        super().dispose()


class EngineKeepingSqliteStorage(DagsterSqliteStorage):
    """Dagster's default SQLite storage (runs, event logs, schedules under `base_dir`) with the event logs above."""

    def __init__(self, base_dir: str, inst_data=None):
        super().__init__(base_dir, inst_data)
        self._event_log_storage = EngineKeepingSqliteEventLogStorage(self._event_log_storage._base_dir)

    @classmethod
    def config_type(cls):
        return {"base_dir": StringSource}

    @classmethod
    def from_config_value(cls, inst_data, config_value) -> EngineKeepingSqliteStorage:
        return cls.from_local(inst_data=inst_data, **config_value)


class KgInstance(dg.DagsterInstance):
    """The project's Dagster instance: Dagster's own, with `EngineKeepingSqliteStorage` as its default storage."""

    @classmethod
    def config_schema(cls) -> dict:
        return {}

    @staticmethod
    def config_defaults(base_dir: str) -> Mapping[str, ConfigurableClassData | None]:
        return {**InstanceRef.config_defaults(base_dir),
                "storage": ConfigurableClassData(__name__, EngineKeepingSqliteStorage.__name__,
                                                 yaml.dump({"base_dir": base_dir}, default_flow_style=False))}

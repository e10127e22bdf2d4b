"""Keeping a warehouse file's database open for a moment between connections, during a run.

Opening a DuckDB file reads its catalog, and closing the last connection to it checkpoints it: about 20 ms each
way for a 160 MB file, and a run opens it about 130 times (the 10-document rerun at 10,000 documents: some 4 s of
13). Between `hold()` and `let_go()` (the warehouse resource's lifetime: one run), a connection is a cursor on a database
this process keeps open while it is used and for `LINGER_S` after, so the many short reads and writes of a step
share one open. Only then is it closed, releasing the file's lock to other processes (another run's step, a
user's `kg sql`), which wait for a lock with retries anyway. Outside such a scope nothing is kept.

A read-only and a read-write database of the same file cannot be open in one process at once. A read uses the held
one whichever it is; a write closes an idle read-only one first (closing a write database checkpoints it, which is
the larger half of the cost), or, while the read-only one is in use (no code here does that), opens as before.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import duckdb

# Long enough to bridge the gaps between one step's connections and between steps, short enough that another
# process waiting for the lock barely notices.
LINGER_S = 0.25

_lock = threading.Lock()
_depth = 0  # nested holding() scopes open in this process
_held: dict[str, _Held] = {}


@dataclass
class _Held:
    database: duckdb.DuckDBPyConnection
    read_only: bool
    pid: int = field(default_factory=os.getpid)
    users: int = 0
    timer: threading.Timer | None = None


def hold() -> None:
    """From now until the matching `let_go()`, this process keeps each warehouse file it opens open for LINGER_S
    after its last use (scopes nest)."""
    global _depth
    with _lock:
        _depth += 1


def let_go() -> None:
    """End a `hold()`: after the outermost, every held file is closed now."""
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0:
            for path in list(_held):
                _close(path)


@contextlib.contextmanager
def holding() -> Iterator[None]:
    """`hold()` for the duration of the block."""
    hold()
    try:
        yield
    finally:
        let_go()


def release(path: str) -> None:
    """Close `path`'s held database now if no connection uses it: before another process (dbt) needs the file."""
    with _lock:
        if (held := _held.get(path)) is not None and held.users == 0:
            _close(path)


@contextlib.contextmanager
def connection(path: str, read_only: bool,
               open_file: Callable[[], duckdb.DuckDBPyConnection]) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to `path`, closed on exit: a cursor on the held database inside a `hold()`, else `open_file()`
    itself."""
    cursor = _cursor(path, read_only, open_file)
    if cursor is None:
        con = open_file()
        try:
            yield con
        finally:
            con.close()
        return
    try:
        yield cursor
    finally:
        cursor.close()
        with _lock:
            held = _held[path]
            held.users -= 1
            if held.users == 0:
                held.timer = threading.Timer(LINGER_S, _close_if_idle, (path, held))
                held.timer.daemon = True
                held.timer.start()


def _cursor(path: str, read_only: bool,
            open_file: Callable[[], duckdb.DuckDBPyConnection]) -> duckdb.DuckDBPyConnection | None:
    with _lock:
        if _depth == 0:
            return None
        held = _held.get(path)
        if held is not None and held.pid != os.getpid():
            del _held[path]  # a forked child's copy: its parent's to close
            held = None
        # A read goes through a held write database too: closing that one would checkpoint it.
        if held is not None and held.read_only and not read_only:
            if held.users:
                return None
            _close(path)
            held = None
        if held is None:
            held = _held[path] = _Held(open_file(), read_only)
        if held.timer is not None:
            held.timer.cancel()
            held.timer = None
        held.users += 1
        return held.database.cursor()


def _close_if_idle(path: str, held: _Held) -> None:
    with _lock:
        if _held.get(path) is held and held.users == 0:
            _close(path)


def _close(path: str) -> None:
    """Under _lock."""
    held = _held.pop(path)
    if held.timer is not None:
        held.timer.cancel()
    held.database.close()

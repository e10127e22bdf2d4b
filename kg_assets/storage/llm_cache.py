"""Response cache and call log of the LLM engine, in a small SQLite file beside the warehouse.

SQLite, not DuckDB: every finished call is committed at once (so a cancelled or killed run keeps what it
paid for) from the event loop's thread, while DuckDB allows one writing process and must not be held
open while waiting on an LLM. The extraction asset copies the call log into `kg.llm_calls`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from kg_assets.core import schemas

_DDL = """
CREATE TABLE IF NOT EXISTS responses (
    prompt_hash TEXT PRIMARY KEY, model TEXT NOT NULL, content TEXT NOT NULL,
    prompt_tokens INTEGER, completion_tokens INTEGER, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
    call_id TEXT PRIMARY KEY, payload TEXT NOT NULL, exported INTEGER NOT NULL DEFAULT 0
);
"""


class LLMCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._con = sqlite3.connect(self.path, check_same_thread=False, timeout=60, isolation_level=None)
        self._con.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL: a commit no longer waits for fsync; a crash of the process still loses nothing.
        self._con.execute("PRAGMA synchronous=NORMAL")
        self._con.executescript(_DDL)

    def close(self) -> None:
        with self._lock:
            self._con.close()

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get(self, prompt_hash: str) -> dict | None:
        with self._lock:
            row = self._con.execute(
                "SELECT content, prompt_tokens, completion_tokens FROM responses WHERE prompt_hash = ?", (prompt_hash,)
            ).fetchone()
        return None if row is None else {"content": row[0], "prompt_tokens": row[1], "completion_tokens": row[2]}

    def put(self, prompt_hash: str, model: str, content: str, prompt_tokens: int, completion_tokens: int, created_at: str) -> None:
        with self._lock:
            self._con.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?)",
                (prompt_hash, model, content, prompt_tokens, completion_tokens, created_at),
            )

    def forget(self, prompt_hash: str) -> None:
        """Drop a response that turned out unusable, so the next run asks again."""
        with self._lock:
            self._con.execute("DELETE FROM responses WHERE prompt_hash = ?", (prompt_hash,))

    def log_call(self, row: dict) -> None:
        with self._lock:
            self._con.execute("INSERT OR REPLACE INTO calls (call_id, payload) VALUES (?, ?)", (row["call_id"], json.dumps(row, default=str)))

    def unexported_calls(self) -> pl.DataFrame:
        """Logged calls not yet copied to kg.llm_calls (including those of runs that were killed)."""
        with self._lock:
            rows = [json.loads(r[0]) for r in self._con.execute("SELECT payload FROM calls WHERE exported = 0")]
        if not rows:
            return schemas.empty(schemas.LLM_CALLS)
        frame = pl.DataFrame(rows, infer_schema_length=None)
        if "created_at" in frame.columns:
            frame = frame.with_columns(pl.col("created_at").str.to_datetime(time_zone="UTC"))
        return schemas.conform(frame, schemas.LLM_CALLS)

    def mark_exported(self, call_ids: Iterable[str]) -> None:
        ids = list(call_ids)
        with self._lock:
            for i in range(0, len(ids), 500):
                batch = ids[i : i + 500]
                self._con.execute(f"UPDATE calls SET exported = 1 WHERE call_id IN ({','.join('?' * len(batch))})", batch)

    def forget_documents(self, document_ids: Iterable[str]) -> int:
        """Delete the logged calls of these documents and the cached answers to their prompts (`kg facts
        forget`); returns the number of answers deleted. A prompt another document also sent is asked again."""
        ids = set(document_ids)
        with self._lock:
            rows = [(call_id, json.loads(payload)) for call_id, payload in self._con.execute("SELECT call_id, payload FROM calls")]
            calls = [(call_id, row.get("prompt_hash")) for call_id, row in rows if row.get("document_id") in ids]
            hashes = sorted({h for _, h in calls if h})
            deleted = 0
            for i in range(0, len(hashes), 500):
                batch = hashes[i : i + 500]
                deleted += self._con.execute(
                    f"DELETE FROM responses WHERE prompt_hash IN ({','.join('?' * len(batch))})", batch).rowcount
            call_ids = [c for c, _ in calls]
            for i in range(0, len(call_ids), 500):
                batch = call_ids[i : i + 500]
                self._con.execute(f"DELETE FROM calls WHERE call_id IN ({','.join('?' * len(batch))})", batch)
        return deleted

"""An extraction step's batches on several cores: the extractor in worker processes, the step's reads and writes
in its own.

The offline heuristic extractor is pure Python, so one process extracts on one core: 75% of a first run's time.
An engine that says `runs_in_processes` (a pure function of its chunks, picklable, holding no connection) runs
its batches in `processes` workers (KG_EXTRACTION_PROCESSES) while the step reads the next batch and writes
the last one. The workers are spawned, not forked (the step's process runs DuckDB's and Dagster's threads), and
take the engine once, with the caller's garbage-collector thresholds. An LLM engine keeps to one process: its
requests already run concurrently, and its answer cache is one SQLite file.

One batch, one worker, or an engine that does not say so: the batches run in the step's process, as before.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import fields
from datetime import UTC, datetime

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.isolation import DocumentFailure, isolate_batch
from kg_assets.extractors.base import ExtractionResult, Extractor

Extracted = tuple[ExtractionResult, list[DocumentFailure]]


def extract_isolated(engine: Extractor, todo: pl.DataFrame) -> Extracted:
    """The extractor on every chunk at once; when it raises, per document (`core.isolation`): a document whose
    chunks make it raise gets an 'error' row per chunk in chunk_extractions, naming the step, so the run
    summary lists them and the next run redoes exactly those chunks, like any failed chunk."""
    if not todo.height:
        return ExtractionResult.empty(), []
    results, failures = isolate_batch("extraction", todo, engine.extract)
    errors = {f.document_id: f.error for f in failures}
    failed_chunks = todo.filter(pl.col("document_id").is_in(list(errors))).select(
        "chunk_id", "document_id", pl.col("content_hash").alias("chunk_hash"),
        pl.col("document_id").replace_strict(errors, return_dtype=pl.String).alias("error"),
    ).with_columns(extractor=pl.lit(engine.name), extractor_version=pl.lit(engine.version), status=pl.lit("error"),
                   mention_count=pl.lit(0), relation_count=pl.lit(0), attribute_count=pl.lit(0), passes=pl.lit(0),
                   bad_lines=pl.lit(0), complete=pl.lit(False), extracted_at=pl.lit(datetime.now(UTC)))
    combined = {f.name: pl.concat([getattr(r, f.name) for r in results], how="vertical_relaxed") if results
                else getattr(ExtractionResult.empty(), f.name) for f in fields(ExtractionResult)}
    combined["chunk_status"] = pl.concat([schemas.conform(combined["chunk_status"], schemas.CHUNK_EXTRACTIONS),
                                          schemas.conform(failed_chunks, schemas.CHUNK_EXTRACTIONS)])
    return ExtractionResult(**combined), failures


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, which a container's cpuset narrows)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on macOS
        return os.cpu_count() or 1


def worker_count(engine: Extractor | None, setting: int, batches: int) -> int:
    """How many worker processes extract: none (in the step's process) unless the engine runs in processes and
    there are two batches or more; then the setting (0: one per available core), at most one per batch."""
    if engine is None or not getattr(engine, "runs_in_processes", False) or batches < 2:
        return 0
    wanted = setting or available_cores()
    return min(wanted, batches) if wanted > 1 else 0


_engine: Extractor | None = None  # a worker's engine, set once by `_start_worker`


def _start_worker(engine: Extractor, gc_thresholds: tuple[int, ...]) -> None:
    global _engine
    _engine = engine
    gc.set_threshold(*gc_thresholds)


def _extract_in_worker(todo: pl.DataFrame) -> Extracted:
    return extract_isolated(_engine, todo)


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    if hasattr(pool, "terminate_workers"):  # Python 3.14
        pool.terminate_workers()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):  # what 3.14's method does
        process.terminate()


class ExtractionWorkers:
    """`extract(todo)` → a future of `extract_isolated(engine, todo)`, in `workers` processes (0: in this one).
    `in_flight` is how many batches the step should have submitted and not yet written: one per worker and one
    waiting, so no worker idles while the step writes."""

    def __init__(self, engine: Extractor | None, workers: int):
        self.engine, self.workers = engine, workers
        self.in_flight = workers + 1 if workers else 1
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> ExtractionWorkers:
        if self.workers:
            try:  # what each worker is sent: a failure here, not a "worker died" later
                pickle.dumps(self.engine)
            except Exception as exc:  # noqa: BLE001 - pickling raises many types
                raise TypeError(f"extractor {self.engine.name} says runs_in_processes but cannot be sent to a worker "
                                f"process ({type(exc).__name__}: {exc}); KG_EXTRACTION_PROCESSES=1 extracts in the "
                                f"step's own process") from exc
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker, initargs=(self.engine, gc.get_threshold()))
        return self

    def __exit__(self, error_type, *_) -> None:
        if self._pool is None:
            return
        if error_type is not None:
            # After an error or an interrupt the step stops at once, and the next run extracts what it did not
            # write. The workers are stopped, not left to finish batches nobody will write: a pool shut down without
            # waiting was once seen to hang its process's exit, the interpreter joining idle workers.
            _terminate_workers(self._pool)
        self._pool.shutdown(wait=error_type is None, cancel_futures=True)

    def extract(self, todo: pl.DataFrame) -> Future:
        if self._pool is None or not todo.height:
            done: Future = Future()
            done.set_result(extract_isolated(self.engine, todo))
            return done
        return self._pool.submit(_extract_in_worker, todo)

    def result(self, future: Future, batch: str) -> Extracted:
        try:
            return future.result()
        except BrokenProcessPool as exc:
            raise RuntimeError(
                f"an extraction worker process died{batch} (killed, or out of memory?): the batches written before "
                f"it are kept and the next run extracts the rest; KG_EXTRACTION_PROCESSES=1 extracts in the step's "
                f"own process") from exc

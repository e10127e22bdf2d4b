"""During a run the warehouse resource keeps the embedded file open between connections (storage/held_files.py):
one open serves a step's many short reads and writes, and the file is free again for other processes a moment after
its last use, at once on `release()`, and when the run ends."""

import subprocess
import sys
import threading
import time

import polars as pl
import pytest

from kg_assets.storage import held_files
from kg_assets.storage.warehouse import Warehouse

# Another process's attempt to open the file for writing, once, without waiting: prints "opened" or "locked".
_TRY_OPEN = ("import duckdb, sys\ntry:\n    duckdb.connect(sys.argv[1]).close(); print('opened')\n"
             "except duckdb.IOException as exc:\n    print('locked' if 'lock' in str(exc).lower() else exc)")


def _other_process_opens(path: str) -> str:
    return subprocess.run([sys.executable, "-c", _TRY_OPEN, path], capture_output=True, text=True,
                          timeout=60).stdout.strip()


def _chunk(doc: str) -> pl.DataFrame:
    return pl.DataFrame({"chunk_id": [f"{doc}-0"], "document_id": [doc], "chunk_index": [0], "text": ["text"]})


@pytest.fixture
def wh(tmp_path):
    wh = Warehouse(tmp_path / "held.duckdb", lock_timeout_s=5)
    wh.create_schema()
    return wh


@pytest.mark.process
def test_within_a_hold_connections_share_one_open_and_the_file_is_freed_after(wh, monkeypatch):
    monkeypatch.setattr(held_files, "LINGER_S", 30.0)  # so that only the end of the hold can free the file
    with held_files.holding():
        with wh.connect(read_only=True) as first:
            pass
        with wh.connect(read_only=True) as second:
            assert first is not second
        assert len(held_files._held) == 1  # one open database for both
        assert _other_process_opens(wh.path) == "locked"  # still held between connections
    assert held_files._held == {}
    assert _other_process_opens(wh.path) == "opened"  # and free once the hold ends


@pytest.mark.process
def test_a_held_file_is_freed_a_moment_after_its_last_use_and_at_once_on_release(wh, monkeypatch):
    monkeypatch.setattr(held_files, "LINGER_S", 0.2)
    with held_files.holding():
        wh.replace_partitions({"chunks": _chunk("a")}, ["a"])
        time.sleep(1.0)
        assert _other_process_opens(wh.path) == "opened"

        monkeypatch.setattr(held_files, "LINGER_S", 30.0)
        assert wh.counts()["chunks"] == 1
        assert _other_process_opens(wh.path) == "locked"
        wh.release()  # as before dbt's process opens the file
        assert _other_process_opens(wh.path) == "opened"


def test_reads_and_writes_alternate_within_a_hold_and_each_sees_the_last(wh):
    with held_files.holding():
        for doc in "abc":
            wh.replace_partitions({"chunks": _chunk(doc)}, [doc])  # a write closes the idle read-only open
            assert wh.counts()["chunks"] == "abc".index(doc) + 1  # and a read the idle write open
    assert Warehouse(wh.path).counts()["chunks"] == 3


def test_threads_read_at_once_through_one_held_open(wh):
    wh.replace_partitions({"chunks": _chunk("a")}, ["a"])
    seen, errors = [], []

    def read() -> None:
        try:
            for _ in range(20):
                seen.append(wh.counts()["chunks"])
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    with held_files.holding():
        threads = [threading.Thread(target=read) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == [] and seen == [1] * 80


def test_the_warehouse_resource_holds_the_file_for_a_run_and_lets_go_of_it_after(wh):
    import dagster as dg

    from kg_assets.defs.resources import WarehouseResource

    @dg.asset
    def two_reads(warehouse: WarehouseResource) -> int:
        warehouse.get().counts()
        warehouse.get().counts()
        return len(held_files._held)

    result = dg.materialize([two_reads], resources={"warehouse": WarehouseResource(db_path=wh.path)})
    assert result.output_for_node("two_reads") == 1
    assert held_files._held == {} and held_files._depth == 0


@pytest.mark.process
def test_outside_a_hold_every_connection_closes_the_file(wh):
    with wh.connect(read_only=True):
        pass
    assert held_files._held == {}
    assert _other_process_opens(wh.path) == "opened"

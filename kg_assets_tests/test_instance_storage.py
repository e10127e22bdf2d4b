"""The repository's dagster.yaml: Dagster's instance and SQLite storage with one engine and one kept connection per
event-log file (defs/instance_storage.py), in Dagster's own files, so that a home written with it reads with Dagster's
default instance and the other way round, and a run's events reach a watcher in another instance (the UI) at once."""

import os
import shutil
import threading
from pathlib import Path

import dagster as dg
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

from kg_assets.defs.instance_storage import EngineKeepingSqliteEventLogStorage, KgInstance

ROOT = Path(__file__).resolve().parents[1]


@dg.asset
def one() -> int:
    return 1


def test_the_instance_keeps_one_engine_per_event_log_in_dagsters_own_files(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.delenv("DAGSTER_HOME", raising=False)  # the folder is all the instance needs

    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance) is KgInstance
        storage = instance.event_log_storage
        assert storage._base_dir == str(home / "history" / "runs")
        assert isinstance(storage, EngineKeepingSqliteEventLogStorage)
        first = dg.materialize([one], instance=instance)
        engines = dict(storage._engines)
        assert set(engines) == {first.run_id, "index"}  # the run's log and the index, each set up once
        second = dg.materialize([one], instance=instance)
        assert storage._engines["index"] is engines["index"]
        assert set(storage._engines) == {first.run_id, second.run_id, "index"}
        # the connection is kept (its write-ahead log stays beside the .db), and its commits are in the .db
        assert os.path.exists(storage.path_for_shard(second.run_id) + "-wal")

    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # Dagster's default instance and storage
    with dg.DagsterInstance.from_config(str(home)) as plain:
        assert type(plain) is dg.DagsterInstance and type(plain.event_log_storage) is SqliteEventLogStorage
        assert plain.get_run_by_id(second.run_id).is_success
        materialized = [e for e in plain.all_logs(second.run_id)
                        if e.dagster_event_type == dg.DagsterEventType.ASSET_MATERIALIZATION]
        assert len(materialized) == 1
        latest = plain.get_latest_materialization_event(dg.AssetKey("one"))
        assert latest is not None and latest.run_id == second.run_id
        third = dg.materialize([one], instance=plain)

    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:  # and back
        assert instance.get_latest_materialization_event(dg.AssetKey("one")).run_id == third.run_id
        assert len(instance.get_runs()) == 3


def test_a_watcher_in_another_instance_sees_a_run_s_events_while_its_connection_is_kept(tmp_path):
    """The UI watches a run's log file for new events. With the writer's connection kept, a commit alone changes only
    the write-ahead log: the writer must still bring it into the file the watcher looks at."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as writer, dg.DagsterInstance.from_config(str(home)) as ui:
        run = writer.get_run_by_id(dg.materialize([one], instance=writer).run_id)
        log = writer.event_log_storage.path_for_shard(run.run_id)
        seen: list[str] = []
        arrived = threading.Event()

        def on_event(entry, _cursor):
            message = entry.message
            seen.append(message)
            if message == "written while kept":
                arrived.set()

        ui.event_log_storage.watch(run.run_id, None, on_event)
        try:
            writer.report_engine_event("written while kept", run)
            assert arrived.wait(timeout=10), f"the watcher saw {seen}, not the new one"
            assert writer.event_log_storage._engines[run.run_id].pool.checkedin() == 1  # kept, not closed
            assert os.path.exists(f"{log}-wal")
        finally:
            ui.event_log_storage.end_watch(run.run_id, on_event)

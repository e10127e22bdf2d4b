"""The repository's dagster.yaml: Dagster's instance and SQLite storage with one engine per event-log file
(defs/instance_storage.py), in Dagster's own files, so that a home written with it reads with Dagster's default
instance and the other way round."""

import os
import shutil
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
        # each connection is still closed after its use: the run's events are in the .db file the UI watches, not
        # waiting in a write-ahead log
        assert not os.path.exists(storage.path_for_shard(second.run_id) + "-wal")

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

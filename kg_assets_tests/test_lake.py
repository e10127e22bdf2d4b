"""The DuckLake backend against the local PostgreSQL: a catalog database of its own per test (conftest's
`lake_catalog`), real files."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from kg_assets.settings import Settings
from kg_assets.storage.lake import EXTENSION_DIR, LakeUnavailable, connect_lake
from kg_assets.storage.reads import fetch_frame
from kg_assets.storage.warehouse import Warehouse, WarehouseBusy

from kg_assets_tests.conftest import SAMPLE_INBOX, run_at_once

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


# The graph a build leaves, table by table: what two concurrent partition runs plus a consolidating one must
# leave exactly as one serial run does.
GRAPH = {
    "entities": "SELECT entity_id, name, entity_type, mention_count, document_count FROM kg.entities "
                "WHERE valid_until IS NULL ORDER BY ALL",
    "edges": "SELECT edge_id, weight, document_ids FROM kg.graph_edges WHERE valid_until IS NULL ORDER BY ALL",
    "attributes": "SELECT entity_id, attr_key, value FROM kg.entity_attributes WHERE valid_until IS NULL ORDER BY ALL",
    "chunks": "SELECT chunk_id, content_hash FROM kg.chunks ORDER BY ALL",
    "mentions": "SELECT mention_id, entity_id FROM kg.entity_mentions ORDER BY ALL",
    "relations": "SELECT relation_id FROM kg.local_relations ORDER BY ALL",
    "messages": "SELECT message_id, content FROM kg.messages WHERE valid_until IS NULL ORDER BY ALL",
    "user_facts": "SELECT fact_id, is_active FROM kg.user_facts WHERE valid_until IS NULL ORDER BY ALL",
}


@pytest.fixture
def lake(lake_catalog, tmp_path) -> Warehouse:
    settings = Settings.from_env({"KG_WAREHOUSE_BACKEND": "ducklake", "KG_DUCKLAKE_CATALOG": lake_catalog,
                                  "KG_DUCKLAKE_DATA_PATH": str(tmp_path / "lake")})
    return Warehouse.from_settings(settings.warehouse)


def test_a_lake_warehouse_writes_reads_and_keeps_views_and_macro(lake, tmp_path):
    lake.set_link_override("a", "b", "merge", "same person")
    lake.set_link_override("b", "a", "split")  # replaces the pair in the same transaction
    with lake.connect(read_only=True) as con:
        rows = fetch_frame(con, "SELECT from_id, to_id, action FROM kg.link_overrides").rows()
        macro = con.execute("SELECT count(*) FROM kg.entity_attributes_at(now())").fetchone()[0]
        view = con.execute("SELECT count(*) FROM kg.entity_attributes_current").fetchone()[0]
    assert rows == [("b", "a", "split")]
    assert (macro, view) == (0, 0)
    assert list((tmp_path / "lake").rglob("*.parquet")), "the rows are Parquet files under the data path"


def test_a_process_attaches_a_lake_once_and_threads_connect_to_it_at_once(lake):
    """Connections are cursors on one attached session, whose in-memory catalog holds the macro they all use:
    eight threads connecting at once (each connection recreates the macro) all read through it."""
    lake.create_schema()
    errors: list[str] = []

    def connect_and_read() -> None:
        for _ in range(15):
            try:
                with lake.connect(read_only=True) as con:
                    con.execute("SELECT count(*) FROM kg.entity_attributes_at(now())").fetchall()
            except Exception as exc:  # noqa: BLE001 - the test counts every failure
                errors.append(repr(exc))

    run_at_once(connect_and_read, 8)
    assert errors == []
    with lake.connect(read_only=True) as first, lake.connect(read_only=True) as second:
        attached = "SELECT count(*) FROM duckdb_databases() WHERE database_name = 'lake'"
        first.execute("CREATE TEMP TABLE mine AS SELECT 1 AS x")  # a cursor's temp objects stay its own
        assert second.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'mine'").fetchall() == [(0,)]
        assert first.execute(attached).fetchall() == second.execute(attached).fetchall() == [(1,)]


def test_a_sandboxed_lake_session_reads_the_lake_and_no_other_file(lake, tmp_path):
    lake.set_link_override("a", "b", "merge")
    secret = tmp_path / "secret.csv"
    secret.write_text("x\n1\n")
    with lake.connect(read_only=True, sandboxed=True) as con:
        assert con.execute("SELECT count(*) FROM kg.link_overrides").fetchone()[0] == 1
        with pytest.raises(Exception, match="disabled by configuration|Permission"):
            con.execute("SELECT * FROM read_csv($p)", {"p": str(secret)}).fetchall()


def test_a_missing_extension_fails_at_start_with_the_package_to_install(lake_catalog, tmp_path):
    with pytest.raises(LakeUnavailable, match="extension ducklake is not installed.*pip install duckdb-ext-ducklake"):
        connect_lake(lake_catalog, str(tmp_path / "lake"), extension_dir=tmp_path / "no-extensions")


def test_an_unreachable_catalog_fails_at_start_naming_the_catalog(tmp_path):
    with pytest.raises(LakeUnavailable, match="cannot attach the DuckLake catalog.*port=1.*password=\\*\\*\\*"):
        connect_lake("host=127.0.0.1 port=1 user=postgres password=hunter2 dbname=nope", str(tmp_path / "lake"))


def test_the_lake_backend_needs_a_catalog_and_a_data_path():
    with pytest.raises(Exception, match="needs KG_DUCKLAKE_CATALOG and KG_DUCKLAKE_DATA_PATH"):
        Settings.from_env({"KG_WAREHOUSE_BACKEND": "ducklake"})
    assert Settings.from_env({}).warehouse.backend == "duckdb"


def test_an_object_storage_data_path_needs_the_httpfs_package_and_creates_no_local_folder(lake_catalog, tmp_path,
                                                                                        monkeypatch):
    # An extension folder with the two installed packages' binaries and no httpfs, whatever else is installed.
    extensions = tmp_path / "extensions"
    for binary in EXTENSION_DIR.glob("*/*/*.duckdb_extension"):
        if binary.stem in ("ducklake", "postgres_scanner"):
            (extensions / binary.relative_to(EXTENSION_DIR)).parent.mkdir(parents=True, exist_ok=True)
            (extensions / binary.relative_to(EXTENSION_DIR)).symlink_to(binary)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with pytest.raises(LakeUnavailable, match="extension httpfs is not installed.*pip install duckdb-ext-httpfs"):
        connect_lake(lake_catalog, "s3://kg-lake/data", extension_dir=extensions)
    assert not list(work.iterdir()), "no folder named s3: in the working directory"


def _override_rows(lake: Warehouse) -> list[tuple]:
    with lake.connect(read_only=True) as con:
        return con.execute("SELECT from_id, to_id, action FROM kg.link_overrides ORDER BY ALL").fetchall()


def _rival_commit(lake: Warehouse, from_id: str, to_id: str) -> None:
    """Another process's transaction on kg.link_overrides, committed now: it rewrites the same data file."""
    with connect_lake(*lake.lake) as rival:
        rival.execute("BEGIN")
        rival.execute("DELETE FROM kg.link_overrides WHERE from_id = $f", {"f": from_id})
        rival.execute("INSERT INTO kg.link_overrides (from_id, to_id, action) VALUES ($f, $t, 'merge')",
                      {"f": from_id, "t": to_id})
        rival.execute("COMMIT")


def test_a_run_that_finds_a_lake_half_made_by_another_completes_the_schema_before_reading(lake, tmp_path):
    # another process has attached a new lake and made one table so far (it creates them one at a time)
    con = connect_lake(*lake.lake)
    con.execute("CREATE SCHEMA kg")
    con.execute("CREATE TABLE kg.documents (document_id VARCHAR)")
    con.close()
    with pytest.raises(duckdb.CatalogException, match="does not exist"), lake.connect(read_only=True):
        pass
    lake.ensure_schema()  # what the documents step does first
    with lake.connect(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM kg.entity_attributes_at(now())").fetchone()[0] == 0
        assert "arrival_day" in {c for (c,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'documents'").fetchall()}


def test_planning_a_run_on_a_lake_half_made_by_another_completes_the_schema_first(lake, tmp_path):
    from kg_assets.defs.planner import current_plan

    con = connect_lake(*lake.lake)  # another `kg run` is creating the lake, one table so far
    con.execute("CREATE SCHEMA kg")
    con.execute("CREATE TABLE kg.documents (document_id VARCHAR)")
    con.close()
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "lab.md").write_text("# Lab\n\nSarah Chen leads the Quantum Dynamics Lab in Boston.\n")
    with dg.DagsterInstance.ephemeral() as instance:
        plan = current_plan(inbox, lake, instance, "heuristic-15", "2026-12-07")
    assert tuple(plan.days) == ("2026-12-07",) and "1 new" in plan.summary(), plan.summary()


def test_a_write_that_loses_a_commit_conflict_runs_again_and_both_writes_land(lake):
    lake.write(lambda con: con.execute("INSERT INTO kg.link_overrides (from_id, to_id, action) "
                                       "VALUES ('a', 'b', 'merge'), ('c', 'd', 'merge')"))
    attempts = []

    def ours(con):
        attempts.append(con)
        con.execute("DELETE FROM kg.link_overrides WHERE from_id = 'c'")
        con.execute("INSERT INTO kg.link_overrides (from_id, to_id, action) VALUES ('c', 'e', 'split')")
        if len(attempts) == 1:  # a concurrent run commits to the same table while this transaction is open
            _rival_commit(lake, "a", "f")
        return len(attempts)

    assert lake.write(ours) == 2, "the conflicting commit was rolled back and the transaction ran once more"
    assert _override_rows(lake) == [("a", "f", "merge"), ("c", "e", "split")]


def test_a_commit_after_concurrent_ddl_that_ducklake_fails_to_read_runs_again(lake):
    """duckdb-ext-ducklake 1.4.4 fails a commit when two or more concurrent commits created tables ("Failed to
    parse catalog entry"); the write runs again and lands."""
    lake.set_link_override("a", "b", "merge")
    attempts = []

    def ours(con):
        attempts.append(con)
        con.execute("INSERT INTO kg.link_overrides (from_id, to_id, action) VALUES ('c', 'd', 'split')")
        if len(attempts) == 1:  # e.g. another process creating its scratch tables meanwhile
            with connect_lake(*lake.lake) as other:
                other.execute("CREATE TABLE kg.scratch_a (x INTEGER)")
                other.execute("CREATE TABLE kg.scratch_b (x INTEGER)")

    lake.write(ours)
    assert len(attempts) == 2
    assert _override_rows(lake) == [("a", "b", "merge"), ("c", "d", "split")]


@pytest.mark.process
def test_a_write_that_keeps_losing_conflicts_fails_after_the_timeout_and_other_errors_are_not_retried(lake_catalog,
                                                                                                          tmp_path):
    # Long enough for two attempts on a loaded machine (an attempt attaches the lake twice).
    lake = Warehouse("lake", lock_timeout_s=8, lake=(lake_catalog, str(tmp_path / "lake")))
    lake.set_link_override("a", "b", "merge")
    attempts = []

    def always_loses(con):
        attempts.append(1)
        con.execute("DELETE FROM kg.link_overrides WHERE from_id = 'a'")
        _rival_commit(lake, "a", f"x{len(attempts)}")

    with pytest.raises(WarehouseBusy, match="kept winning the write conflicts.*KG_DUCKDB_LOCK_TIMEOUT_S"):
        lake.write(always_loses)
    assert len(attempts) >= 2
    assert _override_rows(lake) == [("a", f"x{len(attempts)}", "merge")], "the rival's writes all landed"
    failures = []

    def fails(con):
        failures.append(1)
        raise ValueError("not a conflict")

    with pytest.raises(ValueError):
        lake.write(fails)
    assert failures == [1]


def _job_pools(env: dict[str, str]) -> str:
    code = ("from kg_assets.commands.recovery import job_pools; from kg_assets.definitions import build_definitions; "
            "from kg_assets.settings import Settings; "
            "print(sorted(job_pools(build_definitions(Settings.from_env()).resolve_job_def('kg_pipeline'))))")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


def test_on_the_lake_partition_writes_take_no_pool_and_consolidation_and_dbt_pools_of_their_own(lake_catalog,
                                                                                                 tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    assert _job_pools(env) == "['duckdb', 'llm']"
    lake_env = {"KG_WAREHOUSE_BACKEND": "ducklake", "KG_DUCKLAKE_CATALOG": lake_catalog,
                "KG_DUCKLAKE_DATA_PATH": str(tmp_path / "lake")}
    assert _job_pools({**env, **lake_env}) == "['consolidation', 'dbt', 'llm']"


@pytest.mark.process
def test_two_processes_write_partitions_at_once_then_one_consolidates_as_a_serial_build(lake_catalog, tmp_path,
                                                                                        built_warehouse):
    """Two `kg run --partitions-only` over the two halves of the sample inbox at the same time, on one lake and
    one Dagster instance, then a plain `kg run` consolidates and builds the dbt marts: the graph equals the serial
    embedded build (the whole pipeline on a lake, through the installed `kg`)."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.event_log_storage.set_concurrency_slots("llm", 2)  # both runs' extraction steps may run at once
    lake_env = {"KG_WAREHOUSE_BACKEND": "ducklake", "KG_DUCKLAKE_CATALOG": lake_catalog,
                "KG_DUCKLAKE_DATA_PATH": str(tmp_path / "lake")}
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KG_", "DAGSTER_"))},
           "DAGSTER_HOME": str(home), **lake_env}
    keys = sorted(str(p.relative_to(SAMPLE_INBOX)) for p in SAMPLE_INBOX.rglob("*") if p.is_file())
    halves = (keys[0::2], keys[1::2])
    logs = [tmp_path / f"worker{i}.log" for i in range(2)]
    workers = []
    for half, log in zip(halves, logs, strict=True):
        documents = [arg for key in half for arg in ("--document", key)]
        with log.open("w") as out:
            workers.append(subprocess.Popen([BIN / "kg", "run", "--inbox", SAMPLE_INBOX, "--partitions-only", *documents],
                                            env=env, stdout=out, stderr=subprocess.STDOUT, text=True))
    for worker, log in zip(workers, logs, strict=True):
        assert worker.wait(timeout=900) == 0, log.read_text()[-3000:]
        assert "waiting" not in log.read_text(), "no worker waited for the other's pool slot"
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_run_records()
        assert len(runs) == 2 and all(r.dagster_run.is_success for r in runs)
        (first, second) = sorted(runs, key=lambda r: r.start_time)
        assert second.start_time < first.end_time, "the two partition runs wrote at the same time"
    consolidate = subprocess.run([BIN / "kg", "run", "--inbox", SAMPLE_INBOX], env=env, capture_output=True, text=True,
                                 timeout=900)
    assert consolidate.returncode == 0, consolidate.stdout[-3000:] + consolidate.stderr[-3000:]
    assert "every document is up to date; consolidating only" in consolidate.stdout
    passed, total = map(int, re.search(r"checks\s+(\d+)/(\d+) passed", consolidate.stdout).groups())
    assert passed == total and total > 40, "the dbt marts were built on the lake and their tests ran as checks"
    lake = Warehouse.from_settings(Settings.from_env(lake_env).warehouse)
    with lake.connect(read_only=True) as con:
        on_lake = {name: con.execute(query).fetchall() for name, query in GRAPH.items()}
        profiles = con.execute("SELECT count(*) FROM kg_marts.entity_profile").fetchone()[0]
    with duckdb.connect(str(built_warehouse), read_only=True) as con:
        serial = {name: con.execute(query).fetchall() for name, query in GRAPH.items()}
    assert {name: len(rows) for name, rows in on_lake.items()} == {name: len(rows) for name, rows in serial.items()}
    assert on_lake == serial
    assert len(on_lake["entities"]) > 100 and len(on_lake["chunks"]) == 96 and on_lake["user_facts"]
    assert profiles == len(on_lake["entities"])

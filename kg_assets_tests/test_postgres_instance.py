"""The documented production instance config (deploy/dagster.postgres.yaml) against a real PostgreSQL."""

import os
import shutil
import uuid
from pathlib import Path

import dagster as dg
import psycopg2
import pytest

from kg_assets.defs.planner import today_utc

ROOT = Path(__file__).resolve().parents[1]
PG = {
    "DAGSTER_PG_HOST": os.environ.get("DAGSTER_PG_HOST", "127.0.0.1"),
    "DAGSTER_PG_PORT": os.environ.get("DAGSTER_PG_PORT", "5432"),
    "DAGSTER_PG_USER": os.environ.get("DAGSTER_PG_USER", "postgres"),
    "DAGSTER_PG_PASSWORD": os.environ.get("DAGSTER_PG_PASSWORD", ""),
}


@pytest.fixture
def pg_database():
    """A fresh database per test, dropped afterwards. Outside CI a missing server skips; in CI it fails."""
    try:
        admin = psycopg2.connect(host=PG["DAGSTER_PG_HOST"], port=PG["DAGSTER_PG_PORT"], user=PG["DAGSTER_PG_USER"],
                                 password=PG["DAGSTER_PG_PASSWORD"], dbname="postgres", connect_timeout=5)
    except psycopg2.OperationalError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but PostgreSQL at {PG['DAGSTER_PG_HOST']}:{PG['DAGSTER_PG_PORT']} is unreachable: {exc}")
        pytest.skip(f"no PostgreSQL at {PG['DAGSTER_PG_HOST']}:{PG['DAGSTER_PG_PORT']} ({exc}); .ci/run starts one")
    admin.autocommit = True
    name = f"kg_dagster_{uuid.uuid4().hex[:10]}"
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def test_pipeline_runs_on_the_postgres_instance_config(project, pg_database, tmp_path, monkeypatch):
    home = tmp_path / "pg_home"
    home.mkdir()
    shutil.copy(ROOT / "deploy" / "dagster.postgres.yaml", home / "dagster.yaml")
    for key, value in {**PG, "DAGSTER_PG_DB": pg_database}.items():
        monkeypatch.setenv(key, value)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        project.instance = instance
        result = project.run_all()
        assert result.success
        assert len(instance.get_dynamic_partitions("arrival_days")) == 1
        assert instance.get_run_by_id(result.run_id).is_success
    # the run and its per-partition materializations really live in PostgreSQL
    conn = psycopg2.connect(host=PG["DAGSTER_PG_HOST"], port=PG["DAGSTER_PG_PORT"], user=PG["DAGSTER_PG_USER"],
                            password=PG["DAGSTER_PG_PASSWORD"], dbname=pg_database)
    with conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM runs WHERE run_id = %s", (result.run_id,))
        assert cur.fetchone()[0] == 1
        cur.execute("SELECT partition FROM event_logs WHERE asset_key = %s AND dagster_event_type = 'ASSET_MATERIALIZATION'",
                    ('["chunks"]',))
        assert cur.fetchall() == [(today_utc(),)], "one materialization for the one arrival day, not one per document"
    conn.close()

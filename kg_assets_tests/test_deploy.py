"""The production instance for the lake (deploy/dagster.lake.yaml) as a real Dagster instance on PostgreSQL, and the
Docker run launcher block (deploy/run_launcher.docker.yaml) validated against the instance schema."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.config import dagster_instance_config

from kg_assets_tests.test_postgres_instance import PG, pg_database  # noqa: F401 (a fixture)

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
DAGSTER = Path(sys.executable).parent / "dagster"


@pytest.fixture
def lake_home(tmp_path, pg_database, monkeypatch):  # noqa: F811
    """A DAGSTER_HOME holding deploy/dagster.lake.yaml, its storage in a fresh PostgreSQL database."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(DEPLOY / "dagster.lake.yaml", home / "dagster.yaml")
    for key, value in {**PG, "DAGSTER_PG_DB": pg_database}.items():
        monkeypatch.setenv(key, value)
    return home


def test_the_lake_instance_queues_runs_with_limits_and_monitors_them(lake_home):
    with dg.DagsterInstance.from_config(str(lake_home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert type(instance.run_launcher).__name__ == "DefaultRunLauncher", "the Docker launcher is a separate file"
        config = instance.get_concurrency_config()
        queue = config.run_queue_config
        assert queue.max_concurrent_runs == 4
        limits = {(limit["key"], str(limit.get("value"))): limit["limit"] for limit in queue.tag_concurrency_limits}
        assert limits == {("dagster/schedule_name", "nightly_refresh"): 1, ("dagster/sensor_name", "inbox_sensor"): 3,
                          ("dagster/backfill", "{'applyLimitPerUniqueValue': True}"): 2}
        assert (config.pool_config.default_pool_limit, config.pool_config.op_granularity_run_buffer) == (1, 1)
        assert instance.run_monitoring_enabled and instance.run_monitoring_max_resume_run_attempts == 0


@pytest.mark.process
def test_the_pools_are_sized_with_the_dagster_cli_and_kept_in_postgres(lake_home):
    env = {**os.environ, "DAGSTER_HOME": str(lake_home)}
    for pool, limit in (("llm", "4"),):
        proc = subprocess.run([DAGSTER, "instance", "concurrency", "set", pool, limit], env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
    with dg.DagsterInstance.from_config(str(lake_home)) as instance:
        assert instance.event_log_storage.get_concurrency_info("llm").slot_count == 4
        # the lake's one-at-a-time pools need no sizing: the default limit holds them to 1
        for pool in ("consolidation", "dbt"):
            info = instance.event_log_storage.get_concurrency_info(pool)
            assert (info.limit, info.using_default_limit) == (1, True)


def test_the_docker_launcher_block_fits_the_instance_schema(lake_home):
    (lake_home / "dagster.yaml").write_text((DEPLOY / "dagster.lake.yaml").read_text() + "\n"
                                            + (DEPLOY / "run_launcher.docker.yaml").read_text())
    config, _ = dagster_instance_config(str(lake_home))  # raises DagsterInvalidConfigError on a schema error
    launcher = config["run_launcher"]
    assert (launcher["module"], launcher["class"]) == ("dagster_docker", "DockerRunLauncher")
    assert {"KG_WAREHOUSE_BACKEND", "KG_DUCKLAKE_CATALOG", "KG_DUCKLAKE_DATA_PATH"} <= set(launcher["config"]["env_vars"])


def test_the_docker_launcher_loads_where_dagster_docker_is_installed(lake_home):
    pytest.importorskip("dagster_docker", reason="dagster-docker is installed on the daemon's machine only (deploy/README.md)")
    (lake_home / "dagster.yaml").write_text((DEPLOY / "dagster.lake.yaml").read_text() + "\n"
                                            + (DEPLOY / "run_launcher.docker.yaml").read_text())
    with dg.DagsterInstance.from_config(str(lake_home)) as instance:
        assert type(instance.run_launcher).__name__ == "DockerRunLauncher"

"""Shared fixtures: a private copy of the sample inbox, a warehouse and a real Dagster test instance.

The warehouse is the embedded DuckDB file, or a DuckLake (a catalog database of its own in the local
PostgreSQL, a data folder in the test's tmp_path) for tests marked `both_backends`.
"""

import contextlib
import hashlib
import io
import os
import shutil
import threading
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import duckdb
import hypothesis
import polars as pl
import psycopg2
import pytest
from filelock import FileLock

from kg_assets.cli import main as kg_main
from kg_assets.core import schemas
from kg_assets.definitions import build_definitions
from kg_assets.defs.partitions import CONSOLIDATION_ASSETS, PARTITIONED_ASSETS, RunScope, arrival_days, range_tags
from kg_assets.defs.planner import add_days, current_plan, run_spec, today_utc
from kg_assets.settings import (
    ExtractorSettings,
    FactSettings,
    GraphSettings,
    IngestSettings,
    Settings,
    WarehouseSettings,
)
from kg_assets.storage.lake import close_sessions
from kg_assets.storage.warehouse import Warehouse
from kg_assets.testing.openai_server import FakeOpenAIServer
from kg_assets.testing.postgres import pg_admin

CORE_ASSETS = (*PARTITIONED_ASSETS, *CONSOLIDATION_ASSETS)
SAMPLE_INBOX = Path(__file__).resolve().parents[1] / "data" / "inbox"
PG = "host=127.0.0.1 port=5432 user=postgres"

# Property tests draw the same examples on every run (a failure in CI is a failure on a laptop too); set
# HYPOTHESIS_PROFILE=explore to draw new ones.
hypothesis.settings.register_profile("kg", derandomize=True, database=None, print_blob=True)
hypothesis.settings.register_profile("explore", database=None, print_blob=True)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "kg"))

# Fixtures that give a test a DuckLake: such a test, like every `ducklake` case of `backend`, is marked `lake`.
LAKE_FIXTURES = {"lake_catalog", "built_lake", "lake"}


def pytest_collection_modifyitems(items):
    for item in items:
        callspec = getattr(item, "callspec", None)
        if (callspec and callspec.params.get("backend") == "ducklake") or LAKE_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.lake)


def run_at_once(work, count: int) -> None:
    """`work()` in `count` threads started together, returning when all have finished."""
    threads = [threading.Thread(target=work) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


# The same test on the embedded file and on a DuckLake: parametrizes the `backend` fixture below.
both_backends = pytest.mark.parametrize("backend", ["duckdb", "ducklake"])


def embedded_only(reason: str):
    """A test of the embedded file alone: its lake variant is reported as skipped, with the reason."""
    return pytest.mark.parametrize("backend", ["duckdb", pytest.param("ducklake", marks=pytest.mark.skip(reason=reason))])


@contextlib.contextmanager
def catalog_database(template: str | None = None):
    """A PostgreSQL database of its own (empty, or a copy of `template`), dropped afterwards: yields its name."""
    name = f"kg_lake_test_{uuid.uuid4().hex[:12]}"
    pg_admin(PG, f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
    try:
        yield name
    finally:
        close_sessions()
        pg_admin(PG, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def lake_warehouse(catalog: str, data_path: Path) -> Warehouse:
    """A DuckLake warehouse on the catalog DSN `catalog` with its data under `data_path`."""
    settings = WarehouseSettings(backend="ducklake", lake_catalog=catalog, lake_data_path=str(data_path))
    return Warehouse.from_settings(settings)


def ephemeral_instance() -> dg.DagsterInstance:
    """The Dagster instance of an in-process test: Dagster's ephemeral instance, whose run, event-log and schedule
    storages are the same SQL storages as an on-disk instance's, on an in-memory SQLite (a run costs ~40% less).
    Tests of `kg run` and `dagster` processes use on-disk instances, and test_postgres_instance the production one."""
    return dg.DagsterInstance.ephemeral()


def without_marts(selection: list[dg.AssetKey] | None) -> list[dg.AssetKey]:
    """A run's asset selection (None: everything) less the dbt marts."""
    if selection is None:
        return [dg.AssetKey(k) for k in CORE_ASSETS]
    return [key for key in selection if key.path[0] != "marts"]


@dataclass
class Project:
    inbox: Path
    warehouse: Warehouse
    instance: dg.DagsterInstance
    defs: dg.Definitions

    def register_days(self) -> list[str]:
        """Make the warehouse's arrival days (and today) partitions of the instance, as the planner would."""
        days = {today_utc(), *(self.warehouse.arrival_days() if self.warehouse.exists() else [])}
        add_days(self.instance, sorted(days - set(self.instance.get_dynamic_partitions(arrival_days.name))))
        return list(self.instance.get_dynamic_partitions(arrival_days.name))

    def plan(self, **options):
        """What the sensor, the schedule and `kg run` would plan now (`include_stale`, `everything`, `only`)."""
        version = self.defs.resources["extractor"].build_extractor().version
        return current_plan(self.inbox, self.warehouse, self.instance, version, today_utc(), **options)

    def run_plan(self, plan, asset_selection=None, with_dbt: bool = False):
        """Carry out a plan the way `kg run` does: one kg_pipeline run over its days, with its scope. The dbt
        marts the plan asks for only `with_dbt` (their build, dbt's start-up, is half of a first run)."""
        spec = run_spec(plan, self.instance, self.warehouse)
        add_days(self.instance, spec.missing_days)
        selection = asset_selection or spec.asset_selection
        return self.execute(tags=spec.tags, run_config=spec.run_config,
                            asset_selection=selection if with_dbt else without_marts(selection))

    def execute(self, job: str = "kg_pipeline", tags=None, asset_selection=None, days=None, documents=None,
                run_config=None):
        """One in-process run of a job; `days` (default: every partition) and `documents` set its scope."""
        if job == "kg_pipeline" and tags is None:
            keys = days or self.register_days()
            tags = range_tags(keys[0], keys[-1])
        if documents is not None:
            run_config = {**(run_config or {}), **RunScope(documents=list(documents)).run_config()}
        return self.defs.resolve_job_def(job).execute_in_process(
            instance=self.instance, tags=tags or {}, asset_selection=asset_selection, raise_on_error=False,
            run_config=run_config or {},
        )

    def consolidate(self):
        """One run of the `consolidation` job without the dbt marts (their build is dbt's start-up)."""
        return self.execute("consolidation", asset_selection=[dg.AssetKey(a) for a in CONSOLIDATION_ASSETS])

    def run_all(self, with_dbt: bool = False, asset_selection=None):
        """Every arrival day and every inbox file (`kg run --all`); dbt marts only when asked (they cost seconds)."""
        return self.run_plan(self.plan(everything=True), asset_selection=asset_selection, with_dbt=with_dbt)

    def apply_sensor_result(self, result: dg.SensorResult) -> None:
        """What the sensor daemon does with a result: partition requests first, then the runs."""
        for request in result.dynamic_partitions_requests or []:
            if isinstance(request, dg.AddDynamicPartitionsRequest):
                self.instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
            else:
                for key in request.partition_keys:
                    self.instance.delete_dynamic_partition(request.partitions_def_name, key)

    def sql(self, query: str, **params):
        return self.warehouse.run_user_query(query, params or None)


def lake_env(warehouse: Warehouse) -> dict[str, str]:
    """The environment variables that select this lake, as a user of `kg` sets them."""
    catalog, data_path = warehouse.lake
    return {"KG_WAREHOUSE_BACKEND": "ducklake", "KG_DUCKLAKE_CATALOG": catalog, "KG_DUCKLAKE_DATA_PATH": data_path}


def warehouse_settings(warehouse: Warehouse | Path) -> WarehouseSettings:
    if isinstance(warehouse, Warehouse) and warehouse.lake is not None:
        catalog, data_path = warehouse.lake
        return WarehouseSettings(backend="ducklake", lake_catalog=catalog, lake_data_path=data_path)
    return WarehouseSettings(db_path=str(warehouse.path if isinstance(warehouse, Warehouse) else warehouse))


def project_settings(inbox: Path, db: Warehouse | Path, facts: FactSettings | None = None,
                     graph: GraphSettings | None = None, **extractor) -> Settings:
    """Explicit settings for a test project (`db`: a DuckDB file or a Warehouse): nothing comes from the environment."""
    return Settings(ingest=IngestSettings(inbox_dir=str(inbox)), warehouse=warehouse_settings(db),
                    extractor=ExtractorSettings(**extractor), facts=facts or FactSettings(), graph=graph or GraphSettings())


def assert_same_current_rows(warehouse: Path, other: Path, tables, skip: tuple[str, ...] = ()) -> None:
    """Every current row of `tables` is in both DuckDB files, `EXCEPT ALL` both ways, on the columns two runs
    share: not the times, nor the columns in `skip`; and the tables are not empty."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute(f"ATTACH '{other}' AS other (READ_ONLY)")
        for table in tables:
            cols = ", ".join(c for c, t in schemas.TABLES[table].items() if not t.is_temporal() and c not in skip)
            current = " WHERE valid_until IS NULL" if "valid_until" in schemas.TABLES[table] else ""
            ours, theirs = f"SELECT {cols} FROM kg.{table}{current}", f"SELECT {cols} FROM other.kg.{table}{current}"
            extra = con.execute(f"SELECT count(*) FROM ({ours} EXCEPT ALL {theirs})").fetchone()[0]
            missing = con.execute(f"SELECT count(*) FROM ({theirs} EXCEPT ALL {ours})").fetchone()[0]
            total = con.execute(f"SELECT count(*) FROM ({ours})").fetchone()[0]
            assert (extra, missing) == (0, 0) and total > 0, f"{table}: {extra} rows only in {warehouse}, {missing} only in {other}"


def _session_base(tmp_path_factory) -> Path:
    """The test session's base folder: above each pytest-xdist worker's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory, name: str, build) -> Path:
    """A folder that `build(folder)` fills once per test session, shared by the pytest-xdist workers: the first
    worker to ask builds it under a file lock, the others wait and reuse it (a session fixture alone is per worker)."""
    folder = _session_base(tmp_path_factory) / name
    with FileLock(f"{folder}.lock"):
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder


def shared_catalog_name(tmp_path_factory) -> str:
    """The catalog database of the session's built lake: one name for every worker of this session."""
    return f"kg_lake_built_{hashlib.sha1(str(_session_base(tmp_path_factory)).encode()).hexdigest()[:12]}"


@pytest.fixture(scope="session")
def built_warehouse(tmp_path_factory) -> Path:
    """A warehouse built once from the sample corpus; tests that only read or corrupt it get a copy."""
    def build(root: Path) -> None:
        db = root / "warehouse.duckdb"
        with ephemeral_instance() as instance:
            built = Project(SAMPLE_INBOX, Warehouse(db), instance, build_definitions(project_settings(SAMPLE_INBOX, db)))
            assert built.run_all().success
    return built_once(tmp_path_factory, "built", build) / "warehouse.duckdb"


@pytest.fixture(scope="session")
def built_lake(tmp_path_factory):
    """The sample corpus built once into a DuckLake: (catalog database, data folder), which `built` copies. The
    catalog database lives until the session ends (dropped by `pytest_sessionfinish` of the main process)."""
    catalog = shared_catalog_name(tmp_path_factory)

    def build(root: Path) -> None:
        pg_admin(PG, f"DROP DATABASE IF EXISTS {catalog} WITH (FORCE)")
        pg_admin(PG, f"CREATE DATABASE {catalog}")
        with ephemeral_instance() as instance:
            warehouse = lake_warehouse(f"{PG} dbname={catalog}", root / "lake")
            built = Project(SAMPLE_INBOX, warehouse, instance, build_definitions(project_settings(SAMPLE_INBOX, warehouse)))
            assert built.run_all().success
    return catalog, built_once(tmp_path_factory, "built_lake", build) / "lake"


def pytest_sessionfinish(session):
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # the main process ends after every worker
        factory = getattr(session.config, "_tmp_path_factory", None)
        if factory is not None and (factory.getbasetemp() / "built_lake").exists():
            pg_admin(PG, f"DROP DATABASE IF EXISTS {shared_catalog_name(factory)} WITH (FORCE)")


def copy_lake(source: tuple[str, Path], target: Warehouse) -> None:
    """Make `target` (a lake no session has touched yet) a copy of a built lake: its catalog database cloned
    from the built one, its data folder copied, and the catalog's data path pointed at the copy."""
    built_catalog, built_data = source
    catalog, data_path = target.lake
    name = catalog.rsplit("dbname=", 1)[1]
    close_sessions()  # a template database must have no connection
    pg_admin(PG, f"DROP DATABASE {name}")
    pg_admin(PG, f"CREATE DATABASE {name} TEMPLATE {built_catalog}")
    shutil.copytree(built_data, data_path)
    con = psycopg2.connect(catalog)
    try:
        with con, con.cursor() as cursor:  # DuckLake keeps the root data path in its catalog, with a trailing /
            cursor.execute("UPDATE ducklake_metadata SET value = %s WHERE key = 'data_path'", (f"{data_path}/",))
            assert cursor.rowcount == 1
    finally:
        con.close()


@pytest.fixture
def mutable(built_warehouse, tmp_path):
    """A copy of the built warehouse that a test may write to."""
    copy = tmp_path / "warehouse.duckdb"
    shutil.copy(built_warehouse, copy)
    return copy


@pytest.fixture
def built(project, request):
    """`project` with the sample corpus already built into its warehouse and registered in its instance."""
    if project.warehouse.lake is not None:
        copy_lake(request.getfixturevalue("built_lake"), project.warehouse)
    else:
        shutil.copy(request.getfixturevalue("built_warehouse"), project.warehouse.path)
    project.register_days()
    return project


@pytest.fixture
def backend() -> str:
    """Which warehouse `warehouse`, `project` and `built` use: the embedded file, unless a test is `both_backends`."""
    return "duckdb"


@pytest.fixture
def lake_catalog():
    """A DSN of an empty PostgreSQL database of this test's own, for a DuckLake catalog."""
    with catalog_database() as name:
        yield f"{PG} dbname={name}"


@pytest.fixture
def warehouse(backend, tmp_path, request) -> Warehouse:
    """A warehouse nothing has written yet: a DuckDB file to be, or a DuckLake on an empty catalog database."""
    if backend == "ducklake":
        return lake_warehouse(request.getfixturevalue("lake_catalog"), tmp_path / "lake")
    return Warehouse(tmp_path / "warehouse.duckdb")


@pytest.fixture
def project(tmp_path, warehouse, request):
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX, inbox)
    on_disk = request.node.get_closest_marker("instance_on_disk") is not None
    settings = project_settings(inbox, warehouse)
    # Marts builds replay what any earlier dbt build of the same SQL compiled, as in production (`defs/dbt_replay.py`),
    # except in a test of dbt's own path, which keeps its records to itself so that its first build is dbt's.
    if request.node.get_closest_marker("own_dbt_replay") is not None:
        settings = settings.model_copy(update={"warehouse": settings.warehouse.model_copy(
            update={"dbt_replay_dir": str(tmp_path / "compiled_marts")})})
    with (dg.instance_for_test() if on_disk else ephemeral_instance()) as instance:
        yield Project(inbox=inbox, warehouse=warehouse, instance=instance, defs=build_definitions(settings))


def engine_chunks(texts: dict[str, str], documents: dict[str, str] | None = None) -> pl.DataFrame:
    """Chunk rows as the extraction asset hands them to an extractor: {chunk_id: text}, each chunk the first
    of its own document unless `documents` ({chunk_id: document_id}) says otherwise."""
    documents = documents or {chunk_id: f"d{i}" for i, chunk_id in enumerate(texts)}
    return pl.DataFrame({
        "chunk_id": list(texts), "document_id": [documents[c] for c in texts], "chunk_index": [0] * len(texts),
        "text": list(texts.values()), "section_path": [None] * len(texts),
        "content_hash": [f"h{i}" for i in range(len(texts))], "headings": [[] for _ in texts],
    }, schema_overrides={"section_path": pl.String, "headings": pl.List(pl.String)})


@dataclass
class CliResult:
    """What a `kg` command printed and returned, as subprocess.run would report it."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def kg_cli(monkeypatch, capsys):
    """`kg …` through `kg_assets.cli.main` in this process: the installed command's code, without a process
    start per call (one test per command family still runs the installed `kg`). Settings come from the
    environment as for a user, so the developer's OPENAI_* and KG_* variables are removed first; `env` and `cwd`
    hold for that one call, as for a command started with them."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "KG_")):
            monkeypatch.delenv(name)

    def run(*args, stdin: str | None = None, env: dict[str, str] | None = None, cwd: Path | None = None) -> CliResult:
        with monkeypatch.context() as call:
            for name, value in (env or {}).items():
                call.setenv(name, value)
            if cwd is not None:
                call.chdir(cwd)
            call.setattr(sys, "stdin", io.StringIO(stdin or ""))
            capsys.readouterr()
            try:
                code = kg_main([str(arg) for arg in args])
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else 1
            out, err = capsys.readouterr()
        return CliResult(code, out, err)

    return run


@pytest.fixture
def openai_server():
    """A started FakeOpenAIServer (fresh per test), stopped afterwards."""
    with FakeOpenAIServer() as server:
        yield server


# What every LLM test project starts from; `configure(**fields)` changes some of them.
LLM_TEST_SETTINGS = {"prompt_price_per_1m": 0.15, "completion_price_per_1m": 0.60, "timeout_s": 5.0,
                     "summary_min_fragments": 0}  # summaries have their own test


@pytest.fixture
def llm_project(project, openai_server):
    """`project` with extraction pointed at the local OpenAI-compatible test server."""
    from kg_assets.testing.scripted_llm import extraction_responder

    openai_server.set_responder(extraction_responder())
    extractor = {**LLM_TEST_SETTINGS, "base_url": openai_server.base_url}

    def configure(**fields) -> Project:
        extractor.update(fields)
        # These tests count entity-extraction requests; user-fact requests have their own tests
        # (test_fact_llm_and_forget.py), so fact extraction is off here.
        project.defs = build_definitions(project_settings(project.inbox, project.warehouse,
                                                          facts=FactSettings(enabled=False), **extractor))
        return project

    project.server = openai_server
    project.configure = configure
    return configure()

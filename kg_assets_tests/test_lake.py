"""The DuckLake backend against the local PostgreSQL: a catalog database of its own per test (conftest's
`lake_catalog`), real files."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from kg_assets.settings import Settings
from kg_assets.storage.lake import EXTENSION_DIR, LakeUnavailable, connect_lake
from kg_assets.storage.reads import fetch_frame
from kg_assets.storage.warehouse import Warehouse

from kg_assets_tests.conftest import SAMPLE_INBOX

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


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


def test_kg_run_on_the_lake_builds_what_the_embedded_file_holds_and_the_dbt_marts(lake_catalog, tmp_path,
                                                                                   built_warehouse):
    """The whole pipeline, checks and dbt included, through the installed `kg` on a fresh lake."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    lake_env = {"KG_WAREHOUSE_BACKEND": "ducklake", "KG_DUCKLAKE_CATALOG": lake_catalog,
                "KG_DUCKLAKE_DATA_PATH": str(tmp_path / "lake")}
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KG_", "DAGSTER_"))},
           "DAGSTER_HOME": str(home), **lake_env}
    proc = subprocess.run([BIN / "kg", "run", "--inbox", SAMPLE_INBOX], env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    passed, total = map(int, re.search(r"checks\s+(\d+)/(\d+) passed", proc.stdout).groups())
    assert passed == total and total > 40, "the dbt tests ran as checks too"
    lake = Warehouse.from_settings(Settings.from_env(lake_env).warehouse)
    graph = ("SELECT entity_id, name, entity_type FROM kg.entities WHERE valid_until IS NULL ORDER BY ALL",
             "SELECT edge_id FROM kg.graph_edges WHERE valid_until IS NULL ORDER BY ALL")
    with lake.connect(read_only=True) as con:
        on_lake = [con.execute(query).fetchall() for query in graph]
        profiles = con.execute("SELECT count(*) FROM kg_marts.entity_profile").fetchone()[0]
    with duckdb.connect(str(built_warehouse), read_only=True) as con:
        embedded = [con.execute(query).fetchall() for query in graph]
    assert on_lake == embedded and len(on_lake[0]) > 100
    assert profiles == len(on_lake[0])


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

"""The installed `kg` and `dagster` commands, as a user runs them."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from kg_assets_tests.conftest import SAMPLE_INBOX

pytestmark = pytest.mark.process  # every test here starts the installed commands

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "KG_", "DAGSTER_"))}
    home = tmp_path / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    return {**env, "DAGSTER_HOME": str(home)}


def test_kg_run_builds_the_warehouse_and_prints_a_summary(tmp_path):
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX, inbox)
    (inbox / "broken.txt").write_bytes(b"")
    db = tmp_path / "out" / "graph.duckdb"
    env = _env(tmp_path)
    proc = subprocess.run([BIN / "kg", "run", "--inbox", inbox, "--db", db], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert "19 documents" in out and "19 new" in out
    summary = dict(re.findall(r"^\s{2}(documents|chunks|entity_mentions|local_relations|entities|graph_nodes|graph_edges)\s+([\d,]+)$", out, re.M))
    assert set(summary) == {"documents", "chunks", "entity_mentions", "local_relations", "entities", "graph_nodes", "graph_edges"}
    assert "failed documents          1" in out and "broken.txt: empty document" in out
    passed, total = map(int, re.search(r"checks\s+(\d+)/(\d+) passed", out).groups())
    assert passed == total >= 8
    with duckdb.connect(str(db), read_only=True) as con:
        for table, shown in summary.items():
            current = " WHERE valid_until IS NULL" if table in {"documents", "entities", "graph_nodes", "graph_edges"} else ""
            assert con.execute(f"SELECT count(*) FROM kg.{table}{current}").fetchall()[0][0] == int(shown.replace(",", "")) > 0
    # the same instance now knows the one arrival day of every document (what the UI shows)
    import dagster as dg

    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        assert len(instance.get_dynamic_partitions("arrival_days")) == 1
        assert instance.get_runs_count() == 1

    query = subprocess.run([BIN / "kg", "sql", "SELECT count(*) AS n FROM kg.graph_edges", "--db", db],
                           env=env, capture_output=True, text=True, timeout=120)
    assert query.returncode == 0 and re.search(r"│\s*\d+\s*│", query.stdout)


def test_kg_run_refuses_a_missing_inbox_clearly(tmp_path):
    proc = subprocess.run([BIN / "kg", "run", "--inbox", tmp_path / "nope", "--db", tmp_path / "w.duckdb"],
                          env=_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "is not a folder" in proc.stderr and "refusing" in proc.stderr


def test_dagster_definitions_validate_passes(tmp_path):
    proc = subprocess.run([BIN / "dagster", "definitions", "validate", "-w", "workspace.yaml"], cwd=ROOT,
                          env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Validation successful" in proc.stdout + proc.stderr


def test_dagster_definitions_validate_fails_on_a_bad_setting_and_names_the_variable(tmp_path):
    for name, value in (("KG_EXTRACTOR", "bogus"), ("KG_LLM_FORMAT", "xml")):
        proc = subprocess.run([BIN / "dagster", "definitions", "validate", "-w", "workspace.yaml"], cwd=ROOT,
                              env={**_env(tmp_path / name), name: value}, capture_output=True, text=True, timeout=300)
        assert proc.returncode != 0
        assert f"{name}={value!r}" in proc.stdout + proc.stderr


def test_kg_commands_refuse_a_bad_setting_and_a_missing_warehouse_clearly(tmp_path):
    proc = subprocess.run([BIN / "kg", "sql", "SELECT 1", "--db", tmp_path / "w.duckdb"], env={**_env(tmp_path), "KG_LLM_FORMAT": "xml"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "KG_LLM_FORMAT='xml'" in proc.stderr
    proc = subprocess.run([BIN / "kg", "link", "list", "--db", tmp_path / "w.duckdb"], env=_env(tmp_path / "home2"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no warehouse at" in proc.stderr
    assert not (tmp_path / "w.duckdb").exists(), "a read creates nothing"

"""The installed `kg` and `dagster` commands, as a user runs them."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import duckdb
import pytest

from kg_assets.commands.launch import LOCATION_NAME, repository_label
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
        # the run is the code location's, tagged with what planned it
        (run,) = instance.get_runs(dg.RunsFilter(job_name="kg_pipeline", tags={".dagster/repository": repository_label()}))
        assert run.tags["kg/launched_by"] == "kg run" and run.tags["kg/new_documents"] == "19"
        assert run.tags["user"].startswith("kg run (")  # the UI's "Launched by"
        assert run.tags["kg/arrival_days"] == sorted(instance.get_dynamic_partitions("arrival_days"))[0]
        assert run.job_code_origin.repository_origin.code_pointer.module == "kg_assets.definitions"

    query = subprocess.run([BIN / "kg", "sql", "SELECT count(*) AS n FROM kg.graph_edges", "--db", db],
                           env=env, capture_output=True, text=True, timeout=120)
    assert query.returncode == 0 and re.search(r"│\s*\d+\s*│", query.stdout)


def _graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["data"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_ui_lists_a_kg_run_under_its_job_as_the_same_version(tmp_path):
    """The webserver (GraphQL, as the UI queries it) finds `kg run`'s run under kg_pipeline of the kg_assets
    location, and the job it loads has the run's snapshot: re-execution warns of no other version."""
    assert f"location_name: {LOCATION_NAME}" in (ROOT / "workspace.yaml").read_text()
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX, inbox)
    db = tmp_path / "graph.duckdb"
    env = {**_env(tmp_path), "KG_INBOX": str(inbox), "KG_DUCKDB_PATH": str(db)}
    proc = subprocess.run([BIN / "kg", "run", "--log-level", "WARNING"], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    port = _free_port()
    server = subprocess.Popen([BIN / "dagster-webserver", "-w", "workspace.yaml", "-p", str(port)], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        job = {}
        for _ in range(240):  # the location loads in the background after the server answers
            try:
                job = _graphql(port, """{ pipelineOrError(params: {pipelineName: "kg_pipeline",
                    repositoryName: "__repository__", repositoryLocationName: "kg_assets"}) {
                    __typename ... on Pipeline { pipelineSnapshotId } } }""")["pipelineOrError"]
            except OSError:
                pass
            if job.get("__typename") == "Pipeline":
                break
            time.sleep(0.5)
        assert job.get("__typename") == "Pipeline", job
        runs = _graphql(port, """{ runsOrError(filter: {pipelineName: "kg_pipeline",
            tags: [{key: ".dagster/repository", value: "__repository__@kg_assets"}]}) {
            ... on Runs { results { status pipelineSnapshotId parentPipelineSnapshotId
                                    tags { key value } } } } }""")["runsOrError"]["results"]
    finally:
        server.terminate()
        server.wait(timeout=60)
    (run,) = runs
    assert run["status"] == "SUCCESS"
    assert {"key": "kg/launched_by", "value": "kg run"} in run["tags"]
    assert (run["parentPipelineSnapshotId"] or run["pipelineSnapshotId"]) == job["pipelineSnapshotId"]


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


def test_the_kg_script_and_the_code_location_collect_garbage_less_often(tmp_path):
    """`kg` is the installed entry point's `entry`: its collector runs every 50,000 allocations, not 700, and what is
    left at its end is frozen, so the interpreter does not walk it in a last collection (defs/garbage_collection.py);
    a process that loads the code location (a UI-launched run) gets the same threshold."""
    script = """
import atexit, gc, sys
from importlib.metadata import entry_points
kg = entry_points(group="console_scripts")["kg"].load()
atexit.register(lambda: print("threshold", gc.get_threshold()[0], "frozen", gc.get_freeze_count() > 0))
sys.argv = ["kg", "link", "list", "--db", sys.argv[1]]
kg()
"""
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "w.duckdb")], env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no warehouse at" in proc.stderr
    assert proc.stdout.strip() == "threshold 50000 frozen True"
    proc = subprocess.run([sys.executable, "-c", "import gc, kg_assets.definitions; print(gc.get_threshold()[0])"],
                          env=_env(tmp_path / "location"), capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "50000", proc.stderr[-2000:]


def test_the_kg_script_imports_the_pdf_parser_only_when_it_reads_a_pdf(tmp_path):
    """pypdf (with its crypto) is a tenth of a second of every `kg` process's start-up, and most inboxes have no PDF:
    the code location and the commands load without it, and reading a PDF loads it."""
    script = f"""
import sys
from pathlib import Path
import kg_assets.cli, kg_assets.definitions
from kg_assets.core.documents import read_document
before = "pypdf" in sys.modules
document = read_document(Path({str(SAMPLE_INBOX)!r}), "reports/annual_report_2025.pdf")
print(before, "pypdf" in sys.modules, bool(document))
"""
    proc = subprocess.run([sys.executable, "-c", script], env=_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "False True True", proc.stderr[-2000:]

"""`kg search | show | context | export | picture` on the built sample warehouse: in this process through the
CLI's entry function, and once as the installed command."""

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from kg_assets_tests.test_query_search import sql

KG = Path(sys.executable).parent / "kg"


@pytest.fixture
def kg(kg_cli):
    return kg_cli


def test_search_prints_scores_reasons_attributes_and_counts(kg, built_warehouse):
    out = kg("search", "entity:Sarah", "Chen", "--db", built_warehouse)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == 'kg search "entity:Sarah Chen": ' + lines[0].split(": ")[-1]
    assert lines[1].startswith("  1.00  Sarah Chen  [PERSON]  entity_")
    assert lines[2].strip() == 'exact: name "Sarah Chen" is "Sarah Chen"'
    counts = sql(built_warehouse, """SELECT mention_count, document_count FROM kg.entities
                                     WHERE name = 'Sarah Chen' AND entity_type = 'PERSON' AND valid_until IS NULL""").row(0)
    assert lines[3].strip().startswith(f"{counts[0]} mentions in {counts[1]} documents; employer = ")
    data = json.loads(kg("search", "attr:employer", "--type", "PERSON", "--limit", "3", "--as-of", "2025-03-01",
                         "--json", "--db", built_warehouse).stdout)
    assert data["kind"] == "attr" and data["as_of"].startswith("2025-03-01") and len(data["hits"]) == 3
    assert all(h["entity_type"] == "PERSON" and "employer" in h["attributes"] for h in data["hits"])


def test_show_prints_the_profile_and_draws_the_neighbourhood(kg, built_warehouse, tmp_path):
    out = kg("show", "Marcus Webb", "--db", built_warehouse, "--svg", tmp_path / "webb.svg", "--sources", "2")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith("Marcus Webb  [PERSON]  entity_")
    assert "  employer = Northwind Robotics  2024-11-05 .. 2025-06-18  from " in text
    assert "Relations out (" in text and "Relations in (" in text and "Sources (2 of " in text
    assert "Neighbourhood: " in text and (tmp_path / "webb.svg").read_text().startswith("<?xml")
    profile = json.loads(kg("show", "QDL", "--json", "--db", built_warehouse).stdout)
    assert profile["name"] == "Quantum Dynamics Lab"
    assert any(a["alias"] == "QDL" and a["method"] == "acronym" and a["evidence"] for a in profile["aliases"])
    # the text lists each surface form once, with every way it was linked and all its mentions
    shown = kg("show", "QDL", "--db", built_warehouse).stdout.split("Aliases (")[1].split("\nAttributes")[0]
    forms = [line.split("  (")[0].strip() for line in shown.splitlines()[1:]]
    assert len(forms) == len(set(forms)) and "QDL" in forms, shown
    qdl = sum(a["mentions"] for a in profile["aliases"] if a["alias"] == "QDL")
    assert f"  QDL  ({qdl})  " in shown and "acronym 0.90" in shown, shown


def test_context_reads_arguments_files_and_standard_input(kg, built_warehouse, tmp_path):
    text = "Sarah Chen and Alan Okafor run the Quantum Dynamics Lab."
    block = kg("context", text, "--max-tokens", "300", "--db", built_warehouse)
    assert block.returncode == 0 and block.stdout.startswith("# Knowledge graph context")
    assert "- Sarah Chen (PERSON)" in block.stdout and "## Sources" in block.stdout
    assert kg("context", "-", "--max-tokens", "300", "--db", built_warehouse, stdin=text).stdout == block.stdout
    (tmp_path / "note.txt").write_text(text)
    as_json = json.loads(kg("context", "--file", tmp_path / "note.txt", "--json", "--max-tokens", "300",
                            "--db", built_warehouse).stdout)
    assert as_json["text"] + "\n" == block.stdout and as_json["tokens"] <= 300


def test_export_and_picture_write_their_files(kg, built_warehouse, tmp_path):
    out = kg("export", "parquet", tmp_path / "pq", "--db", built_warehouse)
    nodes = sql(built_warehouse, "SELECT count(*) AS n FROM kg.graph_nodes WHERE valid_until IS NULL")["n"][0]
    assert out.returncode == 0 and f"{nodes:,} nodes" in out.stdout
    assert pl.read_parquet(tmp_path / "pq" / "nodes.parquet").height == nodes
    picture = kg("picture", tmp_path / "core.png", "--top", "10", "--db", built_warehouse)
    assert picture.returncode == 0 and (tmp_path / "core.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_input_exits_with_one_clear_line(kg, built_warehouse, tmp_path):
    cases = [
        (("search", "entity:"), 2, "kg search: entity: needs a name"),
        (("search", "x", "--as-of", "yesterday"), 2, "kg search: not an ISO date"),
        (("show", "Nobody At All"), 1, "kg show: no entity is named 'Nobody At All'"),
        (("context", "   "), 2, "kg context: no text"),
        (("export", "json", tmp_path / "x.json", "--as-of", "13/2025"), 2, "kg export: not an ISO date"),
        (("picture", tmp_path / "core.gif"), 2, "kg picture: picture file must end in .svg or .png"),
    ]
    for args, code, message in cases:
        out = kg(*args, "--db", built_warehouse)
        assert (out.returncode, out.stderr.strip().splitlines()[-1][:len(message)]) == (code, message), args
    missing = kg("search", "x", "--db", tmp_path / "none.duckdb")
    assert missing.returncode == 1 and "run `kg run` first" in missing.stderr


@pytest.mark.process
def test_the_installed_command_without_db_reads_the_warehouse_the_settings_name(built_warehouse, tmp_path):
    """No --db: KG_DUCKDB_PATH, as for `kg run` (this used to fail with "no warehouse at None")."""
    import os

    env = {**os.environ, "KG_DUCKDB_PATH": str(built_warehouse)}
    out = subprocess.run([KG, "search", "entity:Sarah Chen"], capture_output=True, text=True, timeout=120, env=env,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1].startswith("  1.00  Sarah Chen  [PERSON]")


@pytest.mark.process
def test_a_reader_that_stops_early_gets_no_traceback(built_warehouse, tmp_path):
    """`kg show X | head -1`: the pipe closes before kg has written everything; kg stops quietly, as a shell
    command cut short by a pipe does (exit 141 = 128 + SIGPIPE)."""
    import os

    env = {**os.environ, "KG_DUCKDB_PATH": str(built_warehouse)}
    read, write = os.pipe()
    os.close(read)  # the reader is gone before kg writes a byte
    shown = subprocess.run([KG, "show", "Marcus Webb"], stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
                           env=env, cwd=tmp_path)
    os.close(write)
    assert (shown.returncode, shown.stderr) == (141, "")

"""Reading the sample graph on a DuckLake: time travel (`kg sql --snapshot/--as-of/--snapshots`) on a run that
changed a fact, and `kg search`/`kg show` through the lake backend setting."""

from __future__ import annotations

from datetime import datetime

import pytest

from kg_assets.cli import main

from kg_assets_tests.conftest import lake_env

on_the_lake = pytest.mark.parametrize("backend", ["ducklake"])

# Lumen Analytics' headquarters, which only reports/lumen_qdl_pilot.md states.
HQ = """SELECT a.value AS headquarters FROM kg.entity_attributes_current a JOIN kg.entities e USING (entity_id)
        WHERE e.name = 'Lumen Analytics' AND e.valid_until IS NULL AND a.attr_key = 'headquarters'"""


@pytest.fixture
def kg(built, monkeypatch, capsys):
    """`kg …` in this process against the built lake, selected through the environment as a user would."""
    for name, value in lake_env(built.warehouse).items():
        monkeypatch.setenv(name, value)

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@on_the_lake
def test_an_earlier_snapshot_shows_the_fact_as_it_was_before_a_run_changed_it(built, kg):
    (before, before_time), = built.warehouse.snapshots().select("snapshot_id", "snapshot_time").tail(1).rows()
    assert built.warehouse.run_user_query(HQ)["headquarters"].to_list() == ["Toronto"]
    report = built.inbox / "reports" / "lumen_qdl_pilot.md"
    report.write_text(report.read_text().replace("is based in Toronto", "is based in Montreal"))
    assert built.run_all().success

    assert built.warehouse.run_user_query(HQ)["headquarters"].to_list() == ["Montreal"]
    assert built.warehouse.run_user_query(HQ, snapshot=before)["headquarters"].to_list() == ["Toronto"]
    assert built.warehouse.snapshots()["snapshot_id"].max() > before
    code, out, err = kg("sql", HQ, "--snapshot", str(before))
    assert code == 0 and "Toronto" in out and "Montreal" not in out, err
    code, out, err = kg("sql", HQ, "--as-of", before_time.isoformat())
    assert code == 0 and "Toronto" in out and "Montreal" not in out, err
    code, out, _ = kg("sql", HQ)
    assert code == 0 and "Montreal" in out and "Toronto" not in out
    # The document itself, as it read then and reads now.
    text = "SELECT text FROM kg.documents WHERE document_id = 'reports/lumen_qdl_pilot.md' AND valid_until IS NULL"
    assert "based in Toronto" in built.warehouse.run_user_query(text, snapshot=before)["text"][0]
    assert "based in Montreal" in built.warehouse.run_user_query(text)["text"][0]
    code, out, _ = kg("sql", "--snapshots")
    assert code == 0 and "snapshot_id" in out and "tables_inserted_into" in out


@on_the_lake
def test_a_time_travel_session_is_sandboxed_and_unknown_snapshots_are_clear_errors(built, kg, tmp_path):
    latest = str(built.warehouse.snapshots()["snapshot_id"].max())
    (secret := tmp_path / "secret.csv").write_text("x\n1\n")
    code, _, err = kg("sql", f"SELECT * FROM read_csv('{secret}')", "--snapshot", latest)
    assert code == 1 and ("disabled by configuration" in err or "Permission" in err), err
    code, _, err = kg("sql", "DELETE FROM kg.entities", "--snapshot", latest)
    assert code == 1 and "read-only" in err
    assert kg("sql", "SELECT count(*) AS n FROM kg.entities", "--snapshot", latest)[0] == 0
    code, _, err = kg("sql", "SELECT 1", "--snapshot", "999999")
    assert code == 1 and "the lake has no snapshot 999999 (`kg sql --snapshots` lists them)" in err
    code, _, err = kg("sql", "SELECT 1", "--as-of", "2001-01-01")
    assert code == 1 and "no snapshot 2001-01-01 00:00:00+00:00" in err
    # The macro works in a sandboxed session too (DuckLake stores no functions; each session creates it).
    code, out, err = kg("sql", "SELECT count(*) AS n FROM kg.entity_attributes_at(TIMESTAMPTZ '2025-03-01')")
    assert code == 0 and "│ n" in out, err


@pytest.mark.parametrize("option", [["--snapshot", "1"], ["--as-of", "2026-01-01T00:00:00"], ["--snapshots"]])
def test_time_travel_on_the_embedded_file_fails_saying_it_needs_the_lake(warehouse, capsys, option):
    warehouse.create_schema()
    query = [] if option == ["--snapshots"] else ["SELECT 1"]
    assert main(["sql", *query, *option, "--db", warehouse.path]) == 2
    assert "keeps no snapshots: time travel needs the DuckLake backend (KG_WAREHOUSE_BACKEND=ducklake)" in \
        capsys.readouterr().err


@pytest.mark.parametrize("argv", [["sql", "SELECT 1", "--snapshot", "-1"], ["sql", "SELECT 1", "--snapshot", "1; DROP"],
                                  ["sql", "SELECT 1", "--as-of", "yesterday'); ATTACH"],
                                  ["sql", "SELECT 1", "--snapshot", "1", "--as-of", "2026-01-01"], ["sql"]])
def test_snapshot_options_are_typed_before_they_reach_sql(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        code = main(argv)
        raise SystemExit(code)
    assert exit_.value.code == 2
    assert capsys.readouterr().err


@on_the_lake
def test_kg_search_and_show_read_the_lake(built, kg):
    code, out, err = kg("search", "entity:Sarah", "Chen")
    assert code == 0 and out.splitlines()[1].startswith("  1.00  Sarah Chen  [PERSON]  entity_"), err
    code, out, err = kg("show", "Marcus Webb")
    assert code == 0 and out.startswith("Marcus Webb  [PERSON]  entity_"), err
    assert "  employer = Northwind Robotics  2024-11-05 .. 2025-06-18  from " in out


@on_the_lake
@pytest.mark.parametrize("snapshot", ["3", "3); ATTACH 'x", 3.0, True, -1, datetime(2026, 1, 1)])
def test_the_storage_layer_renders_only_a_typed_snapshot_into_the_attach(warehouse, snapshot):
    warehouse.create_schema()
    with pytest.raises(TypeError, match="a snapshot is a non-negative int or a timezone-aware datetime"):
        warehouse.run_user_query("SELECT 1", snapshot=snapshot)
    with pytest.raises(ValueError, match="read-only"), warehouse.connect(snapshot=0):
        pass

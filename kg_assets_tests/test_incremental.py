"""Exact incremental behaviour: the consolidated tables depend only on the documents present now."""

import dataclasses
import random
import shutil

import dagster as dg
import polars as pl
import pytest

from kg_assets.cli import main
from kg_assets.definitions import build_definitions
from kg_assets.settings import GraphSettings
from kg_assets.storage.consolidation import clear_digests
from kg_assets_tests.conftest import both_backends, project_settings

CURRENT = {
    "entities": "SELECT * EXCLUDE (valid_from, valid_until) FROM kg.entities WHERE valid_until IS NULL",
    "graph_nodes": "SELECT * EXCLUDE (valid_from, valid_until) FROM kg.graph_nodes WHERE valid_until IS NULL",
    "graph_edges": "SELECT * EXCLUDE (valid_from, valid_until) FROM kg.graph_edges WHERE valid_until IS NULL",
    "entity_aliases": "SELECT * EXCLUDE (created_at) FROM kg.entity_aliases",
    "entity_attributes": "SELECT * FROM kg.entity_attributes",  # valid_from/until are document time here
    "attribute_supersessions": "SELECT * FROM kg.attribute_supersessions",
}


def _snapshot(project) -> dict[str, pl.DataFrame]:
    return {table: project.sql(sql + " ORDER BY ALL") for table, sql in CURRENT.items()}


def test_building_incrementally_in_any_order_equals_building_from_scratch(built, tmp_path):
    project = built  # the sample corpus built from scratch
    scratch = _snapshot(project)
    assert all(frame.height for name, frame in scratch.items() if name != "attribute_supersessions")

    # The same corpus again, arriving in three shuffled batches, with a document that comes and goes
    # and a document that is edited and then restored.
    full = tmp_path / "full"
    shutil.copytree(project.inbox, full)
    shutil.rmtree(project.inbox)
    project.inbox.mkdir()
    with project.warehouse.transaction() as con:
        for table in ("documents", "chunks", "entity_mentions", "local_relations", "chunk_extractions",
                      "attribute_observations", "entities", "entity_aliases", "graph_nodes", "graph_edges",
                      "entity_attributes", "attribute_supersessions"):
            con.execute(f"DELETE FROM kg.{table}")

    files = sorted(p.relative_to(full) for p in full.rglob("*") if p.is_file())
    random.Random(7).shuffle(files)
    batches = [files[:6], files[6:12], files[12:]]
    transient = project.inbox / "notes" / "transient.md"
    edited = files[0]

    def add(batch):
        for rel in batch:
            (project.inbox / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(full / rel, project.inbox / rel)

    def sync_and_run():
        assert project.run_plan(project.plan()).success

    add(batches[0])
    transient.parent.mkdir(parents=True, exist_ok=True)
    transient.write_text("# Transient\n\nIgnatius Plumtree, a senior engineer at Zebrafish Institute, joined Lumen Analytics.\n")
    sync_and_run()
    (project.inbox / edited).write_text((full / edited).read_text(errors="ignore") + "\nPenelope Quarry joined Northwind Robotics.\n")
    add(batches[1])
    sync_and_run()
    transient.unlink()
    shutil.copy(full / edited, project.inbox / edited)
    add(batches[2])
    sync_and_run()

    incremental = _snapshot(project)
    for table, frame in scratch.items():
        assert incremental[table].equals(frame), table
    names = project.sql("SELECT name FROM kg.entities WHERE valid_until IS NULL")["name"].to_list()
    assert "Ignatius Plumtree" not in names and "Penelope Quarry" not in names
    closed = project.sql("SELECT count(*) AS n FROM kg.entities WHERE valid_until IS NOT NULL AND name = 'Ignatius Plumtree'")
    assert closed["n"][0] == 1, "an entity that lost its support is closed and kept as history"


def test_a_merge_can_be_undone_and_redone(built, capsys):
    project = built
    db = str(project.warehouse.path)
    alias = project.sql("""SELECT a.from_id, a.to_id FROM kg.entity_aliases a
                           WHERE a.method = 'person_short_form' ORDER BY a.from_id LIMIT 1""").row(0, named=True)
    consolidate = lambda: project.consolidate().success  # noqa: E731
    assert main(["link", "split", alias["from_id"], "entity_unknown", "--db", db]) == 2
    assert main(["link", "split", alias["from_id"], alias["to_id"], "--note", "different people", "--db", db]) == 0
    assert consolidate()
    current = set(project.sql("SELECT entity_id FROM kg.entities WHERE valid_until IS NULL")["entity_id"])
    assert {alias["from_id"], alias["to_id"]} <= current
    assert project.sql("SELECT count(*) AS n FROM kg.entity_aliases WHERE from_id = $f", f=alias["from_id"])["n"][0] == 0
    assert main(["link", "list", "--db", db]) == 0 and "different people" in capsys.readouterr().out
    assert main(["link", "remove", alias["from_id"], alias["to_id"], "--db", db]) == 0
    assert consolidate()
    assert project.sql("SELECT to_id FROM kg.entity_aliases WHERE from_id = $f", f=alias["from_id"])["to_id"].to_list() == [alias["to_id"]]
    closed = project.sql("SELECT valid_until FROM kg.entities WHERE entity_id = $f ORDER BY valid_from DESC LIMIT 1", f=alias["from_id"])
    assert closed["valid_until"][0] is not None
    # and a forced merge through the command line
    a, b = project.sql("""SELECT entity_id FROM kg.entities WHERE valid_until IS NULL AND entity_type = 'LOCATION'
                          ORDER BY mention_count DESC, entity_id LIMIT 2""")["entity_id"].to_list()
    assert main(["link", "merge", a, b, "--db", db]) == 0
    assert consolidate()
    row = project.sql("SELECT to_id, method FROM kg.entity_aliases WHERE from_id = $a", a=a).row(0, named=True)
    assert row == {"to_id": b, "method": "override"}


# The consolidated tables a consolidation rebuilds key by key (storage/consolidation.py), as compared rows.
REBUILT = ("entities", "graph_nodes", "graph_edges", "entity_attributes", "attribute_supersessions")
# the attribute history is rebuilt per entity whole: every row of it, its valid_from/until being document time
HISTORY = ("entity_attributes", "attribute_supersessions")


def _current_rows(project) -> dict[str, pl.DataFrame]:
    return {table: project.sql(f"SELECT * FROM kg.{table}" if table in HISTORY else
                               f"SELECT * EXCLUDE (valid_from, valid_until) FROM kg.{table} WHERE valid_until IS NULL")
            for table in REBUILT}


def _except_all(left: pl.DataFrame, right: pl.DataFrame) -> tuple[int, int]:
    """Rows of each side that the other lacks, counted with multiplicity (EXCEPT ALL both ways)."""
    import duckdb

    con = duckdb.connect()
    con.register("l", left.to_arrow())
    con.register("r", right.to_arrow())
    return tuple(con.execute(f"SELECT count(*) FROM (SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b})").fetchone()[0]
                 for a, b in (("l", "r"), ("r", "l")))


def _random_edit(rng: random.Random, project, step: str) -> str:
    """One edit a user could make between two runs: a document deleted, edited, added or restored, or a linking
    decision taken; names are drawn from the current graph so the edit touches existing entities and edges."""
    inbox = project.inbox
    texts = sorted(p for p in inbox.rglob("*") if p.suffix in {".md", ".txt"})
    names = project.sql("SELECT name, entity_type FROM kg.entities WHERE valid_until IS NULL AND mention_count > 1 "
                        "ORDER BY entity_id")
    people = names.filter(pl.col("entity_type") == "PERSON")["name"].to_list()
    others = names.filter(pl.col("entity_type") != "PERSON")["name"].to_list()
    sentence = lambda: (f"{rng.choice(people)} met {rng.choice(people)} at {rng.choice(others)}. "  # noqa: E731
                        f"{rng.choice(people)} joined {rng.choice(others)} in step {step}.\n")
    kind = rng.choice(["delete", "edit", "add", "merge", "split"])
    if kind == "delete":
        victim = rng.choice(texts)
        victim.unlink()
        return f"delete {victim.name}"
    if kind == "edit":
        target = rng.choice(texts)
        target.write_text(target.read_text() + "\n" + sentence())
        return f"edit {target.name}"
    if kind == "add":
        (inbox / "notes" / f"added_{step}.md").write_text(f"# Added {step}\n\n" + sentence() + sentence())
        return f"add added_{step}.md"
    ids = project.sql("SELECT entity_id FROM kg.entities WHERE valid_until IS NULL ORDER BY entity_id")["entity_id"]
    if kind == "merge":
        a, b = rng.sample(ids.to_list(), 2)
        project.warehouse.set_link_override(a, b, "merge")
        return f"merge {a} {b}"
    aliases = project.sql("SELECT from_id, to_id FROM kg.entity_aliases ORDER BY from_id")
    a, b = aliases.row(rng.randrange(aliases.height))
    project.warehouse.set_link_override(a, b, "split")
    return f"split {a} {b}"


@pytest.mark.slow
@both_backends
def test_after_random_edits_the_incremental_graph_equals_a_rebuild_from_scratch_row_for_row(built, backend):
    """After each run over random edits, the entities, nodes and edges the consolidation kept or rebuilt are,
    row for row (EXCEPT ALL both ways), those a rebuild from scratch of the same inputs gives. The runs rebuild
    their keys in batches of 60 input rows (a dozen batches), the rebuild in one: batches change nothing."""
    small_batches = project_settings(built.inbox, built.warehouse, graph=GraphSettings(consolidation_batch_rows=60))
    project, rng = dataclasses.replace(built, defs=build_definitions(small_batches)), random.Random(11)
    one_batch = _current_rows(built)
    clear_digests(project.warehouse)
    assert project.consolidate().success  # every key again, a dozen batches each written after the one before
    for table, rows in _current_rows(project).items():
        assert _except_all(rows, one_batch[table]) == (0, 0), table
    # Eight random edits on each backend, from the built graph and the digests its consolidation stored; the lake
    # takes them in fewer, larger runs (its commits go through PostgreSQL, and the rules are the same code).
    runs, edits_per_run = (4, 2) if backend == "duckdb" else (2, 4)
    for step in range(runs):
        edits = [_random_edit(rng, project, f"{step}-{i}") for i in range(edits_per_run)]
        assert project.run_plan(project.plan()).success, edits
        incremental = _current_rows(project)
        clear_digests(project.warehouse)  # what `kg run --rebuild-graph` does: every key rebuilt
        assert built.consolidate().success, edits
        rebuilt = _current_rows(project)
        for table in REBUILT:
            assert rebuilt[table].height > 0
            assert _except_all(incremental[table], rebuilt[table]) == (0, 0), (table, edits)


def test_a_run_after_one_edited_document_rebuilds_only_the_keys_it_touches_and_says_how_many(built):
    project = built
    note = project.inbox / "notes" / "sao_paulo_visit.txt"
    note.write_text(note.read_text() + "\nIgnatius Plumtree met Sarah Chen in Lisbon.\n")
    assert project.run_plan(project.plan()).success

    def metadata(asset: str) -> dict:
        event = project.instance.get_latest_materialization_event(dg.AssetKey(asset))
        return {k: v.value for k, v in event.asset_materialization.metadata.items()}

    for asset in ("linked_entities", "graph_edges", "graph_nodes"):
        shown = metadata(asset)
        assert 0 < shown["rebuilt_keys"] < shown["dagster/row_count"] / 4, (asset, shown)
    with_history = project.sql("SELECT count(DISTINCT entity_id) AS n FROM kg.entity_attributes")["n"][0]
    assert metadata("entity_attributes")["rebuilt_keys"] < with_history / 4  # entities whose history is made again
    rebuilt = project.sql("SELECT count(*) AS n FROM kg.entities WHERE valid_until IS NULL AND name = 'Ignatius Plumtree'")
    assert rebuilt["n"][0] == 1


def test_kg_run_rebuild_graph_rebuilds_every_key_even_when_no_document_changed(tmp_path, kg_cli):
    inbox, home, db = tmp_path / "inbox", tmp_path / "home", tmp_path / "warehouse.duckdb"
    inbox.mkdir()
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    (inbox / "lab.md").write_text("# Lab\n\nSarah Chen leads the Quantum Dynamics Lab in Boston with Marcus Webb.\n")
    common = ("--inbox", inbox, "--db", db, "--dagster-home", home, "--no-marts", "--log-level", "WARNING")
    assert kg_cli("run", *common).returncode == 0
    idle = kg_cli("run", *common)  # the marts were never built, and --no-marts does not ask for them
    assert "every document is up to date and the graph too; nothing to run" in idle.stdout, idle.stdout[-2000:]
    again = kg_cli("run", *common, "--rebuild-graph")
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert "every document is up to date; consolidating only" in again.stdout
    with dg.DagsterInstance.from_config(str(home)) as instance:
        for asset in ("linked_entities", "graph_edges", "graph_nodes"):
            shown = instance.get_latest_materialization_event(dg.AssetKey(asset)).asset_materialization.metadata
            assert shown["rebuilt_keys"].value == shown["dagster/row_count"].value > 0, asset


def test_rows_added_or_deleted_by_hand_put_the_digests_out_of_step_and_the_next_consolidation_rebuilds_all(built):
    project = built
    before = _current_rows(project)
    with project.warehouse.transaction() as con:
        con.execute("""INSERT INTO kg.entities (entity_id, name, entity_type, valid_from)
                       VALUES ('entity_by_hand', 'Nobody', 'PERSON', now())""")
        con.execute("DELETE FROM kg.graph_edges WHERE edge_id = (SELECT min(edge_id) FROM kg.graph_edges)")
    assert project.consolidate().success
    after = _current_rows(project)
    for table in REBUILT:
        assert _except_all(before[table], after[table]) == (0, 0), table
    closed = project.sql("SELECT valid_until FROM kg.entities WHERE entity_id = 'entity_by_hand'")["valid_until"]
    assert closed.to_list() != [None], "a row no mention makes is closed"
